"""Check the lessons' claims against lab results (prefill/decode, batch sweep, max_num_seqs sweep,
KV capacity, prefix caching, KV connector, chunked prefill, load test).

  python scripts/verify_labs.py FILE...          check results files written by the labs
  python scripts/verify_labs.py --run [--lab-args="--dummy"] [--sweep-args="--repeats 5"]
                                     run every lab first (this Python): labs/<slug>/*.py of each
                                     lesson in docs/lessons.yml, in reading order
Write --lab-args=VALUE with "=": a separate value that starts with "-" is taken for an option.

Every file: valid against labs/results/schema.json, and complete (every requested call present,
exactly the requested prompt and new tokens, no prefix-cache hits). Runs on a GPU (device.kind
"cuda") also: the lesson's timing claims, and agreement within --tolerance with a recorded run in
labs/results/<gpu>/ of the same lab, GPU, model, weight format, vLLM version and driver major,
on the quantities the lesson claims (TPOT medians, TTFT at long prompts). A CPU run's timings
say nothing about a GPU, so for CPU runs only structure and completeness are checked, and the
report says so.
batch_sweep runs (labs/batched_decode/batch_sweep.py), on a GPU: the full batch's decode step was
measured (every short call overlapped, the difference positive), output throughput grows with the
batch (each step >= THROUGHPUT_STEP_SLACK x the previous, x THROUGHPUT_GAIN overall), the decode
step stays nearly flat up to SMALL_BATCH, and every decode step is above the lesson's bound for
its configuration.
max_num_seqs runs (labs/continuous_batching/max_num_seqs.py), on a GPU: the larger limit serves
the same stream with more output throughput and a lower median TTFT.
kv_capacity runs (labs/paged_attention/kv_capacity.py) are deterministic, so they are checked on
CPU too: every explicit setting's engine figures equal the estimate, and the start-up figures
follow from the block count by vLLM's formula. prefix_cache runs (labs/prefix_caching/
prefix_cache.py): the tokens each request reuses equal the lesson's cached_tokens() on any device;
on a GPU, repeat requests' median TTFT must be lower with the cache on. kv_connector runs
(labs/pd_disaggregation/kv_connector.py) on any device: the consumer loaded exactly the tokens the
ExampleConnector's rule predicts, the KV on disk is kappa x the stored tokens, and the consumer's
greedy tokens equal the producer's; on a GPU, the consumer's TTFT at the longest prompt is lower.
chunked_prefill runs
(labs/chunked_prefill/long_prompt.py): every setting present, every request's exact output
length and no preemption on any device; on a GPU, every budget with chunking on must give the
running decodes a shorter worst ITL during the long prefill than chunking off. load_test runs
(labs/load_testing/poisson_load.py): every rate served its requests with exactly the requested
tokens, and each rate's summary equals what snippets/latency_metrics/metrics.py computes from the
recorded chunk times (on any device); on a GPU, p99 TTFT grows from the lowest rate to the highest
and goodput never exceeds request throughput. Load tests are not compared with a recorded run.
Exit status 1 when any check fails.
"""

import argparse
import json
import shlex
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import jsonschema

import labkit  # the labs' toolkit (labs/labkit.py, installed editable): no vLLM import at load
from latency_metrics.metrics import StreamedRequest, goodput, percentile, summarize

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "labs" / "results"
SCHEMA = RESULTS / "schema.json"

# The lesson's claims, as thresholds a GPU run must meet.
TTFT_GROWTH = 2.0  # TTFT at the longest prompt >= 2x TTFT at the shortest
TTFT_STEP_SLACK = 0.9  # each longer prompt's TTFT >= 0.9x the previous one (noise at short prompts)
TPOT_FLAT = 1.5  # max / min time per output token across prompt (or output) lengths
LINEAR_R2 = 0.99  # wall time against new tokens: R^2 of a straight line
PHASES_SLOPE_MATCH = 0.5  # phases: wall-time slope within 50 % of the measured time per token
DEFAULT_TOLERANCE = 0.30  # against a recorded run: each compared median within +-30 %
# TTFT is compared at prompts this long or longer only: below, a few ms of host-CPU work (which
# varies from machine to machine) is a large share of it; phases.py's long prompt is 2000 tokens.
LONG_PROMPT = 2000
# batch_sweep (labs/batched_decode): the batched-decode lesson's claims
THROUGHPUT_STEP_SLACK = 0.9  # each larger batch's output throughput >= 0.9x the previous one
THROUGHPUT_GAIN = 8.0  # largest vs smallest batch: >= x8 (or half the batch ratio if smaller)
SMALL_BATCH = 8  # up to this batch size the weights dominate the bytes of a step
SMALL_BATCH_TPOT_FLAT = 1.5  # max / min TPOT for batches up to SMALL_BATCH
PROFILED_KV_TOLERANCE = 0.25  # kv_capacity: the assumed-reserve estimate within 25 % of vLLM


