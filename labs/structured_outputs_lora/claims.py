"""The structured_outputs_lora lab's claims, checked by scripts/verify_labs.py; its smoke run."""

import json
import re
import statistics
from collections import Counter

import jsonschema

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

# the lesson's claim, as ratios to the plain batch (the page quotes them from the same module)
from structured_outputs_lora.lab_tolerances import CONSTRAINED_TPOT_RATIO, LORA_TPOT_RATIO

SERIES = ("plain", "json", "regex", "lora_mixed")
EXACT = ("plain", "lora_mixed")  # ignore_eos: exactly new_tokens each


def completeness(doc: dict) -> Check:
    p = doc["parameters"]
    got = Counter((m["series"], m["label"]) for m in doc["measurements"])
    want = Counter((s, f"request {i}") for s in SERIES for i in range(p["requests"]))
    problems = lab.request_problems(got, want, "series, label")
    problems += [
        f"{m['series']} {m['label']}: {m['new_tokens']} new tokens, not {p['new_tokens']}"
        for m in doc["measurements"]
        if m["series"] in EXACT and m["new_tokens"] != p["new_tokens"]
    ]
    problems += [
        f"{m['series']} {m['label']}: {m['new_tokens']} > max_tokens {p['structured_max_tokens']}"
        for m in doc["measurements"]
        if m["series"] not in EXACT and m["new_tokens"] > p["structured_max_tokens"]
    ]
    problems += [
        f"{m['series']} {m['label']}: prompt {m['prompt_tokens']}"
        for m in doc["measurements"]
        if m["prompt_tokens"] != p["prompt_tokens"]
    ]
    problems += lab.cache_problems(doc)
    passed = f"{sum(want.values())} requests in {len(SERIES)} scenes, exact token counts"
    return lab.verdict("completeness", problems, passed, 3)


def valid_output(series: str, text: str, schema: dict, regex: str) -> bool:
    """Checked again here from the text, not taken from the lab's own verdict."""
    if series == "regex":
        return re.fullmatch(regex, text) is not None
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def constraints_hold(doc: dict) -> Check:
    p = doc["parameters"]
    outputs = doc["structured_outputs"]["outputs"]
    problems = [
        f"{o['series']} {o['label']}: {o['text']!r} ({o['finish_reason']})"
        for o in outputs
        if not valid_output(o["series"], o["text"], p["json_schema"], p["regex"])
    ]
    counts = Counter(o["series"] for o in outputs)
    problems += [
        f"{series}: {counts[series]} outputs, not {p['requests']}"
        for series in ("json", "regex")
        if counts[series] != p["requests"]
    ]
    passed = f"{len(outputs)} outputs: JSON valid against the schema, regex matched whole"
    return lab.verdict("constrained outputs parse and match", problems, passed, 3)


def backend_chosen(doc: dict) -> Check:
    backends = doc["structured_outputs"]["backends"]
    configured = doc["parameters"]["structured_outputs_backend"]
    name = "backend: the engine's, recorded on every request"
    problems = [
        f"{k}: {v}, not [{configured!r}]" for k, v in sorted(backends.items()) if v != [configured]
    ]
    return lab.verdict(name, problems, f"json {backends['json']}, regex {backends['regex']}")


def mixed_lora_batch(doc: dict) -> Check:
    p = doc["parameters"]
    rows = doc["lora"]
    adapters = p["adapters"]
    want = [(f"request {i}", adapters[i % len(adapters)]) for i in range(p["requests"])]
    got = [(r["label"], r["adapter"]) for r in rows]
    problems = [] if got == want else [f"adapters {got[:3]}... vs planned {want[:3]}..."]
    problems += [
        f"{r['label']} ({r['adapter']}): {r['new_tokens']} tokens, not {p['new_tokens']}"
        for r in rows
        if r["new_tokens"] != p["new_tokens"]
    ]
    passed = f"{len(rows)} requests, {len(adapters)} adapters in one batch, exact tokens each"
    return lab.verdict("mixed LoRA batch: requested tokens per request", problems, passed, 3)


def median_tpot(doc: dict, series: str) -> float | None:
    tpot = [m["tpot_s"] for m in doc["measurements"] if m["series"] == series and m["tpot_s"]]
    return statistics.median(tpot) if tpot else None


def pace_claims(doc: dict) -> list[Check]:
    plain = median_tpot(doc, "plain")
    checks = []
    for series, ratio in (("json", CONSTRAINED_TPOT_RATIO), ("regex", CONSTRAINED_TPOT_RATIO),
                          ("lora_mixed", LORA_TPOT_RATIO)):  # fmt: skip
        name = f"{series} time per output token within {ratio}x of plain"
        got = median_tpot(doc, series)
        if plain is None or got is None:
            checks.append(Check("SKIP", name, "needs two or more tokens per request"))
            continue
        detail = f"median {lab.ms(got)} vs plain {lab.ms(plain)} (x{got / plain:.2f})"
        checks.append(Check("PASS" if got <= ratio * plain else "FAIL", name, detail))
    return checks


CLAIMS = {
    "structured_lora": Claims(
        lambda doc: [
            completeness(doc),
            constraints_hold(doc),
            backend_chosen(doc),
            mixed_lora_batch(doc),
        ],
        pace_claims,
        "CPU run: its times per token say nothing about a GPU's step",
    ),
}


# ---------------------------------------------------------------- CPU smoke run

REQUESTS, PROMPT, NEW_TOKENS, STRUCTURED_MAX = 4, 32, 16, 48


def every_scene_ran_in_one_engine(run: SmokeRun) -> None:
    series = Counter(m["series"] for m in run.doc["measurements"])
    assert series == Counter({s: REQUESTS for s in SERIES}), series
    assert run.stdout.count("engine start") == 1  # one engine for all four scenes


def constraints_hold_on_random_weights(run: SmokeRun) -> None:
    p = run.doc["parameters"]
    for o in run.doc["structured_outputs"]["outputs"]:
        assert valid_output(o["series"], o["text"], p["json_schema"], p["regex"]), o
        assert o["finish_reason"] == "stop", o  # the grammar ended it, not max_tokens


def both_adapters_served_in_one_batch(run: SmokeRun) -> None:
    rows = run.doc["lora"]
    assert {r["adapter"] for r in rows} == set(run.doc["parameters"]["adapters"])
    assert all(r["new_tokens"] == NEW_TOKENS for r in rows), rows


SMOKE = (
    Smoke(
        "structured_lora.py",
        f"--config tiny --requests {REQUESTS} --prompt {PROMPT} --new-tokens {NEW_TOKENS} "
        f"--structured-max-tokens {STRUCTURED_MAX}",
        (
            every_scene_ran_in_one_engine,
            constraints_hold_on_random_weights,
            both_adapters_served_in_one_batch,
        ),
        (
            "completeness",
            "constrained outputs parse and match",
            "backend: the engine's, recorded on every request",
            "mixed LoRA batch: requested tokens per request",
        ),
    ),
)
