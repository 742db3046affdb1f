"""Latency percentiles against request rate: a queueing simulation over Part 3's step-time model.

The same REQUESTS requests (Part 3's stream: PROMPT_TOKENS-token prompts, geometric outputs with
mean MEAN_OUTPUT, cut at MAX_OUTPUT, seed SEED) are sent at each request rate, with gamma gaps as
`vllm bench serve --request-rate R --burstiness β` draws them (arrivals.py). They are served by
Part 3's continuous-batching simulator (continuous_batching.simulate) with SLOTS slots, every step
costing its roofline LOWER BOUND; so the latencies are those of an ideal engine, and what the
sweep shows is the queueing: how waiting grows as the rate approaches what the server can do.

Each simulated request becomes a latency_metrics.metrics.StreamedRequest (its first token and its
last; the simulator keeps no time in between, so ITL is not reported), and TTFT, TPOT, E2E,
throughput and goodput come from that lesson's functions: one definition, vLLM's.

Run it: python snippets/load_testing/sweep.py
"""

from dataclasses import dataclass
from functools import cache

import numpy as np

from continuous_batching.simulate import (
    MAX_OUTPUT,
    MEAN_OUTPUT,
    PROMPT_TOKENS,
    SEED,
    SLOTS,
    Hardware,
    Stream,
    burst,
    default_hardware,
    request_stream,
    simulate,
)
from latency_metrics.metrics import StreamedRequest, goodput, meets_slos, percentile, summarize
from load_testing.arrivals import BURSTINESS, arrival_times

REQUESTS = 400
RATES = (2.0, 4.0, 6.0, 8.0, 9.0, 10.0, 11.0, 11.5, 12.0, 13.0)  # requests per second
BURSTY = min(BURSTINESS)  # the burstiest shape arrivals.py shows: gamma gaps with CV 1/sqrt(β)
SLO_MS = {"ttft": 1000.0, "tpot": 50.0}  # as `vllm bench serve --goodput ttft:1000 tpot:50`
# Where goodput peaks: near capacity a queue takes long to settle, so a 400-request run (~35 s of
# traffic) puts the peak anywhere from well below capacity to at it, depending on the seed.
# Longer runs on several seeds pin it down; rates on a grid of shares of capacity.
PEAK_LOADS = (0.80, 0.84, 0.88, 0.92, 0.96, 1.00)
SHORT_SEEDS = tuple(range(SEED, SEED + 10))  # REQUESTS each: cheap, and they scatter
LONG_REQUESTS = 4000
LONG_SEEDS = (SEED, SEED + 1, SEED + 2)  # ~6 s of build time on one core, all three


@dataclass(frozen=True)
class Point:
    rate: float
    burstiness: float
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_p50_s: float
    tpot_p99_s: float
    e2e_p50_s: float
    e2e_p99_s: float
    request_throughput: float  # completed requests / duration of the run
    output_throughput: float  # tokens/s
    goodput: float  # requests/s that met every SLO in SLO_MS
    good_output_throughput: float  # tokens/s of those requests only
    mean_in_system: float  # time-averaged requests sent and not finished (Little's L)
    mean_e2e_s: float


def requests(stream: Stream, first_s: np.ndarray, finish_s: np.ndarray) -> list[StreamedRequest]:
    """The simulator's per-request times as a streaming client would record them."""
    out = []
    for i, (sent, first, last) in enumerate(zip(stream.arrivals_s, first_s, finish_s, strict=True)):
        n = int(stream.outputs[i])
        times = (first - sent,) if n == 1 else (first - sent, last - sent)
        tokens = (1,) if n == 1 else (1, n - 1)
        out.append(StreamedRequest(f"r{i}", float(sent), stream.prompt_tokens, times, tokens))
    return out


def base_stream(n: int = REQUESTS, seed: int = SEED) -> Stream:
    return request_stream(seed=seed, n=n, mean_output=MEAN_OUTPUT, max_output=MAX_OUTPUT)


def stream_at(rate: float, burstiness: float, n: int = REQUESTS, seed: int = SEED) -> Stream:
    """The same requests, sent at this rate and burstiness."""
    base = base_stream(n, seed)
    return Stream(arrival_times(n, rate, burstiness, seed), base.outputs, PROMPT_TOKENS)


def mean_in_system(sent: np.ndarray, done: np.ndarray) -> float:
    """Time-averaged number of requests in the system (sent, not finished), over the run."""
    span = float(done.max() - sent.min())
    return float((done - sent).sum()) / span


