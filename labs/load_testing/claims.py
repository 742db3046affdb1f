"""The load_testing lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

from collections import defaultdict

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun
from latency_metrics.metrics import StreamedRequest, goodput, percentile, summarize


def streamed_requests(doc: dict) -> dict[float, list[StreamedRequest]]:
    """load_test: the recorded requests of each rate, as the metrics module's StreamedRequest."""
    by_rate: dict[float, list[StreamedRequest]] = defaultdict(list)
    for m in doc["measurements"]:
        by_rate[m["rate"]].append(
            StreamedRequest(
                m["request"],
                m["sent_s"],
                m["prompt_tokens"],
                tuple(m["chunk_times_s"]),
                tuple(m["chunk_tokens"]),
            )
        )
    return by_rate


def load_summary_problems(rate: float, reqs: list[StreamedRequest], s: dict, slo: dict) -> list:
    """Where a stored summary differs from the metrics module's figures on the same requests."""
    want = {
        "duration_s": summarize(reqs)["duration_s"],
        "goodput": goodput(reqs, slo),
        "ttft_p99_s": percentile([r.ttft_s for r in reqs], 99),
        "e2e_p99_s": percentile([r.e2e_s for r in reqs], 99),
        "itl_p99_s": percentile([g for r in reqs for g in r.itl_s], 99),
    }
    return [
        f"rate {rate:g}: {key} {s[key]:.6g} but the requests give {value:.6g}"
        for key, value in want.items()
        if s[key] is None or abs(s[key] - value) > 1e-9 * max(1.0, abs(value))
    ]


def load_completeness(doc: dict) -> Check:
    """load_test: each rate served every request, each its exact tokens; summaries recomputed."""
    p = doc["parameters"]
    by_rate = streamed_requests(doc)
    problems = []
    if sorted(by_rate) != sorted(p["rates"]):
        problems.append(f"requests recorded for rates {sorted(by_rate)}, asked {p['rates']}")
    summaries = {s["rate"]: s for s in doc["load_summaries"]}
    if sorted(summaries) != sorted(p["rates"]):
        problems.append(f"load_summaries for rates {sorted(summaries)}, asked {p['rates']}")
    for rate, reqs in by_rate.items():
        if len(reqs) != p["requests"]:
            problems.append(f"rate {rate:g}: {len(reqs)} requests, asked {p['requests']}")
        short = [r.name for r in reqs if r.output_tokens != p["output_tokens"]]
        if short:
            problems.append(f"rate {rate:g}: not {p['output_tokens']} tokens: {short[:3]}")
        if rate in summaries:
            problems += load_summary_problems(rate, reqs, summaries[rate], p["slo_ms"])
    return lab.verdict(
        "completeness",
        problems,
        f"{p['requests']} requests at each of {len(p['rates'])} rates, {p['output_tokens']} "
        "tokens each; summaries equal latency_metrics.metrics on the recorded chunk times",
        shown=5,
    )


def load_claims(doc: dict) -> list[Check]:
    """Tail latency grows with load; goodput counts a subset of the completed requests."""
    rows = sorted(doc["load_summaries"], key=lambda s: s["rate"])
    over = [f"{s['rate']:g}" for s in rows if s["goodput"] > s["request_throughput"] + 1e-12]
    bounded = Check(
        "FAIL" if over else "PASS",
        "goodput <= request throughput",
        f"exceeded at rates {', '.join(over)}" if over else f"at all {len(rows)} rates",
    )
    if len(rows) < 2:
        return [bounded, Check("SKIP", "p99 TTFT grows with rate", "needs two rates")]
    low, high = rows[0], rows[-1]
    grows = Check(
        "PASS" if high["ttft_p99_s"] > low["ttft_p99_s"] else "FAIL",
        "p99 TTFT grows with rate",
        f"{lab.ms(low['ttft_p99_s'])} at {low['rate']:g} req/s, "
        f"{lab.ms(high['ttft_p99_s'])} at {high['rate']:g} req/s",
    )
    return [grows, bounded]


CLAIMS = {
    "load_test": Claims(
        lambda doc: [load_completeness(doc)],
        load_claims,
        "CPU run: its latencies say nothing about a GPU under load",
    ),
}


# ---------------------------------------------------------------- CPU smoke run

RATES, REQUESTS, OUTPUT = (2.0, 8.0), 6, 6


def every_request_streamed_its_tokens_at_the_planned_times(run: SmokeRun) -> None:
    from load_testing.arrivals import arrival_times

    assert [s["rate"] for s in run.doc["load_summaries"]] == list(RATES)
    for rate in RATES:
        rows = [m for m in run.doc["measurements"] if m["rate"] == rate]
        assert len(rows) == REQUESTS
        assert all(sum(m["chunk_tokens"]) == OUTPUT for m in rows)
        assert all(len(m["chunk_times_s"]) == len(m["chunk_tokens"]) for m in rows)
        planned = arrival_times(REQUESTS, rate, 1.0, run.doc["parameters"]["seed"])
        sent = sorted(m["sent_s"] for m in rows)
        assert all(s >= p - 1e-3 for s, p in zip(sent, planned, strict=True))  # never early


def the_table_is_printed(run: SmokeRun) -> None:
    assert "TTFT p99" in run.stdout and "goodput" in run.stdout


SMOKE = (
    Smoke(
        "poisson_load.py",
        f"--config tiny --rates {','.join(map(str, RATES))} --requests {REQUESTS} "
        f"--prompt-tokens 32 --output-tokens {OUTPUT}",
        (every_request_streamed_its_tokens_at_the_planned_times, the_table_is_printed),
    ),
)
