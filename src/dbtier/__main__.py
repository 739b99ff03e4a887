from dbtier.cli.entry import main

raise SystemExit(main())
