"""The queueing model (dbtier.sim.device.latency) against queueing theory's closed forms.

Every expected value here is computed independently of the code under test: Pollaczek-Khinchine and
Crommelin for M/D/1, the exponential response time of M/M/1, Erlang C for M/M/c, and, for the
load-dependent disk, the embedded Markov chain of the number in system at departures (solved here with
numpy; by PASTA the chain's stationary law is also what arrivals see and the time average).

Tolerances. The streams are seeded, so each test is deterministic; the tolerances say how far a correct
model may land from the closed form for an arbitrary seed. Successive response times in a queue are
correlated, so the standard error of a mean (or of a fraction below a threshold) is estimated by batch
means: the run is cut into 40 batches, each thousands of service times long (far longer than the
queue's relaxation time, so the batch means are close to independent), and the standard error is the
batches' standard deviation / sqrt(40). A check passes within 4.5 standard errors (a correct model fails
it for about one seed in 100,000 when the batch means are normal; with 40 batches the t-distribution
makes that about one in 5,000); each test also asserts the standard error is small, so the check cannot
pass by being loose.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dbtier.sim.device import latency
from dbtier.sim import simulate as sim
from dbtier.sim.device.latency import DeviceModel, SubIOs
from dbtier.sim.trace.traces import from_arrays

BATCHES = 40
Z = 4.5


def poisson_arrivals(rate: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(1.0 / rate, n))
    return t - t[0]


def batch_se(x: np.ndarray) -> tuple[float, float]:
    """(mean, standard error by batch means)."""
    m = x[: x.size // BATCHES * BATCHES].reshape(BATCHES, -1).mean(axis=1)
    return float(x.mean()), float(m.std(ddof=1) / math.sqrt(BATCHES))


def close(sample: np.ndarray, expected: float, max_rel_se: float) -> None:
    mean, se = batch_se(sample)
    assert se < max_rel_se * expected, f"standard error {se:g} too large to judge {expected:g}"
    assert abs(mean - expected) < Z * se, f"mean {mean:g} vs closed form {expected:g} (se {se:g})"


def random_reads(t: np.ndarray, seed: int = 0):
    """4 KiB reads at times t, scattered over 20 TB (never sequential)."""
    rng = np.random.default_rng(seed)
    off = rng.integers(0, 20 * 10**12 // 4096, t.size) * 4096
    return from_arrays(t, np.zeros(t.size, dtype=np.uint8), off, np.full(t.size, 4096))


def md1_wait_cdf(t: float, lam: float, d: float) -> float:
    """Crommelin's M/D/1 waiting-time distribution: P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/D)}
    (lam (kD - t))^k / k! e^{-lam (kD - t)}."""
    rho = lam * d
    return (1 - rho) * sum((lam * (k * d - t)) ** k / math.factorial(k) * math.exp(-lam * (k * d - t))
                           for k in range(int(t // d) + 1))


def md1_response_median(lam: float, d: float) -> float:
    lo, hi = 0.0, 10 * d         # response = wait + D; bisect the wait's median (the sum is stable for t <~ 16 D)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if md1_wait_cdf(mid, lam, d) < 0.5 else (lo, mid)
    return lo + d


def disk_chain(lam: float, service, states: int = 600) -> tuple[float, float]:
    """(utilisation, mean response) of one server whose service time is service(n) when it starts with n in
    system, under Poisson(lam): the embedded chain at departures, X' = X - 1 + A(service(X)) (X >= 1),
    X' = A(service(1)) (X = 0), A(t) ~ Poisson(lam t); utilisation 1 - pi_0, mean response L / lam."""
    P = np.zeros((states, states))
    for j in range(states):
        t = service(max(j, 1))
        low = max(j - 1, 0)
        k = np.arange(states - low)
        pmf = np.exp(k * math.log(lam * t) - lam * t - np.array([math.lgamma(i + 1) for i in k]))
        P[j, low:] = pmf
        P[j, -1] += 1 - pmf.sum()
    A = P.T - np.eye(states)
    A[-1, :] = 1.0                             # replace one balance equation by sum(pi) = 1
    b = np.zeros(states)
    b[-1] = 1.0
    pi = np.linalg.solve(A, b)
    return 1 - pi[0], float((np.arange(states) * pi).sum()) / lam


