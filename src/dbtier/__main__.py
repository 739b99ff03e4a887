from dbtier.cli.main import main

raise SystemExit(main())
