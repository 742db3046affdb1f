"""What `vllm serve` exposes on /metrics, and the arithmetic a dashboard does with it.

vLLM 0.26.0 registers its metrics in vllm/v1/metrics/loggers.py (PrometheusStatLogger) and
vllm/v1/spec_decode/metrics.py (SpecDecodingProm); the API server mounts prometheus_client's
exposition at /metrics (vllm/entrypoints/serve/instrumentator/metrics.py). Every metric carries
the labels model_name and engine; a counter's samples end in _total, a histogram's in _bucket
(one per upper edge `le`, cumulative), _sum and _count.

A dashboard never plots a counter: it plots the difference of two scrapes over the time between
them (Prometheus' rate()), a ratio of two such differences, or a quantile estimated from the
bucket counts (histogram_quantile()). This module does the same three things on the text
/metrics returns, with the standard library only, so it also runs in the browser.

Run it: python snippets/serving_observability/metrics.py
"""

import math
import random
from dataclasses import dataclass

Labels = tuple[tuple[str, str], ...]  # sorted (name, value) pairs of one sample
Samples = dict[tuple[str, Labels], float]


@dataclass(frozen=True)
class Metric:
    name: str  # as registered; counters are scraped with _total appended
    kind: str  # "gauge", "counter" or "histogram"
    what: str
    lesson: str  # the course lesson that explains the quantity
    watch: str  # what a dashboard or an alert does with it


# Each name and kind checked in the vLLM 0.26.0 source (loggers.py, spec_decode/metrics.py).
CATALOGUE = (
    Metric("vllm:num_requests_running", "gauge", "requests in the running batch",
           "continuous_batching", "panel: against --max-num-seqs"),
    Metric("vllm:num_requests_waiting", "gauge", "requests queued, not yet scheduled",
           "load_testing", "alert: above 0 for minutes = over capacity"),
    Metric("vllm:kv_cache_usage_perc", "gauge", "share of KV blocks in use (0 to 1)",
           "paged_attention", "panel: near 1 comes before preemptions"),
    Metric("vllm:num_preemptions", "counter", "requests preempted (KV recomputed later)",
           "chunked_prefill", "alert: rate above 0"),
    Metric("vllm:prompt_tokens", "counter", "prompt tokens, at each request's first token",
           "load_testing", "panel: rate = prompt tokens/s (cached included)"),
    Metric("vllm:generation_tokens", "counter", "tokens generated",
           "load_testing", "panel: rate = output tokens/s (cost)"),
    Metric("vllm:request_success", "counter", "requests finished, label finished_reason",
           "latency_metrics", "panel: rate by reason; abort/error share"),
    Metric("vllm:prefix_cache_queries", "counter", "prompt tokens looked up in the prefix cache",
           "prefix_caching", "panel: hits / queries = hit rate"),
    Metric("vllm:prefix_cache_hits", "counter", "of those, tokens found cached",
           "prefix_caching", "panel: hits / queries = hit rate"),
    Metric("vllm:spec_decode_num_drafts", "counter", "speculation rounds",
           "speculative_decoding", "panel: 1 + accepted / drafts = tokens per round"),
    Metric("vllm:spec_decode_num_draft_tokens", "counter", "draft tokens proposed",
           "speculative_decoding", "panel: accepted / draft tokens (not alpha)"),
    Metric("vllm:spec_decode_num_accepted_tokens", "counter", "draft tokens accepted",
           "speculative_decoding", "alert: 1 + accepted / drafts falls"),
    Metric("vllm:time_to_first_token_seconds", "histogram", "TTFT, tokenizing to first token",
           "latency_metrics", "alert: p99 above the TTFT SLO"),
    Metric("vllm:inter_token_latency_seconds", "histogram", "ITL, each gap after the first token",
           "chunked_prefill", "panel: p99 against the ITL budget"),
    Metric("vllm:request_time_per_output_token_seconds", "histogram", "TPOT, one per request",
           "latency_metrics", "alert: p99 above the TPOT SLO"),
    Metric("vllm:e2e_request_latency_seconds", "histogram", "arrival to last token",
           "latency_metrics", "panel: p50 and p99"),
    Metric("vllm:request_queue_time_seconds", "histogram", "time waiting before the first step",
           "load_testing", "panel: the queue's share of TTFT"),
)  # fmt: skip

