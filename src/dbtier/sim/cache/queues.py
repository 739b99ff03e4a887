"""The block cache's SIEVE and 2Q (kernels.py's docstring: the policies, write modes, restarts, the
sequential cutoff and the counters): one kernel for both, on sim/policy's rules (`sieve_hit`,
`sieve_admit`, `twoq_hit`, `twoq_unghost`, `twoq_admit`, `twoq_caps`), each block an object of the block size.

Rows (slots.Rows, 16 bytes a block): prev, next, then
- SIEVE: state (0 out, 1 clean, 2 dirty), visited (0/1); one FIFO list, head newest, and one hand (-1 at
  the start and after a restart). A write-around invalidation of the block under the hand moves the hand to
  its newer neighbour first, as libCacheSim's Sieve_remove_obj does.
- 2Q: where (`& 3`: 0 out, 1 Ain, 2 Am, 3 Aout, the ghost; bit 2 (4): dirty), unused. Aout's rows stay live
  (a recycling sweep keeps them) until Aout trims them or a request finds them; Aout holds at most its share
  (50% of the cache's bytes) of blocks: `cache.most_held`.
In both, column 2 says whether the row is held (slots' `live`), and a row that leaves is exactly a new one.

A write-through or write-back write is served as a read would be (a hit: sieve_hit / twoq_hit; a miss:
admitted); ghost_hits counts the misses found in Aout that were admitted (2Q; 0 for SIEVE).
"""

from __future__ import annotations

from dbtier.sim.cache.kernels import (C_BYPASSED_REQS, C_EVICTED, C_GHOST_HITS, C_INVALIDATED,
                                      C_RESTART_DESTAGED, RING, empty_lists, prefetch_ahead,
                                      request_done)
from dbtier.sim.cache.slots import S_TSHIFT, row_if_kept, row_of
from dbtier.sim.jit import hot
from dbtier.sim.policy.lists import unlink as _unlink
from dbtier.sim.policy.sieve import sieve_admit, sieve_hit
from dbtier.sim.policy.twoq import twoq_admit, twoq_caps, twoq_hit, twoq_unghost

_NO_RESTART = 1 << 62
SIEVE_STATE = 5    # st: head (newest), tail, blocks held, hand, next restart
TWOQ_STATE = 10    # st: Ain head, tail, Am head, tail, Aout head, tail, Ain, Am, Aout bytes, next restart


@hot
def queue_kernel(nblk, keys, op, bypass, restart_req, first_request, node, rowkey, table, rst, ring, st, c,
                 capacity, block_bytes, twoq, mode, record, out_hits, out_admit, out_destage, out_first_miss,
                 no_held):
    """SIEVE (twoq=False) or 2Q (twoq=True) over the next requests; the state (node, st) carries from call to
    call and the counters are added to c (see kernels.lru_kernel). 2Q's shares are in bytes, as
    libCacheSim takes them for objects of `block_bytes` each."""
    prev = node[:, 0]
    nxt = node[:, 1]
    live = node[:, 2]                  # SIEVE: state; 2Q: where | dirty << 2
    vis = node[:, 3]                   # SIEVE: visited
    if twoq:
        ht = st[0:6]
        qb = st[6:9]
        r_at = 9
    else:
        ht = st[0:2]
        qb = st[2:3]                   # (unused by SIEVE)
        r_at = 4
    used = st[2]                       # SIEVE: blocks held
    hand = st[3]                       # SIEVE: the hand
    cap_bytes = capacity * block_bytes
    ain_cap, aout_cap, am_cap = twoq_caps(cap_bytes)
    nb = keys.shape[0]
    tshift = rst[S_TSHIFT]
    for q in range(RING):
        ring[q] = -1
    has_bypass = bypass.shape[0] > 0
    nrestart = restart_req.shape[0]
    r = st[r_at]
    next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
    pos = 0
    for i in range(nblk.shape[0]):
        destage = 0
        while i >= next_restart and r < nrestart and restart_req[r] - first_request <= i:
            d = empty_lists(ht, live, vis, 4 if twoq else 2, prev, nxt)      # 2Q: dirty bit 4; SIEVE: state 2
            destage += d
            c[C_RESTART_DESTAGED] += d
            qb[:] = 0
            used = 0
            hand = -1
            r += 1
            next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
        k = nblk[i]
        byp = has_bypass and bypass[i]
        if byp:
            c[C_BYPASSED_REQS] += 1
        hits = 0
        admit = 0
        first_miss = -1
        is_read = op[i] == 0
        around = (not is_read) and (mode == 0 or byp)
        takes = not around and capacity > 0 and not (is_read and byp)      # a miss may be admitted
        dirty = (not is_read) and mode == 2
        for j in range(pos, pos + k):
            prefetch_ahead(j, nb, keys, table, rowkey, tshift, live, prev, nxt, ring, True)
            if takes:
                x = row_of(keys[j], table, rowkey, prev, nxt, live, rst)
            else:
                x = row_if_kept(keys[j], table, rowkey, prev, nxt, live, rst)
            w = live[x] if x >= 0 else 0
            if twoq:
                w = w & 3
                held = w == 1 or w == 2
            else:
                held = w != 0
            if held:
                hits += 1
                if around:
                    if twoq:
                        _unlink(x, prev, nxt, ht, 2 * w - 2)
                        qb[w - 1] -= block_bytes
                    else:
                        if hand == x:
                            hand = prev[x]
                        _unlink(x, prev, nxt, ht, 0)
                        used -= 1
                        vis[x] = 0
                    live[x] = 0
                    c[C_INVALIDATED] += 1
                elif twoq:
                    twoq_hit(x, live, prev, nxt, ht)
                    if dirty:
                        live[x] |= 4
                else:
                    sieve_hit(x, vis)
                    if dirty:
                        live[x] = 2
                continue
            if first_miss < 0:
                first_miss = j - pos
            if takes:
                if twoq:
                    ghost_hit = w == 3
                    if ghost_hit:
                        twoq_unghost(x, live, prev, nxt, ht, qb, no_held, block_bytes)
                    ok, d, e = twoq_admit(x, block_bytes, ghost_hit, dirty, live, prev, nxt, ht, qb, no_held,
                                          block_bytes, cap_bytes, ain_cap, aout_cap, am_cap)
                    if ok:
                        c[C_GHOST_HITS] += ghost_hit
                else:
                    ok, d, e, used, hand = sieve_admit(x, 1, dirty, live, vis, prev, nxt, ht, hand, used, no_held,
                                                       1, capacity)
                destage += d
                c[C_EVICTED] += e
                admit += ok
        request_done(i, is_read, k, hits, admit, destage, first_miss, c, record, out_hits, out_admit, out_destage,
                     out_first_miss)
        pos += k
    if not twoq:
        st[2] = used
        st[3] = hand
    st[r_at] = r
