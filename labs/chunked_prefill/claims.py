"""The chunked_prefill lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import math

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun


def scene_plan(doc: dict) -> list[tuple[int, bool]]:
    """(max_num_batched_tokens, chunking on) of every engine the parameters ask for."""
    p = doc["parameters"]
    plan = [(v, True) for v in p["values"]]
    return plan + ([(p["max_model_len"], False)] if p["unchunked"] else [])


def scene_completeness(doc: dict) -> Check:
    p = doc["parameters"]
    rows = doc["measurements"]
    got = sorted((r["max_num_batched_tokens"], r["enable_chunked_prefill"]) for r in rows)
    problems = []
    if got != sorted(scene_plan(doc)):
        problems.append(f"engines {got}, parameters ask for {sorted(scene_plan(doc))}")
    for r in rows:
        want = [p["decode_new_tokens"]] * p["decodes"]
        if r["decode_tokens_out"] != want or r["long_tokens_out"] != p["long_new_tokens"]:
            problems.append(
                f"{r['label']}: output lengths {r['decode_tokens_out']} and "
                f"{r['long_tokens_out']}, asked {want} and {p['long_new_tokens']}"
            )
        if r["long_prompt_tokens"] != p["long_prompt_tokens"] or r["decodes"] != p["decodes"]:
            problems.append(f"{r['label']}: not the scene the parameters describe")
        if r["preemptions"]:
            problems.append(f"{r['label']}: {r['preemptions']} preemption(s) (KV cache too small)")
    return lab.verdict(
        "completeness",
        problems,
        f"{len(rows)} engines, exact output lengths, no preemption",
        shown=3,
    )


def scene_itl_claim(doc: dict) -> Check:
    """Chunked prefill lowers the running decodes' worst ITL while a long prompt is prefilled."""
    name = "chunking lowers the decodes' worst ITL during the long prefill"
    rows = doc["measurements"]
    off = [r for r in rows if not r["enable_chunked_prefill"]]
    on = sorted((r for r in rows if r["enable_chunked_prefill"]), key=lambda r: r["label"])
    if not off or not on:
        return Check("SKIP", name, "needs a run with chunking off and one with it on")
    worst = off[0]["itl_during_max_s"]
    higher = [r["label"] for r in on if r["itl_during_max_s"] >= worst]
    shown = ", ".join(f"{r['label']}: {lab.ms(r['itl_during_max_s'])}" for r in [*on, off[0]])
    return Check("FAIL" if higher else "PASS", name, shown)


CLAIMS = {
    "chunked_prefill": Claims(
        lambda doc: [scene_completeness(doc)],
        lambda doc: [scene_itl_claim(doc)],
        "CPU run: its step times say nothing about a GPU's prefill and decode",
    ),
}


# ---------------------------------------------------------------- CPU smoke run

BUDGET, DECODES, LONG = 128, 4, 400


def both_engines_play_the_whole_scene(run: SmokeRun) -> None:
    assert "decodes running, then a" in run.stdout
    rows = {r["enable_chunked_prefill"]: r for r in run.doc["measurements"]}
    assert rows[True]["max_num_batched_tokens"] == BUDGET
    assert rows[False]["max_num_batched_tokens"] == run.doc["parameters"]["max_model_len"] >= LONG
    for row in rows.values():
        assert row["decode_tokens_out"] == [24] * DECODES and row["long_tokens_out"] == 4
        assert row["preemptions"] == 0
        assert row["long_ttft_s"] > 0 and row["itl_before_p50_s"] > 0


def the_chunked_prefill_spans_ceil_p_over_t_minus_d_steps(run: SmokeRun) -> None:
    """Exactly the lesson's count: the lab steps an in-process engine core synchronously, so no
    output of a step scheduled before the long prompt arrived is counted (5, not 4, before)."""
    rows = {r["enable_chunked_prefill"]: r for r in run.doc["measurements"]}
    assert rows[True]["prefill_steps"] == math.ceil(LONG / (BUDGET - DECODES))  # 400 / 124 -> 4
    assert rows[False]["prefill_steps"] == 1  # unchunked: the whole prompt in one step
    assert run.doc["parameters"]["async_scheduling"] is False


SMOKE = (
    Smoke(
        "long_prompt.py",
        f"--config tiny --values {BUDGET} --decodes {DECODES} --long-prompt {LONG} "
        "--decode-prompt 32 --decode-tokens 24 --warm-tokens 4 --long-tokens 4",
        (both_engines_play_the_whole_scene, the_chunked_prefill_spans_ceil_p_over_t_minus_d_steps),
    ),
)