# The TTFT histogram's upper bucket edges in vLLM 0.26.0 (loggers.py), in seconds
TTFT_BUCKETS_S = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
    1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip


def parse(text: str) -> Samples:
    """Prometheus text exposition -> {(sample name, labels): value}; comments skipped."""
    samples: Samples = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        if "{" in head:
            name, _, rest = head.partition("{")
            labels = tuple(sorted(_labels(rest.rstrip("}"))))
        else:
            name, labels = head, ()
        samples[(name, labels)] = float(value)
    return samples


def _labels(body: str) -> list[tuple[str, str]]:
    """a="x",b="y" -> [(a, x), (b, y)]; vLLM's label values hold no quotes or commas."""
    pairs = []
    for part in body.split('",'):
        if part:
            key, _, value = part.partition("=")
            pairs.append((key.strip(), value.strip().strip('"')))
    return pairs


def total(samples: Samples, name: str, **match: str) -> float:
    """Sum of every sample called `name` whose labels include `match` (over engines, reasons)."""
    want = set(match.items())
    return sum(v for (n, labels), v in samples.items() if n == name and want <= set(labels))


def delta(before: Samples, after: Samples, name: str, **match: str) -> float:
    """What a counter (or a histogram's _sum/_count) grew by between two scrapes."""
    return total(after, name, **match) - total(before, name, **match)


def buckets(before: Samples, after: Samples, name: str) -> list[tuple[float, float]]:
    """(upper edge, cumulative count added between the scrapes) of histogram `name`."""
    edges: dict[float, float] = {}
    for (n, labels), v in after.items():
        if n == f"{name}_bucket":
            le = float(dict(labels)["le"])
            edges[le] = edges.get(le, 0.0) + v - before.get((n, labels), 0.0)
    return sorted(edges.items())


def histogram_quantile(q: float, cumulative: list[tuple[float, float]]) -> float:
    """Prometheus' histogram_quantile: find the bucket holding rank q * count and interpolate
    linearly inside it (the first bucket starts at 0). The answer is only known to lie in
    that bucket: its error can be as large as the bucket is wide."""
    if not 0 <= q <= 1:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    count = cumulative[-1][1]
    if count == 0:
        return math.nan
    rank = q * count
    lower_edge, lower_count = 0.0, 0.0
    for edge, seen in cumulative:
        if seen >= rank:
            if math.isinf(edge):
                return lower_edge  # above the last finite edge: Prometheus returns that edge
            inside = (rank - lower_count) / (seen - lower_count) if seen > lower_count else 1.0
            return lower_edge + (edge - lower_edge) * inside
        lower_edge, lower_count = edge, seen
    return lower_edge


def bucket_counts(observations: list[float], edges=TTFT_BUCKETS_S) -> list[tuple[float, float]]:
    """What the server's histogram would hold after these observations: cumulative counts."""
    return [(e, float(sum(1 for x in observations if x <= e))) for e in (*edges, math.inf)]


def exact_quantile(observations: list[float], q: float) -> float:
    """The same quantile from the observations themselves (linear interpolation, as numpy)."""
    xs = sorted(observations)
    position = q * (len(xs) - 1)
    low = math.floor(position)
    high = min(low + 1, len(xs) - 1)
    return xs[low] + (xs[high] - xs[low]) * (position - low)


# ---------------------------------------------------------------- server against client

