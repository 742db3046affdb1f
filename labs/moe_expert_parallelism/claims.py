"""The moe_expert_parallelism lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import json
import statistics
from collections import Counter

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

MOE_ARCHITECTURES = {"Qwen3MoeForCausalLM", "Qwen2MoeForCausalLM"}  # the layouts core.moe counts
# GPU: the largest batch's TPOT at least this many times batch 1's, where the lesson's floor
# grows at least FLOOR_GROWTH times between them (more experts read); a dense model's would not
TPOT_GROWTH = 1.5
FLOOR_GROWTH = 2.0


def decode_completeness(doc: dict) -> Check:
    p = doc["parameters"]
    keys = [(b, r) for b in p["batches"] for r in range(p["repeats"])]
    calls = {f"batch {b}": b for b in p["batches"]}
    problems = lab.sweep_problems(doc, calls, "moe_summaries", ("batch", "repeat"), keys)
    total = sum(calls.values()) * p["repeats"]
    return lab.verdict(
        "completeness",
        problems,
        f"{total} of {total} requests in {len(keys)} batches, exact prompt and new tokens, "
        "no prefix-cache hits",
    )


def engine_runs_the_moe(doc: dict) -> Check:
    """vLLM built the model as an MoE with the config's experts and top-k (a dense build
    reports 0 experts), in one of the layouts whose parameters the core counts."""
    e = doc["moe_engine"]
    name = "the engine runs the config's experts (architecture, E, top-k)"
    problems = []
    if e["architecture"] not in MOE_ARCHITECTURES:
        problems.append(f"architecture {e['architecture']} not in {sorted(MOE_ARCHITECTURES)}")
    if (e["num_experts"], e["experts_per_token"]) != (
        e["config_num_experts"],
        e["config_experts_per_token"],
    ):
        problems.append(
            f"engine E={e['num_experts']}, k={e['experts_per_token']}; config "
            f"E={e['config_num_experts']}, k={e['config_experts_per_token']}"
        )
    return lab.verdict(
        name,
        problems,
        f"{e['architecture']}, E={e['num_experts']}, k={e['experts_per_token']}",
    )


def lesson_moe(doc: dict):
    """The run's MoE as the course's core reads it: a core model (by its key or Hugging Face
    repo) or a committed config (labs/configs/<id>/)."""
    from core.moe import MOE_MODELS_DIR, MoESpec, load_moe_model

    model_id = doc["model"]["id"]
    for path in sorted(MOE_MODELS_DIR.glob("*.json")):
        if model_id in (path.stem, json.loads(path.read_text(encoding="utf-8")).get("hf_repo")):
            return load_moe_model(path.stem)
    config = lab.LABS / "configs" / model_id / "config.json"
    if config.is_file():
        return MoESpec.from_config(json.loads(config.read_text(encoding="utf-8")), key=model_id)
    return None


def tpot_medians(doc: dict) -> dict[int, float]:
    groups: dict[int, list[float]] = {}
    for s in doc["moe_summaries"]:
        groups.setdefault(s["batch"], []).append(s["tpot_median_s"])
    return {b: statistics.median(v) for b, v in sorted(groups.items())}


def gpu_claims(doc: dict) -> list[Check]:
    """Against the lesson's floor (core.moe.moe_decode_bound at the first decode step's context):
    every TPOT at or above it, and TPOT rising with the batch where the floor does."""
    from core.gpus import load_gpus
    from core.lab_results import gpu_for
    from core.moe import moe_decode_bound

    above = "every median TPOT at or above the lesson's MoE floor"
    grows = f"TPOT grows with the batch where the floor does (>= x{TPOT_GROWTH:g})"
    gpu, moe = gpu_for(doc, load_gpus()), lesson_moe(doc)
    if gpu is None or moe is None:
        reason = lab.NOT_IN_CORE
        return [Check("SKIP", above, reason), Check("SKIP", grows, reason)]
    context = doc["parameters"]["prompt_tokens"]
    tpot = tpot_medians(doc)
    floor = {b: moe_decode_bound(gpu, moe, b, context).seconds for b in tpot}
    below = [f"B={b}: {lab.ms(t)} < {lab.ms(floor[b])}" for b, t in tpot.items() if t < floor[b]]
    shown = ", ".join(f"B={b}: {lab.ms(t)} >= {lab.ms(floor[b])}" for b, t in tpot.items())
    checks = [lab.verdict(above, below, f"{gpu.name}; {shown}")]
    small, large = min(tpot), max(tpot)
    floor_x, tpot_x = floor[large] / floor[small], tpot[large] / tpot[small]
    if small == large or floor_x < FLOOR_GROWTH:
        detail = f"the floor grows only x{floor_x:.2f} from B={small} to B={large}"
        checks.append(Check("SKIP", grows, detail))
    else:
        detail = f"B={small} -> B={large}: TPOT x{tpot_x:.2f}, floor x{floor_x:.2f}"
        checks.append(Check("PASS" if tpot_x >= TPOT_GROWTH else "FAIL", grows, detail))
    return checks


CLAIMS = {
    "moe_decode": Claims(
        lambda doc: [decode_completeness(doc), engine_runs_the_moe(doc)],
        gpu_claims,
        "CPU run: its TPOT says nothing about the bytes a GPU reads per step",
    ),
}


# ---------------------------------------------------------------- CPU smoke run: tiny Qwen3-MoE

BATCHES = (1, 2, 8)
PROMPT, NEW = 16, 8


def the_engine_built_the_tiny_moe(run: SmokeRun) -> None:
    e = run.doc["moe_engine"]
    assert (e["architecture"], e["num_experts"], e["experts_per_token"]) == (
        "Qwen3MoeForCausalLM",
        8,
        2,
    ), e
    assert run.doc["model"]["id"] == "tiny-qwen3-moe"


def exact_token_counts_in_every_batch(run: SmokeRun) -> None:
    by_label = Counter(m["label"] for m in run.doc["measurements"])
    assert by_label == {f"batch {b}": b for b in BATCHES}, by_label
    assert all(
        (m["prompt_tokens"], m["new_tokens"]) == (PROMPT, NEW) for m in run.doc["measurements"]
    )


def the_lessons_curve_is_printed_per_batch(run: SmokeRun) -> None:
    from core.moe import expected_distinct_experts  # the lesson's formula (snippets/core)

    rows = {
        int(line.split()[0]): float(line.split()[1])
        for line in run.stdout.splitlines()
        if line[:6].strip().isdigit()
    }
    assert rows == {b: round(expected_distinct_experts(8, 2, b), 2) for b in BATCHES}, rows


SMOKE = (
    Smoke(
        "moe_decode.py",
        f"--config tiny --batches {','.join(map(str, BATCHES))} --prompt-tokens {PROMPT} "
        f"--new-tokens {NEW} --repeats 1",
        (
            the_engine_built_the_tiny_moe,
            exact_token_counts_in_every_batch,
            the_lessons_curve_is_printed_per_batch,
        ),
        ("completeness", "the engine runs the config's experts (architecture, E, top-k)"),
    ),
)
