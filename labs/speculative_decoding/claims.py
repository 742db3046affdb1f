"""The speculative_decoding lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import re
import statistics
from collections import Counter
from itertools import pairwise

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun
from speculative_decoding.lab_results import SPEEDUP_SLACK

LAB = "ngram_speculation"
COUNTER_KEYS = ("num_drafts", "num_draft_tokens", "num_accepted_tokens")


def lab_calls(p: dict) -> list[tuple[str, str, int, int]]:
    """(config, phase, batch, repeat) of every generate() call the parameters ask for."""
    warmups = [(c, "warmup", max(p["batches"]), 0) for c in p["configs"]]
    rounds = [(r, b) for r in range(p["repeats"]) for b in p["batches"]]
    return warmups + [(c, "measured", b, r) for c in p["configs"] for r, b in rounds]


def spec_completeness(doc: dict) -> Check:
    """B requests per configuration, batch size and repeat, each with the exact token counts;
    one counters row per call (the warm-up's too)."""
    p = doc["parameters"]
    got = Counter(
        (m["series"], m["label"], m["prompt_tokens"], m["new_tokens"], m["repeat"])
        for m in doc["measurements"]
    )
    want = Counter(
        {
            (f"spec_{c}", f"batch {b}", p["prompt_tokens"], p["new_tokens"], r): b
            for c in p["configs"]
            for r in range(p["repeats"])
            for b in p["batches"]
        }
    )
    problems = lab.request_problems(got, want, "series, label, prompt, new, repeat")
    rows = Counter((s["config"], s["phase"], s["batch"], s["repeat"]) for s in doc["speculation"])
    wanted = Counter(lab_calls(p))
    if rows != wanted:
        problems.append(f"speculation rows {sorted(rows)} instead of {sorted(wanted)}")
    if p["prompt_tokens"] != p["passage_tokens"] * p["copies"]:
        problems.append("prompt_tokens is not passage_tokens x copies")
    if sorted(doc["spec_engine_counters"]) != sorted(p["configs"]):
        problems.append(f"engine counters for {sorted(doc['spec_engine_counters'])}")
    problems += lab.cache_problems(doc)
    total = sum(want.values())
    return lab.verdict(
        "completeness",
        problems,
        f"{total} of {total} requests, exact prompt and new tokens, a counters row per call, "
        "no prefix-cache hits",
    )


def counter_problems(row: dict, gamma: int, where: str) -> list[str]:
    """What vLLM's counters must satisfy: at most gamma drafts per drafting step, accepted
    within drafted, the per-position counts add up and never grow with the position."""
    per_pos = row["accepted_per_pos"]
    problems = []
    if len(per_pos) != gamma:
        problems.append(f"{where}: {len(per_pos)} positions, not gamma {gamma}")
    if not row["num_accepted_tokens"] <= row["num_draft_tokens"] <= gamma * row["num_drafts"]:
        problems.append(f"{where}: not accepted <= draft tokens <= gamma x drafts ({row})")
    if sum(per_pos) != row["num_accepted_tokens"]:
        problems.append(f"{where}: per position adds to {sum(per_pos)}, accepted {row}")
    if any(b > a for a, b in pairwise(per_pos)):
        problems.append(f"{where}: a later position accepted more often: {per_pos}")
    return problems


def spec_counters_claim(doc: dict) -> Check:
    """The recorded deltas are the engine's counters: per configuration they add up to the totals
    the engine reported at the end; no drafts without speculation, some with it."""
    name = "recorded counters equal the engine's"
    p = doc["parameters"]
    gamma = p["gamma"]
    problems = []
    for config in p["configs"]:
        mine = [s for s in doc["speculation"] if s["config"] == config]
        total = doc["spec_engine_counters"][config]
        for s in mine:
            problems += counter_problems(s, gamma, f"{config} {s['phase']} B={s['batch']}")
        problems += counter_problems(total, gamma, f"{config} engine totals")
        summed = {k: sum(s[k] for s in mine) for k in COUNTER_KEYS}
        columns = zip(*(s["accepted_per_pos"] for s in mine), strict=True)
        summed["accepted_per_pos"] = [sum(col) for col in columns]
        if mine and summed != total:
            problems.append(f"{config}: the calls add up to {summed}, the engine says {total}")
        drafted = total["num_drafts"]
        if config == "off" and drafted:
            problems.append(f"off: {drafted} drafts without speculation")
        if config == "ngram" and not drafted:
            problems.append("ngram: no step drafted (did the lookup never match?)")
    configs = " and ".join(p["configs"])
    return lab.verdict(name, problems, f"every call's deltas add up to the totals ({configs})", 3)


def spec_tpot(doc: dict, config: str, batch: int) -> float | None:
    rows = [
        s["tpot_s"]
        for s in doc["speculation"]
        if (s["config"], s["batch"], s["phase"]) == (config, batch, "measured")
    ]
    return statistics.median(rows) if rows else None


def claim_pays_at_batch_one(doc: dict) -> Check:
    """The lesson: while decode is memory-bound, speculation lowers TPOT."""
    name = "speculation lowers TPOT at the smallest batch"
    b = min(doc["parameters"]["batches"])
    off, on = spec_tpot(doc, "off", b), spec_tpot(doc, "ngram", b)
    if off is None or on is None:
        return Check("SKIP", name, "needs both configurations")
    detail = f"B={b}: off {lab.ms(off)}, ngram {lab.ms(on)}, x{off / on:.2f}"
    return Check("PASS" if on < off else "FAIL", name, detail)


def claim_above_floor(doc: dict) -> Check:
    """Every median TPOT at or above its floor: the plain step's bound, over the mean acceptance
    length with speculation."""
    from core.lab_results import gpu_and_model
    from speculative_decoding.lab_results import pooled, summaries, tpot_floor_s

    name = "every TPOT at or above its floor"
    known = gpu_and_model(doc)
    if known is None:
        return Check("SKIP", name, lab.NOT_IN_CORE)
    gpu, resolved = known
    p = doc["parameters"]
    below, n = [], 0
    for config in p["configs"]:
        for b in p["batches"]:
            acc = pooled(summaries(doc, config, b))
            floor = tpot_floor_s(
                gpu, *resolved, batch=b, prompt=p["prompt_tokens"], new=p["new_tokens"],
                mean_length=acc.mean_length if acc else 1.0,
            )  # fmt: skip
            tpot = spec_tpot(doc, config, b)
            n += 1
            if tpot < floor:
                below.append(f"{config} B={b}: {lab.ms(tpot)} < {lab.ms(floor)}")
    return lab.verdict(name, below, f"{n} medians on a {gpu.name}")


def claim_speedup_within_prediction(doc: dict) -> Check:
    """The measured speed-up (TPOT off / on) against the lesson's speed-up(B) at the measured
    alpha: a ratio of two best cases, so a real run may fall short of it but should not beat it
    by more than SPEEDUP_SLACK."""
    from core.lab_results import gpu_and_model
    from speculative_decoding.lab_results import pooled, predicted_speedup, summaries

    name = "measured speed-up within the lesson's prediction"
    known = gpu_and_model(doc)
    p = doc["parameters"]
    if known is None or set(p["configs"]) != {"off", "ngram"}:
        return Check("SKIP", name, "needs both configurations and a GPU and model in the core")
    gpu, resolved = known
    shown, over = [], []
    for b in p["batches"]:
        acc = pooled(summaries(doc, "ngram", b))
        if acc is None:
            over.append(f"B={b}: no drafts")
            continue
        predicted = predicted_speedup(
            gpu, *resolved, batch=b, prompt=p["prompt_tokens"], new=p["new_tokens"],
            alpha=acc.alpha(p["gamma"]), gamma=p["gamma"],
        )  # fmt: skip
        measured = spec_tpot(doc, "off", b) / spec_tpot(doc, "ngram", b)
        shown.append(f"B={b}: x{measured:.2f} vs x{predicted:.2f}")
        if measured > SPEEDUP_SLACK * predicted:
            over.append(shown[-1])
    detail = "; ".join(shown) + f" (at most x{SPEEDUP_SLACK:g} the prediction)"
    return lab.verdict(name, over, detail)


def spec_gpu_claims(doc: dict) -> list[Check]:
    return [
        claim_pays_at_batch_one(doc),
        claim_above_floor(doc),
        claim_speedup_within_prediction(doc),
    ]


CLAIMS = {
    LAB: Claims(
        lambda doc: [spec_completeness(doc), spec_counters_claim(doc)],
        spec_gpu_claims,
        "CPU run: its timings say nothing about a GPU's decode step, so only completeness and "
        "the counters are checked",
    ),
}


# ---------------------------------------------------------------- CPU smoke run
# The tiny config's random weights repeat themselves, so the n-gram lookup finds drafts and the
# target accepts some of them: the counters are not zero, and exactly what the engine reports.

GAMMA, BATCHES, PASSAGE, COPIES, NEW = 3, (1, 4), 16, 4, 24


def the_counters_add_up_to_what_the_engine_printed(run: SmokeRun) -> None:
    """The totals the lab printed (read from LLM.get_metrics() at the end) are the recorded
    ones, and the recorded calls add up to them."""
    doc = run.doc
    assert doc["parameters"]["configs"] == ["off", "ngram"]
    total = doc["spec_engine_counters"]["ngram"]
    printed = re.search(r"engine counters at the end \(ngram\): (\{.*\})", run.stdout)
    assert printed and printed[1] == str(total), run.stdout
    assert total["num_drafts"] > 0 and total["num_accepted_tokens"] > 0, total
    assert len(total["accepted_per_pos"]) == GAMMA
    for key in ("num_drafts", "num_draft_tokens", "num_accepted_tokens"):
        calls = [s[key] for s in doc["speculation"] if s["config"] == "ngram"]
        assert sum(calls) == total[key], (key, calls, total)
    assert all(v in (0, [0] * GAMMA) for v in doc["spec_engine_counters"]["off"].values())


def every_request_has_its_exact_tokens(run: SmokeRun) -> None:
    doc = run.doc
    by_key = Counter((m["series"], m["label"]) for m in doc["measurements"])
    assert by_key == {(f"spec_{c}", f"batch {b}"): b for c in ("off", "ngram") for b in BATCHES}
    assert all(m["prompt_tokens"] == PASSAGE * COPIES for m in doc["measurements"])
    assert all(m["new_tokens"] == NEW for m in doc["measurements"])


SMOKE = (
    Smoke(
        "ngram_lookup.py",
        f"--config tiny --gamma {GAMMA} --lookup-min 2 --lookup-max 4 "
        f"--batches {','.join(map(str, BATCHES))} --passage-tokens {PASSAGE} --copies {COPIES} "
        f"--new-tokens {NEW} --repeats 1",
        (the_counters_add_up_to_what_the_engine_printed, every_request_has_its_exact_tokens),
        ("completeness", "recorded counters equal the engine's"),
    ),
)