# --- the queue core with explicit service times ---------------------------------------------------------

def test_md1_mean_wait():
    """M/D/1, lam = 700/s, D = 1 ms (rho 0.7): Pollaczek-Khinchine mean wait rho / (2 mu (1 - rho)) =
    0.7 / (2 x 1000 x 0.3) = 1.1667 ms, so the mean response is 2.1667 ms. 400,000 arrivals (571 s,
    batches of 10,000 services)."""
    t = poisson_arrivals(700.0, 400_000, seed=1)
    resp = latency.fifo_units(t, np.full(t.size, 1e-3))
    close(resp - 1e-3, 0.7 / (2 * 1000 * 0.3), max_rel_se=0.03)


def test_mm1_mean_and_distribution():
    """M/M/1, lam = 600/s, mu = 1000/s: the response time is exponential with rate mu - lam = 400/s, mean
    2.5 ms, P(R <= t) = 1 - e^{-400 t}; checked at the mean and at t giving 0.5, 0.9, 0.99."""
    lam, mu, n = 600.0, 1000.0, 400_000
    t = poisson_arrivals(lam, n, seed=2)
    svc = np.random.default_rng(3).exponential(1 / mu, n)
    resp = latency.fifo_units(t, svc)
    close(resp, 1 / (mu - lam), max_rel_se=0.03)
    for p in (0.5, 0.9, 0.99):
        x = -math.log(1 - p) / (mu - lam)
        frac, se = batch_se((resp <= x).astype(np.float64))
        assert se < 0.01 and abs(frac - p) < Z * se, (p, frac, se)


def test_mmc_erlang_c():
    """M/M/4, lam = 3,000/s, mu = 1,000/s per server (a = 3 Erlangs, rho 0.75). Erlang C: P(wait) =
    (a^c/c!)(c/(c-a)) / (sum_{k<c} a^k/k! + (a^c/c!)(c/(c-a))) = 0.5094; mean wait C / (c mu - lam) =
    0.5094 ms; mean response 1.5094 ms."""
    lam, mu, c, n = 3000.0, 1000.0, 4, 400_000
    a = lam / mu
    top = a ** c / math.factorial(c) * c / (c - a)
    erlang_c = top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)
    assert erlang_c == pytest.approx(0.5094, abs=1e-4)
    t = poisson_arrivals(lam, n, seed=4)
    svc = np.random.default_rng(5).exponential(1 / mu, n)
    resp = latency.fifo_units(t, svc, units=c)
    close(resp, erlang_c / (c * mu - lam) + 1 / mu, max_rel_se=0.03)
    waited, se = batch_se((resp > svc + 1e-12).astype(np.float64))
    assert abs(waited - erlang_c) < Z * se


# --- devices --------------------------------------------------------------------------------------------

def test_device_at_its_own_qd1_rate_is_md1():
    """A device whose QD1 latency is 1/IOPS has nothing to overlap or reorder: one unit, service 1 ms,
    as flash-like or as a disk. Poisson 4 KiB reads at 500/s: M/D/1 with rho 0.5, mean response
    D + rho D / (2 (1 - rho)) = 1 + 0.5 = 1.5 ms, utilisation 0.5."""
    t = poisson_arrivals(500.0, 200_000, seed=6)
    tr = random_reads(t)
    for single in (False, True):
        dev = DeviceModel("d", "test", 1000, 1000, 100, 100, 1000, 1000, single_actuator=single)
        assert dev.units == 1
        out = sim.simulate(tr, sim.Params("single", spread_ties=False), {"device": dev})
        subs = SubIOs.empty()
        subs.add(np.arange(t.size), 0, 0, np.full(t.size, 4096.0), offset=tr.offset_bytes, volume=tr.volume)
        resp = latency.serve(subs, [dev], t, True).latency_s
        close(resp, 1.5e-3, max_rel_se=0.03)
        assert out.contract["device_util"]["device"] == pytest.approx(0.5, abs=0.01)


