"""The tensor_parallelism lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import statistics
from collections import Counter

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

THROUGHPUT_GAIN = 2.0  # each TP size: the largest batch's output throughput >= x2 the smallest's


def sweep_completeness(doc: dict) -> Check:
    """B requests per (TP size, batch, repeat), each with exact token counts; one engine per TP
    size; no prefix-cache hits."""
    p = doc["parameters"]
    calls = {f"tp {t} batch {b}": b for t in p["tp_sizes"] for b in p["batches"]}
    keys = [(t, b, r) for t in p["tp_sizes"] for b in p["batches"] for r in range(p["repeats"])]
    problems = lab.sweep_problems(doc, calls, "tp_summaries", ("tp", "batch", "repeat"), keys)
    engines = [e["tp"] for e in doc["tp_engines"]]
    if engines != p["tp_sizes"]:
        problems.append(f"engines for TP {engines}, asked for {p['tp_sizes']}")
    total = sum(calls.values()) * p["repeats"]
    return lab.verdict(
        "completeness",
        problems,
        f"{total} of {total} requests, {len(p['tp_sizes'])} engine(s), exact prompt and new "
        "tokens, no prefix-cache hits",
    )


def engines_split_as_asked(doc: dict) -> Check:
    """Each engine says it ran t ways on vLLM's multiprocessing executor, t workers."""
    name = "each engine reports the tensor_parallel_size asked for, on the mp executor"
    off = [
        f"TP {e['tp']}: tensor_parallel_size {e['tensor_parallel_size']}, world size "
        f"{e['world_size']}, executor {e['distributed_executor_backend']!r}"
        for e in doc["tp_engines"]
        if (e["tensor_parallel_size"], e["world_size"]) != (e["tp"], e["tp"])
        or e["distributed_executor_backend"] != doc["parameters"]["distributed_executor_backend"]
    ]
    shown = ", ".join(str(e["tensor_parallel_size"]) for e in doc["tp_engines"])
    return lab.verdict(name, off, f"tensor_parallel_size {shown}")


def lesson_model(doc: dict):
    """The run's model as the course's core describes it: a known checkpoint, or the committed
    config.json a --dummy run loaded (labs/configs/<id>/)."""
    from core.lab_results import model_for

    known = model_for(doc)
    if known is not None:
        return known[0]
    folder = lab.LABS / "configs" / doc["model"]["id"]
    return lab.load_config(folder) if (folder / "config.json").is_file() else None


