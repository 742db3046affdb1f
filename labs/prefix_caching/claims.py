"""The prefix_caching lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import statistics

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun


def prefix_plan(doc: dict) -> list[tuple[str, str, int]]:
    """(series, label, system prompt index) of every request the parameters ask for."""
    p = doc["parameters"]
    return [
        (series, f"system {k} question {r}", k)
        for series in ("prefix_cache_off", "prefix_cache_on")
        for r in range(p["requests"])
        for k in range(p["system_prompts"])
    ]


def prefix_completeness(doc: dict) -> Check:
    p = doc["parameters"]
    got = [(m["series"], m["label"]) for m in doc["measurements"]]
    want = [(series, label) for series, label, _ in prefix_plan(doc)]
    prompt = p["system_prompt_tokens"] + p["question_tokens"]
    wrong = [
        m["label"]
        for m in doc["measurements"]
        if (m["prompt_tokens"], m["new_tokens"]) != (prompt, p["new_tokens"])
    ]
    if got != want or wrong:
        detail = f"requests {got[:2]}... vs planned {want[:2]}...; wrong token counts: {wrong[:3]}"
        return Check("FAIL", "completeness", detail)
    return Check("PASS", "completeness", f"{len(want)} requests, exact prompt and new tokens")


def prefix_reuse_claim(doc: dict) -> Check:
    from prefix_caching.reuse import cached_tokens  # the lesson's formula (snippets/)

    p = doc["parameters"]
    prompt = p["system_prompt_tokens"] + p["question_tokens"]
    by_key = {(m["series"], m["label"]): m["cached_tokens"] for m in doc["measurements"]}
    off = []
    for series, label, _ in prefix_plan(doc):
        repeat = series == "prefix_cache_on" and not label.endswith(" question 0")
        shared = p["system_prompt_tokens"] if repeat else 0
        want = cached_tokens(shared, prompt, p["block_size"])
        if by_key.get((series, label)) != want:
            off.append(f"{series} {label}: {by_key.get((series, label))} != {want}")
    name = "tokens reused equal the lesson's cached_tokens()"
    if off:
        return Check("FAIL", name, "; ".join(off[:3]))
    return Check("PASS", name, f"{len(by_key)} requests, block size {p['block_size']}")


def prefix_ttft_claim(doc: dict) -> Check:
    name = "repeat requests' TTFT lower with the cache on"
    repeat = lambda series: [  # noqa: E731
        m["ttft_s"]
        for m in doc["measurements"]
        if m["series"] == series and not m["label"].endswith(" question 0")
    ]
    off, on = repeat("prefix_cache_off"), repeat("prefix_cache_on")
    if not off or not on:
        return Check("SKIP", name, "needs two requests per system prompt")
    a, b = statistics.median(off), statistics.median(on)
    return Check(
        "PASS" if b < a else "FAIL", name, f"median off {lab.ms(a)}, on {lab.ms(b)}, x{a / b:.1f}"
    )


CLAIMS = {
    "prefix_cache": Claims(
        lambda doc: [prefix_completeness(doc), prefix_reuse_claim(doc)],
        lambda doc: [prefix_ttft_claim(doc)],
        "CPU run: its TTFT says nothing about a GPU's prefill",
    ),
}


# ---------------------------------------------------------------- CPU smoke run

SYSTEM, QUESTION, REQUESTS = 300, 40, 3


def reuse_is_zero_when_reset_and_full_blocks_when_on(run: SmokeRun) -> None:
    from prefix_caching.reuse import cached_tokens  # the lesson's formula (snippets/)

    block = run.doc["parameters"]["block_size"]
    assert block == 128  # the CPU platform's default: 300 shared tokens -> 2 full blocks
    off = [m for m in run.doc["measurements"] if m["series"] == "prefix_cache_off"]
    on = [m for m in run.doc["measurements"] if m["series"] == "prefix_cache_on"]
    assert len(off) == len(on) == 2 * REQUESTS
    assert all(m["cached_tokens"] == 0 for m in off)
    for m in on:
        shared = 0 if m["label"].endswith(" question 0") else SYSTEM
        assert m["cached_tokens"] == cached_tokens(shared, SYSTEM + QUESTION, block), m
    assert sum(m["cached_tokens"] for m in on) > 0


def the_engine_counters_are_printed(run: SmokeRun) -> None:
    assert "vllm:prefix_cache_hits" in run.stdout and "vllm:prefix_cache_queries" in run.stdout


SMOKE = (
    Smoke(
        "prefix_cache.py",
        f"--config tiny --system-prompt {SYSTEM} --question {QUESTION} --requests {REQUESTS} "
        "--new-tokens 4",
        (reuse_is_zero_when_reset_and_full_blocks_when_on, the_engine_counters_are_printed),
        ("completeness", "tokens reused equal the lesson's cached_tokens()"),
    ),
)
