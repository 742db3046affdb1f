"""The batched_decode lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import statistics
from collections import Counter, defaultdict
from itertools import pairwise

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

# batch_sweep (labs/batched_decode): the batched-decode lesson's claims
THROUGHPUT_STEP_SLACK = 0.9  # each larger batch's output throughput >= 0.9x the previous one
THROUGHPUT_GAIN = 8.0  # largest vs smallest batch: >= x8 (or half the batch ratio if smaller)
SMALL_BATCH = 8  # up to this batch size the weights dominate the bytes of a step
SMALL_BATCH_TPOT_FLAT = 1.5  # max / min TPOT for batches up to SMALL_BATCH


def batch_completeness(doc: dict) -> Check:
    """batch_sweep: B requests per batch size and repeat, each with the exact token counts."""
    p = doc["parameters"]
    got = Counter(
        (m["label"], m["prompt_tokens"], m["new_tokens"], m["repeat"])
        for m in doc["measurements"]
        if m["series"] == "batch_sweep"
    )
    want = Counter(
        {
            (f"batch {b}", p["prompt_tokens"], p["new_tokens"], r): b
            for r in range(p["repeats"])
            for b in p["batches"]
        }
    )
    problems = []
    problems += lab.request_problems(got, want, "label, prompt, new, repeat")
    summaries = Counter((s["batch"], s["repeat"]) for s in doc["batch_summaries"])
    wanted = Counter((b, r) for r in range(p["repeats"]) for b in p["batches"])
    if summaries != wanted:
        problems.append(f"batch_summaries: {sorted(summaries)} instead of {sorted(wanted)}")
    if max(p["batches"]) > p["max_num_seqs"]:
        problems.append(f"max_num_seqs {p['max_num_seqs']} < largest batch {max(p['batches'])}")
    problems += lab.cache_problems(doc)
    total = sum(want.values())
    return lab.verdict(
        "completeness",
        problems,
        f"{total} of {total} requests in {len(wanted)} batches, exact prompt and new tokens, "
        "no prefix-cache hits",
    )


def batch_medians(doc: dict, field: str) -> dict[int, float]:
    groups: dict[int, list[float]] = defaultdict(list)
    for s in doc["batch_summaries"]:
        groups[s["batch"]].append(s[field])
    return {b: statistics.median(v) for b, v in sorted(groups.items())}


def claim_throughput_grows(tps: dict[int, float]) -> Check:
    name = "output throughput grows with the batch size"
    if len(tps) < 2:
        return Check("SKIP", name, "needs two batch sizes")
    batches = list(tps)
    steps_ok = all(tps[b] >= THROUGHPUT_STEP_SLACK * tps[a] for a, b in pairwise(batches))
    gain = tps[batches[-1]] / tps[batches[0]]
    need = min(THROUGHPUT_GAIN, batches[-1] / batches[0] / 2)
    shown = ", ".join(f"{b}: {v:,.0f}/s" for b, v in tps.items())
    detail = f"x{gain:.1f} from B={batches[0]} to B={batches[-1]} (need >= x{need:g}); {shown}"
    return Check("PASS" if steps_ok and gain >= need else "FAIL", name, detail)


def claim_small_batch_tpot_flat(tpot: dict[int, float]) -> Check:
    name = f"TPOT nearly flat up to B={SMALL_BATCH}"
    small = {b: t for b, t in tpot.items() if b <= SMALL_BATCH}
    if len(small) < 2:
        return Check("SKIP", name, f"needs two batch sizes up to {SMALL_BATCH}")
    spread = max(small.values()) / min(small.values())
    shown = ", ".join(f"{b}: {lab.ms(t)}" for b, t in small.items())
    ok = spread <= SMALL_BATCH_TPOT_FLAT
    detail = f"max/min x{spread:.2f} (need <= x{SMALL_BATCH_TPOT_FLAT:g}); {shown}"
    return Check("PASS" if ok else "FAIL", name, detail)


def claim_above_bound(doc: dict, tpot: dict[int, float]) -> Check:
    """Every measured TPOT at or above the lesson's lower bound for its batch (sanity of both)."""
    name = "every TPOT at or above its lower bound"
    from batched_decode.lab_results import step_bound_s
    from core.lab_results import gpu_and_model

    known = gpu_and_model(doc)
    if known is None:
        return Check("SKIP", name, lab.NOT_IN_CORE)
    gpu, resolved = known
    below = []
    for b, t in tpot.items():
        bound = step_bound_s(doc, gpu, resolved, b)
        if t < bound:
            below.append(f"B={b}: {lab.ms(t)} < {lab.ms(bound)}")
    if below:
        return Check("FAIL", name, "; ".join(below))
    return Check("PASS", name, f"{len(tpot)} batch sizes on a {gpu.name}")


def claim_full_batch_measured(doc: dict) -> Check:
    """The full-batch decode step is a difference of two calls: valid only when the short call
    kept every request running until the last one decoded, and only if it came out positive."""
    name = "full-batch decode step measured"
    bad = [
        f"B={s['batch']} (repeat {s['repeat']})"
        for s in doc["batch_summaries"]
        if not s["short_all_running"] or s["decode_step_s"] <= 0
    ]
    if bad:
        return Check("FAIL", name, f"{', '.join(bad)}: run again with a larger --short-new-tokens")
    return Check("PASS", name, f"{len(doc['batch_summaries'])} batch calls")


def batch_claims(doc: dict) -> list[Check]:
    """On the full batch's decode step, which is what the lesson's bound describes."""
    step = batch_medians(doc, "decode_step_s")
    return [
        claim_full_batch_measured(doc),
        claim_throughput_grows(batch_medians(doc, "output_tokens_per_s")),
        claim_small_batch_tpot_flat(step),
        claim_above_bound(doc, step),
    ]


CPU_REASON = (
    "CPU run: its timings say nothing about a GPU's prefill and decode, so only "
    "structure and completeness are checked"
)
CLAIMS = {
    "batch_sweep": Claims(lambda doc: [batch_completeness(doc)], batch_claims, CPU_REASON, True)
}


# ---------------------------------------------------------------- CPU smoke run

BATCHES = (1, 4, 16)


def one_line_per_batch_size(run: SmokeRun) -> None:
    assert "batch sweep: 64-token prompts, 16 new tokens each" in run.stdout
    lines = [line.split()[0] for line in run.stdout.splitlines() if line[:5].strip().isdigit()]
    assert sorted(map(int, lines)) == list(BATCHES), run.stdout


def b_requests_with_exact_token_counts(run: SmokeRun) -> None:
    doc = run.doc
    by_label = Counter(m["label"] for m in doc["measurements"])
    assert by_label == {f"batch {b}": b for b in BATCHES}
    assert all(m["prompt_tokens"] == 64 and m["new_tokens"] == 16 for m in doc["measurements"])
    assert [s["batch"] for s in doc["batch_summaries"]] == list(BATCHES)
    assert doc["parameters"]["short_new_tokens"] == 8  # half the new tokens by default
    for s in doc["batch_summaries"]:  # the second call of each batch ran and was timed
        assert s["decode_window_s"] > 0 and s["short_decode_window_s"] > 0, s


SMOKE = (
    Smoke(
        "batch_sweep.py",
        f"--config tiny --batches {','.join(map(str, BATCHES))} --prompt-tokens 64 --new-tokens 16",
        (one_line_per_batch_size, b_requests_with_exact_token_counts),
    ),
)
