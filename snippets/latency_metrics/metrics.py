"""TTFT, TPOT, ITL, end-to-end latency, throughput and goodput, as `vllm bench serve` computes them.

Definitions follow vllm/benchmarks/serve.py (calculate_metrics): TTFT is request sent -> first
streamed chunk; TPOT per request is (E2E - TTFT) / (output tokens - 1), the first token excluded;
ITL is every gap between successive chunks, pooled across requests; E2E is request sent -> last
chunk; throughput divides token counts by the duration of the whole run; goodput counts only the
requests that meet every service-level objective (SLO) given with --goodput, in milliseconds.

Run it: python snippets/latency_metrics/metrics.py
"""

import itertools
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class StreamedRequest:
    """One request as a streaming client sees it. Times are seconds after it was sent."""

    name: str
    sent_s: float  # when the client sent it, on the run's clock
    prompt_tokens: int
    chunk_times_s: tuple[float, ...]  # arrival of each streamed chunk, after sending
    chunk_tokens: tuple[int, ...]  # tokens in each chunk (usually 1)

    def __post_init__(self) -> None:
        if not self.chunk_times_s or len(self.chunk_times_s) != len(self.chunk_tokens):
            raise ValueError(f"{self.name}: need one token count per chunk, and at least one chunk")
        if self.chunk_times_s[0] <= 0 or any(
            b < a for a, b in itertools.pairwise(self.chunk_times_s)
        ):
            raise ValueError(f"{self.name}: chunk times must be positive and non-decreasing")
        if min(self.chunk_tokens) < 1 or self.prompt_tokens < 1:
            raise ValueError(f"{self.name}: token counts must be at least 1")

    @property
    def output_tokens(self) -> int:
        return sum(self.chunk_tokens)

    @property
    def ttft_s(self) -> float:
        return self.chunk_times_s[0]

    @property
    def e2e_s(self) -> float:
        return self.chunk_times_s[-1]

    @property
    def itl_s(self) -> list[float]:
        """Gaps between successive chunks: a chunk of several tokens is still one gap."""
        return [b - a for a, b in itertools.pairwise(self.chunk_times_s)]

    @property
    def tpot_s(self) -> float | None:
        """(E2E - TTFT) / (n - 1); undefined (None) for a one-token answer, as in vLLM."""
        n = self.output_tokens
        return (self.e2e_s - self.ttft_s) / (n - 1) if n > 1 else None


def percentile(values: list[float], p: float) -> float:
    """Linear interpolation between closest ranks, like numpy.percentile's default."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"p must be within [0, 100], got {p}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(requests: list[StreamedRequest]) -> dict[str, float]:
    """Means over requests, ITL pooled over every gap, throughput over the whole run."""
    if not requests:
        raise ValueError("no requests to summarize")
    start = min(r.sent_s for r in requests)
    duration = max(r.sent_s + r.e2e_s for r in requests) - start
    tpots = [r.tpot_s for r in requests if r.tpot_s is not None]
    itls = [gap for r in requests for gap in r.itl_s]
    output = sum(r.output_tokens for r in requests)
    return {
        "duration_s": duration,
        "mean_ttft_s": statistics.fmean(r.ttft_s for r in requests),
        "mean_tpot_s": statistics.fmean(tpots) if tpots else 0.0,
        "mean_itl_s": statistics.fmean(itls) if itls else 0.0,
        "median_itl_s": statistics.median(itls) if itls else 0.0,
        "p99_itl_s": percentile(itls, 99) if itls else 0.0,
        "mean_e2e_s": statistics.fmean(r.e2e_s for r in requests),
        "request_throughput": len(requests) / duration,
        "output_throughput": output / duration,
        "total_token_throughput": (output + sum(r.prompt_tokens for r in requests)) / duration,
    }


def total_to_output_ratio(prompt_tokens: int, output_tokens: int) -> float:
    """Total token throughput over output throughput: (prompt + output) / output, whatever T_run."""
    if prompt_tokens < 0 or output_tokens < 1:
        raise ValueError(
            f"need prompt tokens >= 0 and output tokens >= 1, got {prompt_tokens}, {output_tokens}"
        )
    return (prompt_tokens + output_tokens) / output_tokens


GOODPUT_METRICS = ("ttft", "tpot", "e2el")  # the names --goodput accepts, as KEY:milliseconds


def meets_slos(request: StreamedRequest, slo_ms: dict[str, float]) -> bool:
    """True when every given SLO holds (metric <= limit). A one-token answer's TPOT counts as 0."""
    unknown = sorted(set(slo_ms) - set(GOODPUT_METRICS))
    if unknown or not slo_ms:
        raise ValueError(f"SLO names must be some of {GOODPUT_METRICS}, got {sorted(slo_ms)}")
    measured_s = {"ttft": request.ttft_s, "tpot": request.tpot_s or 0.0, "e2el": request.e2e_s}
    return all(measured_s[name] <= limit / 1e3 for name, limit in slo_ms.items())