def test_hand_worked_disk_reordering():
    """A disk (one actuator) with S1 = 10 ms and 200 IOPS at depth: 1/IOPS = 5 ms, saveable 5 ms, a random
    I/O started with n outstanding takes s(n) = 5 + 5 x 2/(n+1) ms: s(1) = 10, s(2) = 8.333, s(3) = 7.5.
    Three random reads arrive together at 0, a fourth continues the third at 1 s, a fifth arrives alone.

    req  t     start      n   service          completes   latency
    0    0     0          3   7.5 ms           7.5 ms      7.5 ms
    1    0     7.5 ms     2   8.333 ms         15.833 ms   15.833 ms
    2    0     15.833 ms  1   10 ms            25.833 ms   25.833 ms
    3    1     1.0        -   4096 B / 100 MB/s = 40.96 us (sequential: transfer only)   40.96 us
    4    2     2.0        1   10 ms            2.010       10 ms
    The flash-like model with the same figures (2 units of 10 ms, starts 5 ms apart) would overlap them:
    10, 15, 20 ms.
    """
    disk = DeviceModel("disk", "test", 200, 200, 100, 100, 10_000, 10_000, single_actuator=True)
    subs = SubIOs.empty()
    subs.add([0, 1, 2, 3, 4], 0, 0, np.full(5, 4096.0), offset=np.array([0, 10**9, 5 * 10**9, 5 * 10**9 + 4096,
                                                                         7 * 10**9]), volume=np.zeros(5))
    t = np.array([0, 0, 0, 1.0, 2.0])
    s = latency.serve(subs, [disk], t, True)
    assert s.latency_s * 1e3 == pytest.approx([7.5, 15.8333333, 25.8333333, 0.04096, 10])
    assert s.busy_s[0] * 1e3 == pytest.approx(7.5 + 8.3333333 + 10 + 0.04096 + 10)
    assert disk.service_s(0, 4096, np.array([1, 2, 3])) * 1e3 == pytest.approx([10, 8.3333333, 7.5])
    flash = DeviceModel("flash", "test", 200, 200, 100, 100, 10_000, 10_000)
    assert flash.units == 2
    f = latency.serve(subs, [flash], t, True)
    assert f.latency_s[:3] * 1e3 == pytest.approx([10, 15, 20])


def test_untimed_disk_is_qd1():
    """Closed loop at queue depth 1: every random read starts alone, s(1) = S1 = 12.5 ms."""
    disk = DeviceModel("hdd", "test", 170, 550, 285, 285, 12_500, 12_500, single_actuator=True)
    subs = SubIOs.empty()
    subs.add([0, 1, 2], 0, 0, np.full(3, 4096.0), offset=np.array([0, 10**9, 2 * 10**9]), volume=np.zeros(3))
    s = latency.serve(subs, [disk], np.zeros(3), timed=False)
    assert s.latency_s * 1e3 == pytest.approx([12.5, 12.5, 12.5])


HDD = DeviceModel("hdd-7200-20tb", "test", read_iops=170, write_iops=550, read_mbps=285, write_mbps=285,
                  read_latency_us=12_500, write_latency_us=12_500, single_actuator=True)


