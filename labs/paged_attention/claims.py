"""The paged_attention lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

from labkit import Check, Claims, Smoke, SmokeRun

PROFILED_KV_TOLERANCE = 0.25  # kv_capacity: the assumed-reserve estimate within 25 % of vLLM


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


CLAIMS = {
    "kv_capacity": Claims(lambda doc: [capacity_completeness(doc), *capacity_claims(doc)]),
}


# ---------------------------------------------------------------- CPU smoke run

KV_BYTES = 8 * 2**20 + 12_345  # not whole pages: the floor divisions matter


def every_explicit_setting_matches_the_engine(run: SmokeRun) -> None:
    rows = run.doc["measurements"]
    assert [r["label"] for r in rows] == [s["label"] for s in run.doc["parameters"]["settings"]]
    assert len(rows) == 1 and all(r["exact"] for r in rows)
    for r in rows:
        assert r["num_gpu_blocks"] == r["estimate_num_blocks"] > 0, r
        assert r["kv_cache_tokens"] == r["estimate_tokens"], r
        assert r["max_concurrency"] == r["estimate_concurrency"], r
    assert run.stdout.count(" exact") == 1 and "MISMATCH" not in run.stdout


def the_engine_chose_its_block_size(run: SmokeRun) -> None:
    [auto] = run.doc["measurements"]
    assert auto["block_size"] == 128  # the CPU platform's default (platforms/cpu.py)
    # 2000 is no multiple of 128, so the tokens reported are concurrency x max_model_len, not
    # blocks x block size (tests/test_paged_attention.py covers other block sizes)
    assert auto["kv_cache_tokens"] != auto["num_gpu_blocks"] * auto["block_size"]


SMOKE = (
    Smoke(
        "kv_capacity.py",
        f"--config tiny --max-model-len 2000 --kv-cache-bytes {KV_BYTES} --block-sizes auto",
        (every_explicit_setting_matches_the_engine, the_engine_chose_its_block_size),
        (
            "estimate equals the engine for every kv_cache_memory_bytes setting",
            "start-up figures follow from the block count",
        ),
    ),
)
