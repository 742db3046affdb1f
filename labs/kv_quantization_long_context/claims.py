"""The kv_quantization_long_context lab's claims (scripts/verify_labs.py); its CPU smoke run."""

import statistics
from collections import Counter

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

LAB = "kv_fp8"
PROFILED_KV_TOLERANCE = 0.25  # a profiled engine's tokens within 25 % of the course's estimate
PROFILED_RATIO_TOLERANCE = 0.10  # profiled: fp8 / auto tokens within 10 % of 2 (FlashInfer's
# workspace and the attention backend's own buffers differ between the two engines)


def capacity_by_dtype(doc: dict) -> dict[str, dict]:
    return {r["kv_cache_dtype"]: r for r in doc["kv_capacity"]}


def kv_completeness(doc: dict) -> Check:
    p = doc["parameters"]
    got = Counter(
        (m["label"], m["prompt_tokens"], m["new_tokens"], m["repeat"])
        for m in doc["measurements"]
        if m["series"] == "kv_context"
    )
    want = Counter(
        (f"{d} context", s, p["new_tokens"], r)
        for d in p["kv_dtypes"]
        for r in range(p["repeats"])
        for s in p["contexts"]
    )
    problems = lab.request_problems(got, want, "label, prompt, new, repeat")
    dtypes = [r["kv_cache_dtype"] for r in doc["kv_capacity"]]
    if dtypes != p["kv_dtypes"]:
        problems.append(f"kv_capacity rows {dtypes} instead of {p['kv_dtypes']}")
    resolved = [r for r in doc["kv_capacity"] if r["cache_dtype"] != r["kv_cache_dtype"]]
    if resolved:
        problems.append(f"the engine ran another cache dtype: {resolved[:2]}")
    problems += lab.cache_problems(doc)
    total = sum(want.values())
    return lab.verdict(
        "completeness",
        problems,
        f"{total} of {total} requests, {len(dtypes)} engine(s), exact prompt and new tokens",
    )


def claim_explicit_capacity_exact(doc: dict) -> Check:
    """With the KV cache's bytes given, the course's estimate equals the engine's figures."""
    name = "KV capacity equals the estimate for the given kv_cache_memory_bytes"
    rows = [r for r in doc["kv_capacity"] if r["kv_cache_memory_bytes"] is not None]
    if not rows:
        return Check("SKIP", name, "no kv_cache_memory_bytes given: vLLM profiled (a GPU run)")
    wrong = [
        f"{r['kv_cache_dtype']}: engine {r['num_gpu_blocks']} blocks / {r['kv_cache_tokens']} "
        f"tokens, estimate {r['estimate_num_blocks']} / {r['estimate_tokens']}"
        for r in rows
        if (r["num_gpu_blocks"], r["kv_cache_tokens"])
        != (r["estimate_num_blocks"], r["estimate_tokens"])
    ]
    shown = ", ".join(f"{r['kv_cache_dtype']} {r['kv_cache_tokens']:,} tokens" for r in rows)
    return lab.verdict(name, wrong, f"{shown} of {rows[0]['kv_cache_memory_bytes']:,} bytes")


def claim_fp8_doubles_capacity(doc: dict) -> Check:
    """Same bytes, half the bytes per token: twice the blocks (up to the last block's floor);
    with a profiled budget, about twice the tokens."""
    name = "fp8 KV holds twice the tokens of auto"
    by = capacity_by_dtype(doc)
    if set(by) != {"auto", "fp8"}:
        return Check("SKIP", name, "needs both kv_cache_dtype auto and fp8")
    auto, fp8 = by["auto"], by["fp8"]
    ratio = fp8["kv_cache_tokens"] / auto["kv_cache_tokens"]
    shown = f"{auto['kv_cache_tokens']:,} -> {fp8['kv_cache_tokens']:,} tokens (x{ratio:.3f})"
    if auto["kv_cache_memory_bytes"] is not None:  # the same explicit size for both engines
        a, f = auto["num_gpu_blocks"], fp8["num_gpu_blocks"]
        same_bytes = auto["kv_cache_memory_bytes"] == fp8["kv_cache_memory_bytes"]
        ok = same_bytes and 2 * a <= f <= 2 * a + 1
        return Check("PASS" if ok else "FAIL", name, f"{a:,} -> {f:,} blocks; {shown}")
    ok = abs(ratio - 2) <= 2 * PROFILED_RATIO_TOLERANCE
    return Check("PASS" if ok else "FAIL", name, f"{shown}, profiled (need x2 ± 10 %)")


def claim_profiled_capacity_near_estimate(doc: dict) -> Check:
    """A profiled engine's KV tokens within 25 % of the course's budget (assumed reserve)."""
    from core.lab_results import model_for
    from core.long_context import kv_value_bytes
    from core.memory import MemoryBudget
    from core.models import kv_bytes_per_token

    name = f"profiled KV tokens within {PROFILED_KV_TOLERANCE:.0%} of the course's estimate"
    rows = [r for r in doc["kv_capacity"] if r["kv_cache_memory_bytes"] is None]
    resolved = model_for(doc)
    if not rows or resolved is None:
        return Check("SKIP", name, "no profiled engine, or a model the course lacks")
    model, fmt = resolved
    from core.formats import resident_weight_bytes

    p = doc["parameters"]
    budget = MemoryBudget(doc["device"]["memory_bytes"], p["gpu_memory_utilization"])
    errors = {}
    for r in rows:
        kappa = kv_bytes_per_token(model, kv_value_bytes(r["kv_cache_dtype"]))
        estimate = budget.tokens(resident_weight_bytes(model, fmt), kappa)
        errors[r["kv_cache_dtype"]] = estimate / r["kv_cache_tokens"] - 1
    far = [f"{d}: {e:+.1%}" for d, e in errors.items() if abs(e) > PROFILED_KV_TOLERANCE]
    return lab.verdict(name, far, ", ".join(f"{d}: {e:+.1%}" for d, e in errors.items()))


