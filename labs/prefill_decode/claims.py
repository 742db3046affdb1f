"""The prefill_decode lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

from itertools import pairwise

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

# The lesson's claims, as thresholds a GPU run must meet.
TTFT_GROWTH = 2.0  # TTFT at the longest prompt >= 2x TTFT at the shortest
TTFT_STEP_SLACK = 0.9  # each longer prompt's TTFT >= 0.9x the previous one (noise at short prompts)
TPOT_FLAT = 1.5  # max / min time per output token across prompt (or output) lengths
LINEAR_R2 = 0.99  # wall time against new tokens: R^2 of a straight line
PHASES_SLOPE_MATCH = 0.5  # phases: wall-time slope within 50 % of the measured time per token


def planned(doc: dict) -> list[tuple[str, int, int, int]]:
    """(series, prompt tokens, new tokens, repeat) of every call the parameters ask for."""
    p = doc["parameters"]
    if doc["lab"] == "phases":
        return [("phases", c["prompt_tokens"], c["new_tokens"], 0) for c in p["calls"]]
    return [
        key
        for r in range(p["repeats"])
        for key in [("prompt_sweep", s, p["context_new"], r) for s in p["prompt_lens"]]
        + [("output_sweep", p["short_prompt"], n, r) for n in p["output_lens"]]
    ]


def completeness(doc: dict) -> Check:
    got = [
        (m["series"], m["prompt_tokens"], m["new_tokens"], m["repeat"]) for m in doc["measurements"]
    ]
    want = planned(doc)
    problems = []
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    if missing:
        problems.append(f"missing (series, prompt, new, repeat): {missing[:3]}")
    if extra:
        problems.append(f"not requested (wrong token counts?): {extra[:3]}")
    problems += lab.cache_problems(doc)
    for i, m in enumerate(doc["measurements"]):
        if m["prefill_s"] > m["ttft_s"] + 1e-3:
            problems.append(f"measurements[{i}]: prefill_s > ttft_s")
    return lab.verdict(
        "completeness",
        problems,
        f"{len(want)} of {len(want)} calls, exact prompt and new tokens, no prefix-cache hits",
    )


def claim_ttft_grows(ttft: dict[int, float]) -> Check:
    name = "TTFT grows with prompt length"
    lens = list(ttft)
    shown = ", ".join(f"{s}: {lab.ms(t)}" for s, t in ttft.items())
    if len(lens) < 2:
        return Check("SKIP", name, "needs two prompt lengths")
    steps_ok = all(ttft[b] >= TTFT_STEP_SLACK * ttft[a] for a, b in pairwise(lens))
    growth = ttft[lens[-1]] / ttft[lens[0]]
    ok = steps_ok and growth >= TTFT_GROWTH
    rule = f"x{growth:.1f} from {lens[0]} to {lens[-1]} tokens (need >= x{TTFT_GROWTH:g})"
    return Check("PASS" if ok else "FAIL", name, f"{rule}; {shown}")


def claim_tpot_flat(tpot: dict[int, float], over: str) -> Check:
    name = f"time per output token nearly flat as the {over} grows"
    if len(tpot) < 2:
        return Check("SKIP", name, f"needs two {over}s")
    spread = max(tpot.values()) / min(tpot.values())
    shown = ", ".join(f"{k}: {lab.ms(v)}" for k, v in tpot.items())
    detail = f"max/min x{spread:.2f} (need <= x{TPOT_FLAT:g}); {shown}"
    return Check("PASS" if spread <= TPOT_FLAT else "FAIL", name, detail)


def claim_linear(walls: dict[int, float]) -> Check:
    name = "wall time grows linearly with new tokens"
    if len(walls) < 3:
        return Check("SKIP", name, "needs three output lengths")
    fit = lab.linear_fit(list(walls), list(walls.values()))
    detail = (
        f"wall = {fit.intercept:.3f} s + {lab.ms(fit.slope)} x tokens, R^2 = {fit.r2:.4f} "
        f"(need >= {LINEAR_R2})"
    )
    return Check("PASS" if fit.r2 >= LINEAR_R2 and fit.slope > 0 else "FAIL", name, detail)


def phases_claims(doc: dict) -> list[Check]:
    calls = doc["parameters"]["calls"]
    by_label = {m["label"]: m for m in doc["measurements"]}
    if len(calls) != 3 or calls[2]["new_tokens"] <= calls[0]["new_tokens"]:
        return [Check("SKIP", "timing claims", "not the seed's three calls")]
    short, long_, many = (by_label[c["label"]] for c in calls)
    by_prompt = lambda field: {m["prompt_tokens"]: m[field] for m in (short, long_)}  # noqa: E731
    checks = [claim_ttft_grows(by_prompt("ttft_s")), claim_tpot_flat(by_prompt("tpot_s"), "prompt")]
    name = "wall time grows linearly with new tokens"
    added = many["new_tokens"] - short["new_tokens"]
    slope = (many["wall_s"] - short["wall_s"]) / added
    ok = abs(slope / many["tpot_s"] - 1) <= PHASES_SLOPE_MATCH
    detail = (
        f"(wall {many['wall_s']:.3f} s - {short['wall_s']:.3f} s) / {added} tokens = "
        f"{lab.ms(slope)} per token vs {lab.ms(many['tpot_s'])} measured (need within "
        f"{PHASES_SLOPE_MATCH:.0%}); two points only: the sweep's R^2 is the stronger test"
    )
    checks.append(Check("PASS" if ok else "FAIL", name, detail))
    return checks


def sweep_claims(doc: dict) -> list[Check]:
    return [
        claim_ttft_grows(lab.medians(doc, "prompt_sweep", "prompt_tokens", "ttft_s")),
        claim_tpot_flat(lab.medians(doc, "prompt_sweep", "prompt_tokens", "tpot_s"), "prompt"),
        claim_tpot_flat(lab.medians(doc, "output_sweep", "new_tokens", "tpot_s"), "output"),
        claim_linear(lab.medians(doc, "output_sweep", "new_tokens", "wall_s")),
    ]


CPU_REASON = (
    "CPU run: its timings say nothing about a GPU's prefill and decode, so only "
    "structure and completeness are checked"
)
CLAIMS = {
    "phases": Claims(lambda doc: [completeness(doc)], phases_claims, CPU_REASON, True),
    "sweep": Claims(lambda doc: [completeness(doc)], sweep_claims, CPU_REASON, True),
}


# ---------------------------------------------------------------- CPU smoke runs


def phases_ran_the_three_calls(run: SmokeRun) -> None:
    rows = {line[:28].strip(): line.split() for line in run.stdout.splitlines()}
    assert "call" in rows, run.stdout
    for label, prompt, new in [
        ("short prompt, few new", "8", "8"),
        ("long prompt, few new", "2000", "8"),
        ("short prompt, many new", "8", "256"),
    ]:
        assert rows[label][-7:-5] == [prompt, new], run.stdout


def sweep_printed_both_tables_and_the_fit(run: SmokeRun) -> None:
    assert "prompt sweep: 32 new tokens per call, median of 2" in run.stdout
    assert "output sweep: 32-token prompt, median of 2" in run.stdout
    assert "R^2 = " in run.stdout


TINY = "--config tiny --max-model-len 2048"
SMOKE = (
    Smoke("phases.py", TINY, (phases_ran_the_three_calls,)),
    Smoke(
        "sweep.py",
        f"{TINY} --prompt-lens 16,256,1024 --output-lens 4,16,64 --repeats=2",
        (sweep_printed_both_tables_and_the_fit,),
    ),
)