def point(rate: float, burstiness: float, hw: Hardware, slo_ms: dict[str, float] = SLO_MS) -> Point:
    stream = stream_at(rate, burstiness)
    result = simulate("continuous", stream, hw, SLOTS)
    reqs = requests(stream, result.first_token_s, result.finish_s)
    ttft = [r.ttft_s for r in reqs]
    tpot = [r.tpot_s for r in reqs if r.tpot_s is not None]
    e2e = [r.e2e_s for r in reqs]
    m = summarize(reqs)
    return Point(
        rate,
        burstiness,
        percentile(ttft, 50),
        percentile(ttft, 99),
        percentile(tpot, 50),
        percentile(tpot, 99),
        percentile(e2e, 50),
        percentile(e2e, 99),
        m["request_throughput"],
        m["output_throughput"],
        goodput(reqs, slo_ms),
        sum(r.output_tokens for r in reqs if meets_slos(r, slo_ms)) / m["duration_s"],
        mean_in_system(stream.arrivals_s, result.finish_s),
        m["mean_e2e_s"],
    )


@cache
def sweep(burstiness: float = 1.0, rates: tuple[float, ...] = RATES) -> tuple[Point, ...]:
    return tuple(point(r, burstiness, default_hardware()) for r in rates)


def run_goodput(rate: float, n: int, seed: int, hw: Hardware, slo_ms=SLO_MS) -> float:
    """Goodput (req/s, Poisson arrivals) of one run: `goodput` over `requests`, in numpy
    (the same count and duration; tests/test_load_testing.py holds the two equal)."""
    stream = stream_at(rate, 1.0, n, seed)
    result = simulate("continuous", stream, hw, SLOTS)
    ttft = result.first_token_s - stream.arrivals_s
    later = np.maximum(stream.outputs - 1, 1)
    tpot = np.where(stream.outputs > 1, (result.finish_s - result.first_token_s) / later, 0.0)
    good = (ttft * 1e3 <= slo_ms["ttft"]) & (tpot * 1e3 <= slo_ms["tpot"])
    return float(good.sum()) / float(result.finish_s.max() - stream.arrivals_s.min())


def peak_load(n: int, seed: int, loads: tuple[float, ...] = PEAK_LOADS) -> float:
    """The share of capacity, among `loads`, at which one run of `n` requests has most goodput."""
    hw, cap_req = default_hardware(), capacity()[0]
    return max(loads, key=lambda load: run_goodput(load * cap_req, n, seed, hw))


@cache
def peak_loads() -> dict[int, tuple[float, ...]]:
    """Goodput's peak, per seed, for the short runs and the long ones: {requests: peaks}."""
    return {
        REQUESTS: tuple(peak_load(REQUESTS, s) for s in SHORT_SEEDS),
        LONG_REQUESTS: tuple(peak_load(LONG_REQUESTS, s) for s in LONG_SEEDS),
    }


@cache
def capacity() -> tuple[float, float]:
    """What the simulated server sustains with a queue that never empties: (req/s, tokens/s).

    The same requests all sent at t = 0 (Part 3's offline case), continuous batching.
    """
    stream = burst(base_stream())
    result = simulate("continuous", stream, default_hardware(), SLOTS)
    span = float(result.finish_s.max())
    return len(stream.outputs) / span, float(stream.outputs.sum()) / span


def table(points: tuple[Point, ...]) -> list[str]:
    lines = [
        f"{'req/s':>5} {'TTFT p50':>8} {'p99':>7} {'TPOT p50':>8} {'p99':>6} {'E2E p50':>7} "
        f"{'p99':>7} {'done/s':>6} {'goodput':>7}"
    ]
    for p in points:
        lines.append(
            f"{p.rate:>5g} {p.ttft_p50_s:>8.2f} {p.ttft_p99_s:>7.2f} {p.tpot_p50_s * 1e3:>8.1f} "
            f"{p.tpot_p99_s * 1e3:>6.1f} {p.e2e_p50_s:>7.2f} {p.e2e_p99_s:>7.2f} "
            f"{p.request_throughput:>6.2f} {p.goodput:>7.2f}"
        )
    return lines


def main() -> None:
    hw = default_hardware()
    cap_req, cap_tok = capacity()
    slos = ", ".join(f"{k} <= {v:g} ms" for k, v in SLO_MS.items())
    print(
        f"{REQUESTS} requests ({PROMPT_TOKENS}-token prompts, outputs geometric, mean "
        f"{MEAN_OUTPUT}, cut at {MAX_OUTPUT}), seed {SEED}; {hw.model.name} ({hw.fmt.name}) on "
        f"{hw.gpu.name}, {SLOTS} slots, step times = lower bounds"
    )
    print(f"capacity (all requests queued at t = 0): {cap_req:.2f} req/s, {cap_tok:,.0f} tok/s")
    print(f"TTFT and E2E in s, TPOT in ms; goodput in req/s with {slos}")
    for b in (1.0, BURSTY):
        kind = "Poisson arrivals (burstiness 1)" if b == 1.0 else f"bursty arrivals (gamma, {b:g})"
        print(f"\n{kind}")
        print("\n".join(table(sweep(b))))


if __name__ == "__main__":
    main()