def goodput(requests: list[StreamedRequest], slo_ms: dict[str, float]) -> float:
    """Requests per second that met all their SLOs, over the duration of the whole run."""
    good = sum(meets_slos(r, slo_ms) for r in requests)
    return good / summarize(requests)["duration_s"]


def steady(first_s: float, gap_s: float, count: int) -> tuple[float, ...]:
    """`count` chunk times: the first at `first_s`, then one every `gap_s`."""
    return tuple(round(first_s + i * gap_s, 6) for i in range(count))


# A toy trace with invented timings: three requests on one server, each 10 output tokens.
# A streams evenly. B's stream stalls once (the server ran another request's prefill in between).
# C receives three tokens in one chunk (e.g. speculative decoding accepted three at once).
TRACE = [
    StreamedRequest("A", 0.000, 1000, steady(0.120, 0.015, 10), (1,) * 10),
    StreamedRequest(
        "B", 0.020, 200, (*steady(0.060, 0.015, 5), *steady(0.235, 0.015, 5)), (1,) * 10
    ),
    StreamedRequest("C", 0.040, 50, steady(0.050, 0.015, 8), (1, 1, 1, 3, 1, 1, 1, 1)),
]
# SLOs for the toy trace's goodput, in milliseconds as `vllm bench serve --goodput` takes them.
TOY_SLO_MS = {"ttft": 100.0, "tpot": 20.0}


def main() -> None:
    columns = ("prompt", "output", "TTFT ms", "TPOT ms", "E2E ms")
    print(f"{'request':<8}" + "".join(f"{c:>9}" for c in columns) + "  ITL ms")
    for r in TRACE:
        gaps = " ".join(f"{g * 1e3:.0f}" for g in r.itl_s)
        print(
            f"{r.name:<8}{r.prompt_tokens:>9}{r.output_tokens:>9}{r.ttft_s * 1e3:>9.1f}"
            f"{r.tpot_s * 1e3:>9.1f}{r.e2e_s * 1e3:>9.1f}  {gaps}"
        )
    m = summarize(TRACE)
    print(f"\nrun: {len(TRACE)} requests in {m['duration_s'] * 1e3:.0f} ms")
    print(
        f"mean TTFT {m['mean_ttft_s'] * 1e3:.1f} ms, mean TPOT {m['mean_tpot_s'] * 1e3:.1f} ms, "
        f"mean E2E {m['mean_e2e_s'] * 1e3:.1f} ms"
    )
    print(
        f"ITL over {sum(len(r.itl_s) for r in TRACE)} gaps: mean {m['mean_itl_s'] * 1e3:.1f} ms, "
        f"median {m['median_itl_s'] * 1e3:.1f} ms, P99 {m['p99_itl_s'] * 1e3:.1f} ms"
    )
    print(
        f"throughput: {m['request_throughput']:.2f} req/s, "
        f"output {m['output_throughput']:.0f} tok/s, "
        f"total (prompt + output) {m['total_token_throughput']:,.0f} tok/s"
    )
    slos = ", ".join(f"{name} <= {limit:g} ms" for name, limit in TOY_SLO_MS.items())
    good = [r.name for r in TRACE if meets_slos(r, TOY_SLO_MS)]
    print(
        f"goodput with {slos}: {goodput(TRACE, TOY_SLO_MS):.2f} req/s "
        f"(good: {', '.join(good) or 'none'})"
    )


if __name__ == "__main__":
    main()