def kv_split_follows_the_lesson(doc: dict) -> list[Check]:
    """The lesson's KV-head rule (core.parallel.kv_heads_per_gpu: split while t <= KV heads, one
    replicated head each beyond) against what each engine reports; and, where the lab gave the
    engine its KV bytes (a CPU run), the KV blocks one worker holds: those bytes over block_size x
    the lesson's per-GPU kappa (kv_bytes_per_token_per_gpu)."""
    from core.parallel import kv_bytes_per_token_per_gpu, kv_heads_per_gpu

    heads_name = "KV heads per worker follow the lesson's split/replicate rule"
    blocks_name = "KV blocks per worker equal the bytes over the lesson's per-GPU kappa"
    model = lesson_model(doc)
    if model is None:
        reason = f"model {doc['model']['id']} not in the course's core"
        return [Check("SKIP", heads_name, reason), Check("SKIP", blocks_name, reason)]
    heads, blocks, sized = [], [], []
    for e in doc["tp_engines"]:
        want = kv_heads_per_gpu(model, e["tp"])
        if e["kv_heads_per_worker"] != want:
            heads.append(f"TP {e['tp']}: engine {e['kv_heads_per_worker']}, lesson {want}")
        if e["kv_cache_memory_bytes"] is None:
            continue  # a GPU engine sizes its cache from free memory: no exact figure to match
        sized.append(e["tp"])
        page = e["block_size"] * kv_bytes_per_token_per_gpu(model, e["tp"])
        expected = int(e["kv_cache_memory_bytes"] // page)
        if e["num_gpu_blocks"] != expected:
            blocks.append(f"TP {e['tp']}: engine {e['num_gpu_blocks']}, lesson {expected}")
    detail = ", ".join(f"TP {e['tp']}: {e['kv_heads_per_worker']}" for e in doc["tp_engines"])
    checks = [lab.verdict(heads_name, heads, f"{model.num_kv_heads} KV head(s); {detail}")]
    if not sized:
        checks.append(Check("SKIP", blocks_name, "vLLM sized the KV cache from free memory"))
    else:
        checks.append(lab.verdict(blocks_name, blocks, f"TP {sized}"))
    return checks


def medians(doc: dict, field: str) -> dict[tuple[int, int], float]:
    groups: dict[tuple[int, int], list[float]] = {}
    for s in doc["tp_summaries"]:
        groups.setdefault((s["tp"], s["batch"]), []).append(s[field])
    return {k: statistics.median(v) for k, v in sorted(groups.items())}


def floors(doc: dict) -> dict[tuple[int, int], object] | None:
    """The lesson's TPOT floor per (TP size, batch) on the run's GPU and link, with the
    bandwidth terms only (no assumed per-step latency, so a true lower bound) and the context of
    the first decode step (the smallest)."""
    from core.lab_results import gpu_and_model
    from core.links import load_link
    from core.parallel import tp_decode_step

    known = gpu_and_model(doc)
    if known is None:
        return None
    gpu, (model, fmt) = known
    p = doc["parameters"]
    link = load_link(p["link"])
    return {
        (t, b): tp_decode_step(
            gpu, model, t, link, fmt=fmt, batch=b, context=p["prompt_tokens"], step_latency_s=0.0
        )
        for t in p["tp_sizes"]
        for b in p["batches"]
    }


def tpot_above_floor(doc: dict) -> Check:
    name = "every median TPOT at or above the lesson's floor with communication"
    steps = floors(doc)
    if steps is None:
        return Check("SKIP", name, lab.NOT_IN_CORE)
    tpot = medians(doc, "tpot_median_s")
    below = [
        f"TP {t} B={b}: {lab.ms(v)} < {lab.ms(steps[t, b].seconds)}"
        for (t, b), v in tpot.items()
        if v < steps[t, b].seconds
    ]
    shown = ", ".join(
        f"TP {t} B={b}: {lab.ms(v)} >= {lab.ms(steps[t, b].seconds)}" for (t, b), v in tpot.items()
    )
    return lab.verdict(name, below, f"link {doc['parameters']['link']}; {shown}")


def throughput_grows_with_batch(doc: dict) -> Check:
    name = f"each TP size: output throughput at the largest batch >= x{THROUGHPUT_GAIN:g} batch 1"
    tps = medians(doc, "output_tokens_per_s")
    batches = doc["parameters"]["batches"]
    if len(batches) < 2:
        return Check("SKIP", name, "needs two batch sizes")
    small, large = batches[0], batches[-1]
    need = min(THROUGHPUT_GAIN, large / small / 2)
    off = [
        f"TP {t}: x{tps[t, large] / tps[t, small]:.1f}"
        for t in doc["parameters"]["tp_sizes"]
        if tps[t, large] < need * tps[t, small]
    ]
    shown = ", ".join(
        f"TP {t}: x{tps[t, large] / tps[t, small]:.1f}" for t in doc["parameters"]["tp_sizes"]
    )
    return lab.verdict(name, off, shown)


CLAIMS = {
    "tp_sweep": Claims(
        lambda doc: [
            sweep_completeness(doc),
            engines_split_as_asked(doc),
            *kv_split_follows_the_lesson(doc),
        ],
        lambda doc: [tpot_above_floor(doc), throughput_grows_with_batch(doc)],
        "CPU run: shared memory between CPU workers says nothing about NVLink or PCIe between GPUs",
    ),
}


# ---------------------------------------------------------------- CPU smoke run: TP = 2 on gloo

BATCHES = (1, 4)
PROMPT, NEW = 32, 8


def the_engine_ran_two_ways_on_the_mp_executor(run: SmokeRun) -> None:
    [engine] = run.doc["tp_engines"]
    assert engine["tensor_parallel_size"] == 2 and engine["world_size"] == 2, engine
    assert engine["distributed_executor_backend"] == "mp", engine
    assert "engine TP=2: tensor_parallel_size 2, executor mp" in run.stdout, run.stdout


def exact_token_counts_in_every_batch(run: SmokeRun) -> None:
    by_label = Counter(m["label"] for m in run.doc["measurements"])
    assert by_label == {f"tp 2 batch {b}": b for b in BATCHES}, by_label
    assert all(
        (m["prompt_tokens"], m["new_tokens"]) == (PROMPT, NEW) for m in run.doc["measurements"]
    )
    assert [(s["tp"], s["batch"]) for s in run.doc["tp_summaries"]] == [(2, b) for b in BATCHES]


def the_single_kv_head_is_replicated_not_split(run: SmokeRun) -> None:
    # the tiny Qwen2 has one KV head: at TP = 2 each worker holds a copy (lesson: replication)
    [engine] = run.doc["tp_engines"]
    assert (engine["total_kv_heads"], engine["kv_heads_per_worker"]) == (1, 1), engine


def each_worker_is_bound_to_its_own_core(run: SmokeRun) -> None:
    assert "pre-flight: VLLM_CPU_OMP_THREADS_BIND=" in run.stdout, run.stdout


SMOKE = (
    Smoke(
        "tp_sweep.py",
        f"--config tiny --tp 2 --batches {','.join(map(str, BATCHES))} --prompt-tokens {PROMPT} "
        f"--new-tokens {NEW} --repeats 1",
        (
            the_engine_ran_two_ways_on_the_mp_executor,
            exact_token_counts_in_every_batch,
            the_single_kv_head_is_replicated_not_split,
            each_worker_is_bound_to_its_own_core,
        ),
        (
            "completeness",
            "each engine reports the tensor_parallel_size asked for, on the mp executor",
            "KV heads per worker follow the lesson's split/replicate rule",
            "KV blocks per worker equal the bytes over the lesson's per-GPU kappa",
        ),
    ),
)
