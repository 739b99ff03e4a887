"""Names and help texts of the simulator, without numpy or numba: the CLI imports this at start-up.

Every `dbtier` command builds the whole argument parser, so what `simulate` needs for its options
must load in microseconds; the kernels (numba) are imported only when a simulation runs.
"""

from __future__ import annotations

from dataclasses import dataclass

DESIGNS = ("single", "read-cache", "preferred-read-mirror")
ROLES = {"single": ("device",), "read-cache": ("cache", "backing"), "preferred-read-mirror": ("fast", "slow")}
POLICIES = ("lru", "s3fifo", "fifo", "s3fifo-2023", "sieve", "twoq")
WRITE_MODES = ("write-around", "write-through", "write-back")
SIDES = ("fast", "slow")
TRACKINGS = ("asm-au", "md-bitmap")      # the mirror's change tracking (sim/mirror.py TRACKING)


@dataclass(frozen=True)
class TraceFormat:
    name: str
    layout: str
    units: str
    example: str


FORMATS: dict[str, TraceFormat] = {f.name: f for f in (
    TraceFormat("msr", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
                "MSR Cambridge / SNIA IOTTA: Windows filetime (100 ns), Type Read|Write, bytes",
                "128166372003061629,hm,1,Read,3154152960,32768,1225"),
    TraceFormat("cloudphysics", "version,time,op,size,lbn",
                "CloudPhysics (libCacheSim data/): time in s, op 28 read / 2a write, size bytes, lbn 512-byte sectors",
                "1,5633898,2a,512,42932745"),
    TraceFormat("alibaba", "device_id,opcode,offset,length,timestamp",
                "Alibaba block traces: opcode R|W, bytes, timestamp in microseconds",
                "419,W,8792731648,4096,1577808144007256"),
    TraceFormat("tencent", "Timestamp,Offset,Size,IOType,VolumeID",
                "Tencent CBS: Unix seconds, offset and size in 512-byte sectors, IOType 0 read / 1 write",
                "1538323200,1367248,8,1,1063"),
    TraceFormat("blkparse", "dev cpu seq time pid action rwbs sector + nsectors [process]",
                "blkparse default text output: seconds, 512-byte sectors; Q events (else D, else C)",
                "  8,0    1       12     0.000431202  4162  Q  WS 1286144 + 8 [jbd2/sda1-8]"),
    TraceFormat("fio", "fio version 2|3 iolog, then [timestamp] file action offset length",
                "fio write_iolog: v3 timestamps in microseconds; v2 timed by `wait` lines or untimed; bytes",
                "1653 /data/file read 6209536 8192"),
    TraceFormat("csv", "any delimited text, mapped with --columns",
                "--columns time=1,op=4,offset=5,length=6[,volume=2][,time_unit=s|ms|us|ns|filetime]"
                "[,offset_unit=bytes|sectors|N][,length_unit=...][,read=R|r][,write=W|w]"
                "[,delimiter=comma|tab|space|semicolon|pipe][,header=auto|yes|no]",
                "time=Timestamp,op=Type,offset=Offset,length=Size,time_unit=us"),
)}

CLOUD_PREFIX = "cloud:"
CLOUD_GRAMMAR = "cloud:PROVIDER:TYPE:size=GIB[,iops=N][,mibps=X|mbps=X][,count=N][,instance=NAME][,latency_us=US]"
CLOUD_EXAMPLE = "cloud:aws:gp3:size=1000,iops=6000,mibps=250"
DEVICE_IDS_HELP = (
    "A device ID is a catalog id (`dbtier catalog list`), a probe run directory (RUN_DIR, RUN_DIR#N for its "
    f"N-th target), or a cloud volume: {CLOUD_GRAMMAR}, e.g. {CLOUD_EXAMPLE}. A cloud volume is its "
    "provider's rate limit (reads and writes share one IOPS and one MB/s limit; an I/O larger than the type's "
    "accounting size, 256 KiB for SSD types, counts as several) in front of a base latency (the type's "
    "typical figure, or latency_us=). size in GiB; a size-scaled or tiered type (gp2, st1, sc1, pd-ssd, "
    "Premium SSD) takes its IOPS and throughput from the size; a provisioned one (gp3, io1, io2, Premium SSD "
    "v2, Ultra, Hyperdisk) takes iops= and mibps= (2^20 B/s) or mbps= (10^6 B/s) within its rules, by default "
    "its free baseline; count=N stripes N volumes (N times the limits); instance=NAME applies the instance's "
    "sustained caps too (the lower binds).")

COLUMNS_HELP = ("map another CSV: --columns time=COL,op=COL,offset=COL,length=COL[,volume=COL] where COL is a "
                "1-based column number or a header name, plus optional time_unit=s|ms|us|ns|filetime, "
                "offset_unit=bytes|sectors|N, length_unit=bytes|sectors|N, read=TOKEN|TOKEN, write=TOKEN|TOKEN, "
                "delimiter=comma|tab|space|semicolon|pipe, header=auto|yes|no")

OBJECT_COLUMNS_HELP = ("map an object CSV: --columns id=COL[,size=COL][,time=COL][,op=COL] where COL is a 1-based "
                       "column number or a header name (size in bytes, default 1 a request; every request counts, "
                       "op's values are only counted), plus optional time_unit=s|ms|us|ns|filetime, "
                       "delimiter=comma|tab|space|semicolon|pipe, header=auto|yes|no")


def known_formats_text() -> str:
    return "; ".join(f"{f.name} ({f.layout})" for f in FORMATS.values() if f.name != "csv")


