"""An open-loop replayer of timed reads on a block device through Linux AIO (io_submit), for
bench/cloud_volume_vs_blkio.py: fio 3.33 has no open-loop mode an async engine keeps (see that script).

    python bench/_aio_replay.py PLAN.npz OUT.npz

PLAN.npz holds `device` (a path), `t_s` (planned times from the start, seconds), `offset` (bytes) and
`nbytes` (one size for all); OUT.npz gets `submit_s` (when each read was submitted, from the same start)
and `latency_s` (submission to completion). Reads are submitted one by one at their planned times whatever
is in flight (up to `depth`, the AIO context's size), and completions are reaped by polling while it waits,
so a read's completion time is taken within the poll loop's period (microseconds). O_DIRECT reads into one
shared, page-aligned buffer (the data is not looked at). Linux x86_64 only (the syscall numbers).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
import time

import numpy as np

SYS_IO_SETUP, SYS_IO_DESTROY, SYS_IO_GETEVENTS, SYS_IO_SUBMIT = 206, 207, 208, 209
IOCB_CMD_PREAD = 0
BATCH = 1024


class Iocb(ctypes.Structure):           # struct iocb (linux/aio_abi.h), little-endian field order
    _fields_ = [("aio_data", ctypes.c_uint64), ("aio_key", ctypes.c_uint32), ("aio_rw_flags", ctypes.c_int32),
                ("aio_lio_opcode", ctypes.c_uint16), ("aio_reqprio", ctypes.c_int16),
                ("aio_fildes", ctypes.c_uint32), ("aio_buf", ctypes.c_uint64), ("aio_nbytes", ctypes.c_uint64),
                ("aio_offset", ctypes.c_int64), ("aio_reserved2", ctypes.c_uint64), ("aio_flags", ctypes.c_uint32),
                ("aio_resfd", ctypes.c_uint32)]


class IoEvent(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("obj", ctypes.c_uint64), ("res", ctypes.c_int64),
                ("res2", ctypes.c_int64)]


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def replay(device: str, t_s: np.ndarray, offset: np.ndarray, nbytes: int, depth: int = 32768
           ) -> tuple[np.ndarray, np.ndarray]:
    """(submit_s, latency_s) of reads of `nbytes` at `offset`, submitted at times t_s (see the docstring)."""
    if os.uname().machine != "x86_64":
        raise OSError("the AIO replayer knows x86_64's syscall numbers only")
    sc = ctypes.CDLL(None, use_errno=True).syscall
    sc.restype = ctypes.c_long
    ctx = ctypes.c_ulong(0)
    if sc(SYS_IO_SETUP, ctypes.c_uint(depth), ctypes.byref(ctx)) < 0:
        raise OSError(ctypes.get_errno(), "io_setup")
    fd = os.open(device, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, max(nbytes, mmap.PAGESIZE))
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    n = int(t_s.size)
    iocbs = (Iocb * n)()
    one = (ctypes.POINTER(Iocb) * 1)()
    events = (IoEvent * BATCH)()
    zero = Timespec(0, 0)
    submit, done = np.zeros(n), np.zeros(n)
    reaped = 0

    def reap(min_nr: int, timeout) -> None:
        nonlocal reaped
        r = sc(SYS_IO_GETEVENTS, ctx, ctypes.c_long(min_nr), ctypes.c_long(BATCH), events, timeout)
        if r < 0:
            raise OSError(ctypes.get_errno(), "io_getevents")
        now = time.perf_counter()
        for e in events[:r]:
            if e.res != nbytes:
                raise OSError(f"read #{e.data} returned {e.res}")
            done[e.data] = now
        reaped += r

    try:
        t0 = time.perf_counter() + 0.05
        for i in range(n):
            cb = iocbs[i]
            cb.aio_data, cb.aio_lio_opcode, cb.aio_fildes = i, IOCB_CMD_PREAD, fd
            cb.aio_buf, cb.aio_nbytes, cb.aio_offset = addr, nbytes, int(offset[i])
            due = t0 + float(t_s[i])
            while time.perf_counter() < due:        # wait for the read's time, reaping what completes
                reap(0, ctypes.byref(zero))
            one[0] = ctypes.pointer(cb)
            submit[i] = time.perf_counter()
            if sc(SYS_IO_SUBMIT, ctx, ctypes.c_long(1), one) != 1:
                raise OSError(ctypes.get_errno(), "io_submit")
        while reaped < n:
            reap(1, None)
    finally:
        sc(SYS_IO_DESTROY, ctx)
        os.close(fd)
    return submit - t0, done - submit


if __name__ == "__main__":
    plan = np.load(sys.argv[1])
    sub, lat = replay(str(plan["device"]), plan["t_s"], plan["offset"], int(plan["nbytes"]))
    np.savez(sys.argv[2], submit_s=sub, latency_s=lat)