TTFT = "vllm:time_to_first_token_seconds"
ITL = "vllm:inter_token_latency_seconds"
E2E = "vllm:e2e_request_latency_seconds"
# quantity -> (what the server's metric grew by, the figure in vllm bench serve's results)
COUNTS = {
    "requests": ("vllm:request_success_total", "completed"),
    "prompt_tokens": ("vllm:prompt_tokens_total", "total_input_tokens"),
    "generation_tokens": ("vllm:generation_tokens_total", "total_output_tokens"),
    "ttft_observations": (f"{TTFT}_count", "completed"),
    "e2e_observations": (f"{E2E}_count", "completed"),
}


def reconcile(before: Samples, after: Samples, bench: dict) -> list[dict]:
    """The server's figures between two scrapes beside `vllm bench serve`'s for the same run:
    counts that must be equal, and the mean TTFT, which the server must not exceed (its clock
    starts as the API server tokenizes the prompt and stops as the first token reaches it; the
    client's starts before the HTTP request and stops at the streamed chunk)."""
    rows = [
        {"quantity": q, "server": delta(before, after, metric), "client": float(bench[field]),
         "relation": "equal"}
        for q, (metric, field) in COUNTS.items()
    ]  # fmt: skip
    gaps = bench["total_output_tokens"] - bench["completed"]  # one ITL per token after the first
    rows.append({"quantity": "itl_observations", "server": delta(before, after, f"{ITL}_count"),
                 "client": float(gaps), "relation": "equal"})  # fmt: skip
    cumulative = buckets(before, after, TTFT)  # the +Inf bucket holds every observation
    rows.append({"quantity": "ttft_bucket_inf", "server": cumulative[-1][1] if cumulative else 0.0,
                 "client": float(bench["completed"]), "relation": "equal"})  # fmt: skip
    n = delta(before, after, f"{TTFT}_count")
    server_ttft_ms = 1e3 * delta(before, after, f"{TTFT}_sum") / n if n else math.nan
    rows.append({"quantity": "mean_ttft_ms", "server": server_ttft_ms,
                 "client": float(bench["mean_ttft_ms"]), "relation": "at_most"})  # fmt: skip
    return rows


def row_holds(row: dict) -> bool:
    if row["relation"] == "equal":
        return row["server"] == row["client"]
    return row["server"] <= row["client"]  # "at_most"


def samples_from(flat: dict[str, float]) -> Samples:
    """Samples stored as {"name{labels}": value} back as parse() returns them."""
    return parse("\n".join(f"{key} {value!r}" for key, value in flat.items()))


# ---------------------------------------------------------------- reading a quantile back

SEED = 7
TTFT_REQUESTS = 2000
TTFT_MEDIAN_S = 0.3  # a lognormal TTFT: median 300 ms ...
TTFT_SIGMA = 0.6  # ... and a spread that puts p99 near 1.2 s


def ttft_sample(seed: int = SEED, n: int = TTFT_REQUESTS) -> list[float]:
    """Seeded TTFTs (stdlib random) to read back through the server's buckets."""
    rng = random.Random(seed)
    return [rng.lognormvariate(math.log(TTFT_MEDIAN_S), TTFT_SIGMA) for _ in range(n)]


def quantile_table(sample: list[float], qs=(0.5, 0.9, 0.99)) -> list[tuple[float, float, float]]:
    """(q, exact from the sample, estimated from vLLM's TTFT buckets) for each q."""
    counts = bucket_counts(sample)
    return [(q, exact_quantile(sample, q), histogram_quantile(q, counts)) for q in qs]


def main() -> None:
    print(f"{'metric':<44}{'kind':<10}{'lesson':<22}watch")
    for m in CATALOGUE:
        print(f"{m.name:<44}{m.kind:<10}{m.lesson:<22}{m.watch}")
    print()
    sample = ttft_sample()
    print(f"{len(sample)} TTFTs read back through vLLM's TTFT buckets:")
    print(f"{'quantile':>9}{'exact':>10}{'buckets':>10}")
    for q, exact, estimate in quantile_table(sample):
        print(f"{q:>9}{exact * 1e3:>8.0f}ms{estimate * 1e3:>8.0f}ms")


if __name__ == "__main__":
    main()