@pytest.mark.slow
def test_seventy_iops_on_a_7200_rpm_disk():
    """Issue 13's example: 70 random 4 KiB reads/s (Poisson) on a 7,200 rpm disk, 12.5 ms at QD1, 170 IOPS
    at depth. The old model (a rate server at 170 IOPS plus a 12.5 ms pipeline) said p50 12.5 ms at 41%
    busy.

    Without reordering (170 -> 80 IOPS, S1 = 1/IOPS) the disk is M/D/1 with D = 12.5 ms, rho = 70 x 12.5 ms
    = 0.875: busy 87.5%, mean response D + rho D / (2 (1 - rho)) = 12.5 + 43.75 = 56.25 ms, and by
    Crommelin's distribution a median response of 41.5 ms (3.3 x QD1).

    With command queueing (s(n) = 1/170 + (12.5 ms - 1/170) x 2/(n+1)) the embedded Markov chain gives
    busy 77.87% and mean response 23.31 ms; the median is expected between QD1 and the M/D/1 median, near
    the mean (the simulation gives about 22 ms, 1.75 x QD1). 200,000 arrivals (47.6 minutes).
    """
    t = poisson_arrivals(70.0, 200_000, seed=7)
    tr = random_reads(t)

    no_reorder = DeviceModel("hdd-qd1", "test", 80, 80, 285, 285, 12_500, 12_500, single_actuator=True)
    out = sim.simulate(tr, sim.Params("single", spread_ties=False), {"device": no_reorder})
    assert out.contract["device_util"]["device"] == pytest.approx(0.875, abs=0.01)
    p50_md1 = md1_response_median(70.0, 12.5e-3)
    assert p50_md1 == pytest.approx(41.5e-3, abs=0.1e-3)
    subs = SubIOs.empty()
    subs.add(np.arange(t.size), 0, 0, np.full(t.size, 4096.0), offset=tr.offset_bytes, volume=tr.volume)
    resp = latency.serve(subs, [no_reorder], t, True).latency_s
    close(resp, 56.25e-3, max_rel_se=0.06)
    frac, se = batch_se((resp <= p50_md1).astype(np.float64))
    assert abs(frac - 0.5) < Z * se

    # the disk reorders among at most the 32 commands it holds (latency.DISK_QUEUE)
    util, mean = disk_chain(70.0, lambda n: 1 / 170 + (12.5e-3 - 1 / 170) * 2 / (min(n, 32) + 1))
    assert (util, mean) == (pytest.approx(0.7787, abs=1e-4), pytest.approx(23.31e-3, abs=0.01e-3))
    out = sim.simulate(tr, sim.Params("single", spread_ties=False), {"device": HDD})
    assert out.contract["device_util"]["device"] == pytest.approx(util, abs=0.01)
    resp = latency.serve(subs, [HDD], t, True).latency_s
    close(resp, mean, max_rel_se=0.03)
    p50 = out.contract["latency_us"]["read"]["p50"]
    assert 1.5 * 12_500 < p50 < p50_md1 * 1e6


def test_flash_at_low_load_stays_at_its_qd1_latency():
    """Enterprise NVMe (1,000,000 read IOPS, 80 us at QD1: 80 units). At 20,000 reads/s (Poisson) 1.6 I/Os
    are in flight on average: the 80 units are never all busy, and an I/O waits only when another started
    less than the gate's 1 us before it (probability 1 - e^{-0.02} = 2%, at most 1 us): p50 = 80 us and
    p99 <= 81 us; utilisation 20,000 / 1,000,000 = 2%."""
    nvme = DeviceModel("nvme", "test", 1_000_000, 180_000, 6800, 4000, 80, 20)
    assert nvme.units == 80
    t = poisson_arrivals(20_000.0, 200_000, seed=8)
    out = sim.simulate(random_reads(t), sim.Params("single", spread_ties=False), {"device": nvme})
    lat = out.contract["latency_us"]["read"]
    assert lat["p50"] == pytest.approx(80.0)
    assert lat["p99"] <= 81.0
    assert out.contract["device_util"]["device"] == pytest.approx(0.02, rel=0.02)
