"""The continuous_batching lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

from collections import Counter

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

THROUGHPUT_GAIN = 8.0  # largest vs smallest max_num_seqs: >= x8 (or half their ratio if smaller)


def max_num_seqs_completeness(doc: dict) -> Check:
    """max_num_seqs: every value served the whole stream, each request its exact output length."""
    p = doc["parameters"]
    want = Counter(
        (f"max_num_seqs {v}", p["prompt_tokens"], n)
        for v in p["values"]
        for n in p["output_lengths"]
    )
    got = Counter(
        (m["label"], m["prompt_tokens"], m["new_tokens"])
        for m in doc["measurements"]
        if m["series"] == "max_num_seqs"
    )
    problems = []
    if len(p["output_lengths"]) != p["requests"]:
        problems.append(f"{len(p['output_lengths'])} output lengths for {p['requests']} requests")
    problems += lab.request_problems(got, want, "label, prompt, new")
    served = sorted(s["max_num_seqs"] for s in doc["max_num_seqs_summaries"])
    if served != sorted(p["values"]):
        problems.append(f"max_num_seqs_summaries for {served}, parameters ask for {p['values']}")
    problems += lab.cache_problems(doc)
    total = sum(want.values())
    return lab.verdict(
        "completeness",
        problems,
        f"{total} of {total} requests over {len(p['values'])} max_num_seqs values, exact "
        "output lengths, no prefix-cache hits",
    )


def max_num_seqs_claims(doc: dict) -> list[Check]:
    """A larger batch limit serves the same stream with more throughput and less queueing."""
    rows = sorted(doc["max_num_seqs_summaries"], key=lambda s: s["max_num_seqs"])
    if len(rows) < 2:
        return [Check("SKIP", "timing claims", "needs two max_num_seqs values")]
    low, high = rows[0], rows[-1]
    gain = high["output_tokens_per_s"] / low["output_tokens_per_s"]
    need = min(THROUGHPUT_GAIN, high["max_num_seqs"] / low["max_num_seqs"] / 2)
    shown = ", ".join(f"{s['max_num_seqs']}: {s['output_tokens_per_s']:,.0f}/s" for s in rows)
    throughput = Check(
        "PASS" if gain >= need else "FAIL",
        "throughput grows with max_num_seqs",
        f"x{gain:.1f} from {low['max_num_seqs']} to {high['max_num_seqs']} (need >= "
        f"x{need:g}); {shown}",
    )
    queueing = Check(
        "PASS" if high["ttft_p50_s"] < low["ttft_p50_s"] else "FAIL",
        "median TTFT falls with max_num_seqs",
        f"{lab.ms(low['ttft_p50_s'])} at {low['max_num_seqs']}, "
        f"{lab.ms(high['ttft_p50_s'])} at {high['max_num_seqs']}",
    )
    return [throughput, queueing]


CPU_REASON = (
    "CPU run: its timings say nothing about a GPU's prefill and decode, so only "
    "structure and completeness are checked"
)
CLAIMS = {
    "max_num_seqs": Claims(
        lambda doc: [max_num_seqs_completeness(doc)], max_num_seqs_claims, CPU_REASON, True
    )
}


# ---------------------------------------------------------------- CPU smoke run


def every_request_served_with_its_drawn_length(run: SmokeRun) -> None:
    assert "stream: 16 requests, 32-token prompts" in run.stdout
    lengths = run.doc["parameters"]["output_lengths"]
    assert len(lengths) == 16 and max(lengths) <= 32
    for value in (4,):  # one engine: the smoke run checks the stream, not the comparison
        label = f"max_num_seqs {value}"
        got = sorted(m["new_tokens"] for m in run.doc["measurements"] if m["label"] == label)
        assert got == sorted(lengths)
    assert [s["max_num_seqs"] for s in run.doc["max_num_seqs_summaries"]] == [4]


SMOKE = (
    Smoke(
        "max_num_seqs.py",
        "--config tiny --values 4 --requests 16 --prompt-tokens 32 --mean-output 8 --max-output 32",
        (every_request_served_with_its_drawn_length,),
    ),
)
