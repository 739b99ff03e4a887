"""Re-make the saved sysbench outputs (see README.md here): python capture.py SOCKET USER DB.

Runs prepare, each workload at 1 and 4 threads closed loop and open loop (--rate), and cleanup,
with the command lines dbtier's own builder makes; writes <workload>-t<threads>[-r<rate>].txt."""

import subprocess
import sys
from pathlib import Path

from dbtier.workloads.parsers.sysbench import MysqlTarget, layout, sysbench_args

HERE = Path(__file__).parent
RATES = {"sysbench-rw": 150, "sysbench-ro": 150, "sysbench-wo": 300, "sysbench-point": 2000}


def main(socket: str, user: str, db: str, seconds: int = 3) -> None:
    target = MysqlTarget(user=user, db=db, socket=socket)
    tables, size = layout(1)

    def run(argv: list[str], name: str) -> None:
        done = subprocess.run(argv, capture_output=True, text=True)
        text = done.stdout + ("\n--- stderr ---\n" + done.stderr if done.stderr else "")
        (HERE / name).write_text(text.replace(socket, "/run/dbtier/mysqld.sock"))
        print(name, done.returncode)

    run(sysbench_args("sysbench-rw", "prepare", target, tables=tables, table_size=size, threads=2), "prepare.txt")
    for wl, rate in RATES.items():
        for threads in (1, 4):
            for r in (None, rate):
                name = f"{wl}-t{threads}" + (f"-r{r}" if r else "") + ".txt"
                run(sysbench_args(wl, "run", target, tables=tables, table_size=size, threads=threads,
                                  seconds=seconds, rate=r, percentile=99 if r else 95), name)
    run(sysbench_args("sysbench-rw", "cleanup", target, tables=tables, table_size=size), "cleanup.txt")


if __name__ == "__main__":
    main(*sys.argv[1:4])