def tpot_medians(doc: dict) -> dict[str, dict[int, float]]:
    groups: dict[str, dict[int, list[float]]] = {}
    for m in doc["measurements"]:
        dtype = m["label"].removesuffix(" context")
        groups.setdefault(dtype, {}).setdefault(m["prompt_tokens"], []).append(m["tpot_s"])
    return {d: {s: statistics.median(v) for s, v in sorted(g.items())} for d, g in groups.items()}


def claim_tpot_above_floor(doc: dict) -> Check:
    from core.lab_results import gpu_and_model
    from kv_quantization_long_context.lab_floors import tpot_floor_s

    name = "every median TPOT at or above its floor (context, KV dtype)"
    known = gpu_and_model(doc)
    if known is None:
        return Check("SKIP", name, lab.NOT_IN_CORE)
    gpu, (model, fmt) = known
    below, shown = [], []
    for dtype, by_context in tpot_medians(doc).items():
        for s, tpot in by_context.items():
            floor = tpot_floor_s(gpu, model, s, dtype, fmt)
            shown.append(f"{dtype} {s:,}: {lab.ms(tpot)} >= {lab.ms(floor)}")
            if tpot < floor:
                below.append(f"{dtype} context {s:,}: {lab.ms(tpot)} < {lab.ms(floor)}")
    return lab.verdict(name, below, f"on a {gpu.name}: " + "; ".join(shown))


def claim_tpot_grows_with_context(doc: dict) -> Check:
    """Each decode step reads the whole cache: the longest context's TPOT above the shortest's."""
    name = "TPOT grows with the context"
    flat = []
    for dtype, by_context in tpot_medians(doc).items():
        contexts = list(by_context)
        if len(contexts) >= 2 and by_context[contexts[-1]] <= by_context[contexts[0]]:
            flat.append(f"{dtype}: {lab.ms(by_context[contexts[-1]])} at {contexts[-1]:,}")
    shown = "; ".join(
        f"{d} {lab.ms(min(g.values()))} -> {lab.ms(max(g.values()))}"
        for d, g in tpot_medians(doc).items()
    )
    return lab.verdict(name, flat, shown)


def claim_fp8_faster_at_longest(doc: dict) -> Check:
    """At the longest context the KV is a large share of a step's bytes: halving it shows."""
    name = "fp8 KV's TPOT below auto's at the longest context"
    medians = tpot_medians(doc)
    if set(medians) != {"auto", "fp8"}:
        return Check("SKIP", name, "needs both kv_cache_dtype auto and fp8")
    longest = max(medians["auto"])
    auto, fp8 = medians["auto"][longest], medians["fp8"][longest]
    detail = f"context {longest:,}: auto {lab.ms(auto)}, fp8 {lab.ms(fp8)} (x{auto / fp8:.2f})"
    return Check("PASS" if fp8 < auto else "FAIL", name, detail)


CPU_REASON = (
    "CPU run: its timings say nothing about a GPU's decode, so only structure, completeness "
    "and the KV capacity are checked"
)
CLAIMS = {
    LAB: Claims(
        lambda doc: [
            kv_completeness(doc),
            claim_explicit_capacity_exact(doc),
            claim_fp8_doubles_capacity(doc),
            claim_profiled_capacity_near_estimate(doc),
        ],
        lambda doc: [
            claim_tpot_above_floor(doc),
            claim_tpot_grows_with_context(doc),
            claim_fp8_faster_at_longest(doc),
        ],
        CPU_REASON,
    )
}


# ---------------------------------------------------------------- CPU smoke run


def fp8_doubles_the_engines_capacity(run: SmokeRun) -> None:
    by = capacity_by_dtype(run.doc)
    auto, fp8 = by["auto"], by["fp8"]
    assert auto["kv_cache_memory_bytes"] == fp8["kv_cache_memory_bytes"] == 64 * 2**20
    assert fp8["cache_dtype"] == "fp8" and auto["cache_dtype"] == "auto"
    # the tiny model: 2 layers x 1 KV head x 64 x 2 (K and V) = 256 values a token, so a block
    # of 128 tokens is 64 KiB at 2 bytes a value and 32 KiB at 1 byte
    assert auto["block_size"] == fp8["block_size"] == 128  # the CPU platform's default
    assert auto["num_gpu_blocks"] == 64 * 2**20 // (128 * 256 * 2) == 1024, by
    assert fp8["num_gpu_blocks"] == 64 * 2**20 // (128 * 256 * 1) == 2048, by
    assert fp8["kv_cache_tokens"] == 2 * auto["kv_cache_tokens"], by
    assert "fp8 / auto KV tokens: x2.000" in run.stdout


def both_engines_decode_every_context(run: SmokeRun) -> None:
    rows = run.doc["measurements"]
    got = Counter((m["label"], m["prompt_tokens"], m["new_tokens"]) for m in rows)
    assert got == {(f"{d} context", s, 8): 1 for d in ("auto", "fp8") for s in (128, 512)}, got
    assert "pre-flight: fp8 KV on CPU: " in run.stdout


SMOKE = (
    Smoke(
        "kv_fp8.py",
        "--config tiny --contexts 128,512 --new-tokens 8 --repeats 1",
        (fp8_doubles_the_engines_capacity, both_engines_decode_every_context),
        (
            "completeness",
            "KV capacity equals the estimate for the given kv_cache_memory_bytes",
            "fp8 KV holds twice the tokens of auto",
        ),
    ),
)