@dataclass(frozen=True)
class Check:
    status: str  # PASS, FAIL or SKIP
    name: str
    detail: str


# ---------------------------------------------------------------- structure


def schema_errors(doc: object) -> list[str]:
    """'field.path: message' for every violation of labs/results/schema.json."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [f"{_path(e.absolute_path)}: {e.message}" for e in errors]


def _path(parts) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
    return text.lstrip(".") or "(top level)"


def recorded_run_errors(doc: dict, path: Path) -> list[str]:
    """'field: message' for what a file in labs/results/<gpu>/ breaks: the schema, and more."""
    errors = schema_errors(doc)
    if errors:
        return errors
    if doc["device"]["kind"] != "cuda":
        errors.append(f"device.kind: {doc['device']['kind']!r}, a recorded run must be a GPU run")
    if path.parent.name != doc["device"]["slug"]:
        errors.append(f"device.slug: {doc['device']['slug']!r}, but the file is in {path.parent}")
    return errors


# ---------------------------------------------------------------- completeness


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


def request_problems(got: Counter, want: Counter, fields: str) -> list[str]:
    """Requests the parameters asked for that the run lacks, and ones nobody asked for."""
    if got == want:
        return []
    missing = list((want - got).elements())[:3]
    extra = list((got - want).elements())[:3]
    return [f"requests ({fields}) missing {missing}, extra {extra}"]


def cache_problems(doc: dict) -> list[str]:
    """The labs measure full prefills: any prefix-cache hit means a skewed TTFT."""
    cached = [i for i, m in enumerate(doc["measurements"]) if m["cached_tokens"]]
    return [f"prefix-cache hits in measurements{cached[:3]}"] if cached else []


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
    problems += request_problems(got, want, "label, prompt, new, repeat")
    summaries = Counter((s["batch"], s["repeat"]) for s in doc["batch_summaries"])
    wanted = Counter((b, r) for r in range(p["repeats"]) for b in p["batches"])
    if summaries != wanted:
        problems.append(f"batch_summaries: {sorted(summaries)} instead of {sorted(wanted)}")
    if max(p["batches"]) > p["max_num_seqs"]:
        problems.append(f"max_num_seqs {p['max_num_seqs']} < largest batch {max(p['batches'])}")
    problems += cache_problems(doc)
    if problems:
        return Check("FAIL", "completeness", "; ".join(problems))
    total = sum(want.values())
    return Check(
        "PASS",
        "completeness",
        f"{total} of {total} requests in {len(wanted)} batches, exact prompt and new tokens, "
        "no prefix-cache hits",
    )


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
    problems += request_problems(got, want, "label, prompt, new")
    served = sorted(s["max_num_seqs"] for s in doc["max_num_seqs_summaries"])
    if served != sorted(p["values"]):
        problems.append(f"max_num_seqs_summaries for {served}, parameters ask for {p['values']}")
    problems += cache_problems(doc)
    if problems:
        return Check("FAIL", "completeness", "; ".join(problems))
    total = sum(want.values())
    return Check(
        "PASS",
        "completeness",
        f"{total} of {total} requests over {len(p['values'])} max_num_seqs values, exact "
        "output lengths, no prefix-cache hits",
    )


def completeness(doc: dict) -> Check:
    if doc["lab"] == "batch_sweep":
        return batch_completeness(doc)
    if doc["lab"] == "max_num_seqs":
        return max_num_seqs_completeness(doc)
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
    problems += cache_problems(doc)
    for i, m in enumerate(doc["measurements"]):
        if m["prefill_s"] > m["ttft_s"] + 1e-3:
            problems.append(f"measurements[{i}]: prefill_s > ttft_s")
    if problems:
        return Check("FAIL", "completeness", "; ".join(problems))
    return Check(
        "PASS",
        "completeness",
        f"{len(want)} of {len(want)} calls, exact prompt and new tokens, no prefix-cache hits",
    )


# ---------------------------------------------------------------- kv_capacity (deterministic)


def capacity_completeness(doc: dict) -> Check:
    want = [s["label"] for s in doc["parameters"]["settings"]]
    got = [r["label"] for r in doc["measurements"]]
    missing = [label for label in want if label not in got]
    extra = [label for label in got if label not in want]
    if missing or extra:
        return Check("FAIL", "completeness", f"missing {missing[:3]}, not requested {extra[:3]}")
    return Check("PASS", "completeness", f"{len(want)} of {len(want)} settings")


def engine_formula(row: dict) -> tuple[int, float]:
    """vLLM 0.26.0's start-up figures from its block count (v1/core/kv_cache_utils.py)."""
    concurrency = row["num_gpu_blocks"] / -(-row["max_model_len"] // row["block_size"])
    return int(concurrency * row["max_model_len"]), concurrency


def capacity_claims(doc: dict) -> list[Check]:
    rows = doc["measurements"]
    off = [
        r["label"]
        for r in rows
        if (r["kv_cache_tokens"], r["max_concurrency"]) != engine_formula(r)
    ]
    checks = [
        Check(
            "FAIL" if off else "PASS",
            "start-up figures follow from the block count",
            f"not by vLLM's formula: {off}" if off else f"{len(rows)} row(s)",
        )
    ]
    exact = [r for r in rows if r["exact"]]
    wrong = [
        f"{r['label']}: engine {r['num_gpu_blocks']} blocks, estimate {r['estimate_num_blocks']}"
        for r in exact
        if (r["num_gpu_blocks"], r["kv_cache_tokens"], r["max_concurrency"])
        != (r["estimate_num_blocks"], r["estimate_tokens"], r["estimate_concurrency"])
    ]
    name = "estimate equals the engine for every kv_cache_memory_bytes setting"
    if not exact:
        checks.append(Check("SKIP", name, "no kv_cache_memory_bytes setting"))
    else:
        detail = (
            "; ".join(wrong) if wrong else f"{len(exact)} setting(s), blocks/tokens/concurrency"
        )
        checks.append(Check("FAIL" if wrong else "PASS", name, detail))
    profiled = [r for r in rows if not r["exact"]]
    name = f"assumed-reserve estimate within {PROFILED_KV_TOLERANCE:.0%} of a profiled engine"
    if not profiled:
        checks.append(Check("SKIP", name, "no gpu_memory_utilization setting (CPU run?)"))
    else:
        errors = {r["label"]: r["estimate_tokens"] / r["kv_cache_tokens"] - 1 for r in profiled}
        far = {k: v for k, v in errors.items() if abs(v) > PROFILED_KV_TOLERANCE}
        shown = "; ".join(f"{k}: {v:+.1%}" for k, v in errors.items())
        checks.append(Check("FAIL" if far else "PASS", name, shown))
    return checks


# ---------------------------------------------------------------- prefix_cache


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
    return Check("PASS" if b < a else "FAIL", name, f"median off {ms(a)}, on {ms(b)}, x{a / b:.1f}")


# ---------------------------------------------------------------- kv_connector


def connector_completeness(doc: dict) -> Check:
    p = doc["parameters"]
    want = [(role, n) for role in ("kv_producer", "kv_consumer") for n in p["prompt_lens"]]
    got = [(m["series"], m["prompt_tokens"]) for m in doc["measurements"]]
    wrong = [m["label"] for m in doc["measurements"] if m["new_tokens"] != p["new_tokens"]]
    handed = [h["prompt_tokens"] for h in doc["handoffs"]]
    if got != want or wrong or handed != p["prompt_lens"]:
        detail = f"requests {got} vs planned {want}; wrong new tokens: {wrong}; handoffs {handed}"
        return Check("FAIL", "completeness", detail)
    return Check("PASS", "completeness", f"{len(want)} requests, exact prompt and new tokens")


def connector_claims(doc: dict) -> list[Check]:
    from pd_disaggregation.example_connector import (
        loaded_tokens,
        stored_tokens,
    )  # the lesson's rule

    block = doc["parameters"]["block_size"]
    kappa = doc["model"]["kv_bytes_per_token"]
    loads, stores, same = [], [], []
    for h in doc["handoffs"]:
        n = h["prompt_tokens"]
        if h["loaded_tokens"] != loaded_tokens(n, block):
            loads.append(f"prompt {n}: loaded {h['loaded_tokens']} != {loaded_tokens(n, block)}")
        if h["stored_tokens"] != stored_tokens(n, block):
            stores.append(f"prompt {n}: stored {h['stored_tokens']} != {stored_tokens(n, block)}")
        elif kappa is not None and h["stored_bytes"] != kappa * h["stored_tokens"]:
            stores.append(
                f"prompt {n}: {h['stored_bytes']} B != kappa {kappa} x {h['stored_tokens']}"
            )
        if not h["tokens_match"]:
            same.append(f"prompt {n}")
    producer_hits = [
        m["label"]
        for m in doc["measurements"]
        if m["series"] == "kv_producer" and m["cached_tokens"]
    ]
    hits = doc["connector_counters"].get("external_prefix_cache_hits")
    total = sum(h["loaded_tokens"] for h in doc["handoffs"])
    if hits != total:
        loads.append(f"engine counter external_prefix_cache_hits {hits} != {total} loaded")
    if producer_hits:
        loads.append(f"the producer reports cached tokens: {producer_hits}")
    name_load = "consumer loaded the tokens the connector's rule predicts"
    name_store = "KV on disk is kappa x stored tokens"
    name_same = "consumer's tokens equal the producer's"
    return [
        Check("FAIL" if loads else "PASS", name_load, "; ".join(loads) or f"block size {block}"),
        Check(
            "FAIL" if stores else ("SKIP" if kappa is None else "PASS"),
            name_store,
            "; ".join(stores)
            or ("model unknown to the core" if kappa is None else f"kappa {kappa} B/token"),
        ),
        Check(
            "FAIL" if same else "PASS",
            name_same,
            "; ".join(same) or f"{len(doc['handoffs'])} prompts",
        ),
    ]


def connector_ttft_claim(doc: dict) -> Check:
    name = "consumer's TTFT below the producer's at the longest prompt"
    n = max(doc["parameters"]["prompt_lens"])
    ttft = {m["series"]: m["ttft_s"] for m in doc["measurements"] if m["prompt_tokens"] == n}
    loaded = next(h["loaded_tokens"] for h in doc["handoffs"] if h["prompt_tokens"] == n)
    if not loaded:
        return Check("SKIP", name, f"prompt {n}: nothing loaded")
    a, b = ttft["kv_producer"], ttft["kv_consumer"]
    return Check("PASS" if b < a else "FAIL", name, f"producer {ms(a)}, consumer {ms(b)}")


# ---------------------------------------------------------------- chunked_prefill


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
    if problems:
        return Check("FAIL", "completeness", "; ".join(problems[:3]))
    return Check(
        "PASS",
        "completeness",
        f"{len(rows)} engines, exact output lengths, no preemption",
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
    shown = ", ".join(f"{r['label']}: {ms(r['itl_during_max_s'])}" for r in [*on, off[0]])
    return Check("FAIL" if higher else "PASS", name, shown)


# ---------------------------------------------------------------- timing claims (GPU runs)


def medians(doc: dict, series: str, by: str, field: str) -> dict[int, float]:
    groups: dict[int, list[float]] = defaultdict(list)
    for m in doc["measurements"]:
        if m["series"] == series and m[field] is not None:
            groups[m[by]].append(m[field])
    return {k: statistics.median(v) for k, v in sorted(groups.items())}


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def claim_ttft_grows(ttft: dict[int, float]) -> Check:
    name = "TTFT grows with prompt length"
    lens = list(ttft)
    shown = ", ".join(f"{s}: {ms(t)}" for s, t in ttft.items())
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
    shown = ", ".join(f"{k}: {ms(v)}" for k, v in tpot.items())
    detail = f"max/min x{spread:.2f} (need <= x{TPOT_FLAT:g}); {shown}"
    return Check("PASS" if spread <= TPOT_FLAT else "FAIL", name, detail)


def claim_linear(walls: dict[int, float]) -> Check:
    name = "wall time grows linearly with new tokens"
    if len(walls) < 3:
        return Check("SKIP", name, "needs three output lengths")
    fit = labkit.linear_fit(list(walls), list(walls.values()))
    detail = (
        f"wall = {fit.intercept:.3f} s + {ms(fit.slope)} x tokens, R^2 = {fit.r2:.4f} "
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
        f"{ms(slope)} per token vs {ms(many['tpot_s'])} measured (need within "
        f"{PHASES_SLOPE_MATCH:.0%}); two points only: the sweep's R^2 is the stronger test"
    )
    checks.append(Check("PASS" if ok else "FAIL", name, detail))
    return checks


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
    shown = ", ".join(f"{b}: {ms(t)}" for b, t in small.items())
    ok = spread <= SMALL_BATCH_TPOT_FLAT
    detail = f"max/min x{spread:.2f} (need <= x{SMALL_BATCH_TPOT_FLAT:g}); {shown}"
    return Check("PASS" if ok else "FAIL", name, detail)


def claim_above_bound(doc: dict, tpot: dict[int, float]) -> Check:
    """Every measured TPOT at or above the lesson's lower bound for its batch (sanity of both)."""
    name = "every TPOT at or above its lower bound"
    from batched_decode.lab_results import step_bound_s
    from core.gpus import load_gpus
    from core.lab_results import gpu_for, model_for

    gpu = gpu_for(doc, load_gpus())
    resolved = model_for(doc) if gpu else None
    if resolved is None:
        return Check("SKIP", name, "GPU or model not in the course's core")
    below = []
    for b, t in tpot.items():
        bound = step_bound_s(doc, gpu, resolved, b)
        if t < bound:
            below.append(f"B={b}: {ms(t)} < {ms(bound)}")
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
        f"{ms(low['ttft_p50_s'])} at {low['max_num_seqs']}, "
        f"{ms(high['ttft_p50_s'])} at {high['max_num_seqs']}",
    )
    return [throughput, queueing]


def sweep_claims(doc: dict) -> list[Check]:
    return [
        claim_ttft_grows(medians(doc, "prompt_sweep", "prompt_tokens", "ttft_s")),
        claim_tpot_flat(medians(doc, "prompt_sweep", "prompt_tokens", "tpot_s"), "prompt"),
        claim_tpot_flat(medians(doc, "output_sweep", "new_tokens", "tpot_s"), "output"),
        claim_linear(medians(doc, "output_sweep", "new_tokens", "wall_s")),
    ]


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
    if problems:
        return Check("FAIL", "completeness", "; ".join(problems[:5]))
    return Check(
        "PASS",
        "completeness",
        f"{p['requests']} requests at each of {len(p['rates'])} rates, {p['output_tokens']} "
        "tokens each; summaries equal latency_metrics.metrics on the recorded chunk times",
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
        f"{ms(low['ttft_p99_s'])} at {low['rate']:g} req/s, "
        f"{ms(high['ttft_p99_s'])} at {high['rate']:g} req/s",
    )
    return [grows, bounded]


# ---------------------------------------------------------------- against a recorded run


KEY_FIELDS = ("lab", "GPU", "model", "weight format", "vLLM version", "driver major")
MATCHED_ON = ", ".join(KEY_FIELDS[:-1]) + " and " + KEY_FIELDS[-1]


def run_key(doc: dict) -> tuple:
    """What two runs must share for their timings to be compared (KEY_FIELDS)."""
    model, driver = doc["model"], doc["device"]["driver"] or ""
    return (
        doc["lab"],
        doc["device"]["name"],
        model["id"],
        labkit.weight_format(model["quantization"]) or model["quantization"],
        doc["software"]["vllm"],
        driver.split(".")[0],
    )


def differences(doc: dict, other: dict) -> str:
    """'vLLM version 0.27.0 vs 0.26.0': how another run's key differs from this one's."""
    pairs = zip(KEY_FIELDS, run_key(doc), run_key(other), strict=True)
    return ", ".join(f"{field} {a} vs {b}" for field, a, b in pairs if a != b)


def recorded_runs(results_dir: Path) -> list[tuple[Path, dict]]:
    """Valid recorded runs; tests/test_lab_results.py names the invalid ones."""
    runs = []
    for path in sorted(results_dir.glob("*/*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if not recorded_run_errors(doc, path):
            runs.append((path, doc))
    return runs


def claimed_medians(doc: dict) -> dict[tuple[str, str, str, int, int], float]:
    """Medians of what the lesson claims, per point: TPOT everywhere, TTFT at long prompts."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for m in doc["measurements"]:
        if m["tpot_s"] is not None:
            key = ("TPOT", m["series"], m["label"], m["prompt_tokens"], m["new_tokens"])
            groups[key].append(m["tpot_s"])
        if m["prompt_tokens"] >= LONG_PROMPT:
            key = ("TTFT", m["series"], m["label"], m["prompt_tokens"], m["new_tokens"])
            groups[key].append(m["ttft_s"])
    return {k: statistics.median(v) for k, v in groups.items()}


def describe_compared(keys: list[tuple[str, str, str, int, int]]) -> str:
    """'TPOT at 4 points (phases 3, ...), TTFT at prompts 2,000': which medians were compared."""
    parts = []
    for quantity in ("TPOT", "TTFT"):
        series = [k[1] for k in keys if k[0] == quantity]
        if quantity == "TTFT" and series:
            prompts = sorted({k[3] for k in keys if k[0] == quantity})
            parts.append(f"TTFT at prompts of {', '.join(f'{p:,}' for p in prompts)} tokens")
        elif series:
            counts = ", ".join(f"{s} {series.count(s)}" for s in dict.fromkeys(series))
            parts.append(f"TPOT at {len(series)} points ({counts})")
    return " and ".join(parts)


def against_recorded(doc: dict, runs: list[tuple[Path, dict]], tolerance: float) -> Check:
    name = f"within {tolerance:.0%} of the recorded run"
    same = [(p, d) for p, d in runs if run_key(d) == run_key(doc) and d is not doc]
    if not same:
        near = [(p, d) for p, d in runs if run_key(d)[:2] == run_key(doc)[:2] and d is not doc]
        shown = "; ".join(f"{p.name}: {differences(doc, d)}" for p, d in near[-3:])
        return Check(
            "SKIP",
            name,
            f"no recorded run with the same {MATCHED_ON}" + (f" ({shown})" if shown else ""),
        )
    path, recorded = max(same, key=lambda r: r[1]["date"])
    new, old = claimed_medians(doc), claimed_medians(recorded)
    keys = sorted(set(new) & set(old))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not keys:
        return Check("SKIP", name, f"no TPOT or long-prompt TTFT point in common with {where}")
    off = []
    # the label (e.g. "batch 4") names a point only where lengths alone do not tell points apart
    ambiguous = {k for k in keys if sum(k[:2] + k[3:] == j[:2] + j[3:] for j in keys) > 1}
    for key in keys:
        ratio = new[key] / old[key]
        if abs(ratio - 1) > tolerance:
            quantity, series, label, prompt, new_tokens = key
            point = f"{quantity} {series}" + (f" {label}" if key in ambiguous else "")
            off.append(f"{point} prompt {prompt} new {new_tokens}: x{ratio:.2f}")
    compared = f"compared {describe_compared(keys)} vs {where} (same {MATCHED_ON})"
    if off:
        return Check("FAIL", name, f"{compared}; off: " + "; ".join(off))
    return Check("PASS", name, compared)


# ---------------------------------------------------------------- report


def checks_for(doc: object, runs: list[tuple[Path, dict]], tolerance: float) -> list[Check]:
    errors = schema_errors(doc)
    if errors:
        return [Check("FAIL", "structure", "; ".join(errors[:5]))]
    checks = [Check("PASS", "structure", f"valid against {SCHEMA.relative_to(ROOT)}")]
    if doc["lab"] == "kv_capacity":
        return [*checks, capacity_completeness(doc), *capacity_claims(doc)]
    if doc["lab"] == "kv_connector":
        checks += [connector_completeness(doc), *connector_claims(doc)]
        if doc["device"]["kind"] != "cuda":
            reason = (
                "CPU run: a folder, not a link, carried the KV; its TTFT says nothing about a GPU"
            )
            return [*checks, Check("SKIP", "timing claims", reason)]
        return [*checks, connector_ttft_claim(doc)]
    if doc["lab"] == "chunked_prefill":
        checks.append(scene_completeness(doc))
        if doc["device"]["kind"] != "cuda":
            reason = "CPU run: its step times say nothing about a GPU's prefill and decode"
            return [*checks, Check("SKIP", "timing claims", reason)]
        return [*checks, scene_itl_claim(doc)]
    if doc["lab"] == "prefix_cache":
        checks += [prefix_completeness(doc), prefix_reuse_claim(doc)]
        if doc["device"]["kind"] != "cuda":
            reason = "CPU run: its TTFT says nothing about a GPU's prefill"
            return [*checks, Check("SKIP", "timing claims", reason)]
        return [*checks, prefix_ttft_claim(doc)]
    if doc["lab"] == "load_test":
        checks.append(load_completeness(doc))
        if doc["device"]["kind"] != "cuda":
            reason = "CPU run: its latencies say nothing about a GPU under load"
            return [*checks, Check("SKIP", "timing claims", reason)]
        return [*checks, *load_claims(doc)]
    checks.append(completeness(doc))
    if doc["device"]["kind"] != "cuda":
        reason = (
            "CPU run: its timings say nothing about a GPU's prefill and decode, so only "
            "structure and completeness are checked"
        )
        return [*checks, Check("SKIP", "timing claims", reason)]
    claims = {
        "phases": phases_claims,
        "sweep": sweep_claims,
        "batch_sweep": batch_claims,
        "max_num_seqs": max_num_seqs_claims,
    }
    checks += claims[doc["lab"]](doc)
    checks.append(against_recorded(doc, runs, tolerance))
    return checks


def check_file(path: Path, runs: list[tuple[Path, dict]], tolerance: float) -> list[Check]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        return [Check("FAIL", "structure", f"cannot read: {error}")]
    return checks_for(doc, runs, tolerance)


def describe(path: Path) -> str:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return (
            f"{d['lab']} · {d['device']['kind']} {d['device']['name']} · vLLM "
            f"{d['software']['vllm']} · {d['model']['id']} ({d['model']['load_format']})"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "unreadable"


def lab_scripts(manifest: Path = ROOT / "docs" / "lessons.yml") -> list[str]:
    """Every lab, as "<slug>/<name>": labs/<slug>/*.py of each lesson in the manifest, in order."""
    from coursesite.manifest import read_course  # pyyaml: in both environments

    return [
        f"{lesson.slug}/{script.stem}"
        for lesson in read_course(manifest).lessons
        for script in sorted((ROOT / "labs" / lesson.slug).glob("*.py"))
    ]


def run_labs(python: str, lab_args: dict[str, list[str]], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    outs = []
    for lab, args in lab_args.items():
        out = out_dir / f"{lab.replace('/', '-')}.json"
        cmd = [python, str(ROOT / "labs" / f"{lab}.py"), *args, "--out", str(out)]
        print("$", shlex.join(cmd), flush=True)
        if subprocess.run(cmd, cwd=ROOT).returncode != 0:
            sys.exit(f"verify_labs: labs/{lab}.py failed (see its output above)")
        outs.append(out)
    return outs


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="results JSON files to check")
    parser.add_argument("--run", action="store_true", help="run every lab first")
    parser.add_argument(
        "--lab-args", default="", help='extra arguments for every lab (--run): --lab-args="--dummy"'
    )
    parser.add_argument(
        "--sweep-args", default="", help='extra arguments for sweep.py: --sweep-args="--repeats 5"'
    )
    parser.add_argument("--out-dir", type=Path, default=None, help="where --run writes results")
    parser.add_argument("--results-dir", type=Path, default=RESULTS, help="recorded runs")
    parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE)
    opts = parser.parse_args(argv)
    if not opts.files and not opts.run:
        parser.error("give results files, or --run")
    return opts


def lab_arguments(opts: argparse.Namespace) -> dict[str, list[str]]:
    """Each lab's extra command-line arguments under --run ("<slug>/<name>" -> arguments)."""
    common = shlex.split(opts.lab_args)
    sweep = shlex.split(opts.sweep_args)
    return {lab: common + (sweep if lab == "prefill_decode/sweep" else []) for lab in lab_scripts()}


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    files = list(opts.files)
    if opts.run:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        out_dir = opts.out_dir or ROOT / ".cache" / "lab-results" / f"verify-{stamp}"
        files += run_labs(sys.executable, lab_arguments(opts), out_dir)

    runs = recorded_runs(opts.results_dir)
    print(
        f"verify_labs: {len(files)} results file(s), {len(runs)} recorded run(s) in "
        f"{opts.results_dir}; timing claims are checked on GPU runs only"
    )
    failed = 0
    for path in files:
        print(f"\n== {path}\n   {describe(path)}")
        for check in check_file(path, runs, opts.tolerance):
            failed += check.status == "FAIL"
            print(f"   {check.status:<4}  {check.name}: {check.detail}")
    print(f"\nresult: {'FAIL' if failed else 'PASS'} ({failed} failed check(s))")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
