"""The kernels_cuda_graphs lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import re
import statistics
from collections import Counter

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

LAB = "cuda_graphs"


def lab_calls(p: dict) -> list[tuple[str, str, int, int]]:
    """(config, phase, batch, repeat) of every generate() call the parameters ask for."""
    warmups = [(c, "warmup", max(p["batches"]), 0) for c in p["configs"]]
    rounds = [(r, b) for r in range(p["repeats"]) for b in p["batches"]]
    return warmups + [(c, "measured", b, r) for c in p["configs"] for r, b in rounds]


def graphs_completeness(doc: dict) -> Check:
    """One engine per configuration; B requests per configuration, batch size and repeat, each
    with the exact token counts; one row per call (the warm-up's too)."""
    p = doc["parameters"]
    got = Counter(
        (m["series"], m["label"], m["prompt_tokens"], m["new_tokens"], m["repeat"])
        for m in doc["measurements"]
    )
    want = Counter(
        {
            (c, f"batch {b}", p["prompt_tokens"], p["new_tokens"], r): b
            for c in p["configs"]
            for r in range(p["repeats"])
            for b in p["batches"]
        }
    )
    problems = lab.request_problems(got, want, "series, label, prompt, new, repeat")
    calls = Counter((c["config"], c["phase"], c["batch"], c["repeat"]) for c in doc["graph_calls"])
    wanted = Counter(lab_calls(p))
    if calls != wanted:
        problems.append(f"calls {sorted(calls)} instead of {sorted(wanted)}")
    engines = [e["config"] for e in doc["graph_engines"]]
    if engines != p["configs"]:
        problems.append(f"engines {engines} instead of {p['configs']}")
    problems += lab.cache_problems(doc)
    total = sum(want.values())
    return lab.verdict(
        "completeness",
        problems,
        f"{len(engines)} engines, {total} of {total} requests, exact prompt and new tokens",
    )


def compilation_problems(engine: dict, kind: str, cpu_backend: str | None) -> list[str]:
    """What vLLM 0.26.0 resolves for each configuration (config/vllm.py, platforms/cpu.py)."""
    from core.kernels import default_capture_sizes

    name = engine["config"]
    problems = []
    if name == "eager":
        if (engine["compile_mode"], engine["cudagraph_mode"]) != ("NONE", "NONE"):
            problems.append(f"eager: mode {engine['compile_mode']}, {engine['cudagraph_mode']}")
        if engine["capture_sizes"]:
            problems.append(f"eager: {len(engine['capture_sizes'])} capture sizes, none expected")
    elif kind == "cuda":
        sizes = default_capture_sizes(engine["max_num_seqs"], engine["max_num_batched_tokens"])
        if engine["compile_mode"] != "VLLM_COMPILE":
            problems.append(f"default: compile mode {engine['compile_mode']}, not VLLM_COMPILE")
        if engine["cudagraph_mode"] == "NONE":
            problems.append("default: cudagraph_mode NONE on a GPU")
        if engine["capture_sizes"] != sizes:
            problems.append(
                f"default: {len(engine['capture_sizes'])} capture sizes, the lesson's "
                f"default_capture_sizes({engine['max_num_seqs']}, "
                f"{engine['max_num_batched_tokens']}) gives {len(sizes)}"
            )
    else:  # the CPU platform: Dynamo traced once, no CUDA graphs
        if engine["cudagraph_mode"] != "NONE" or engine["capture_sizes"]:
            problems.append(f"default on CPU: {engine['cudagraph_mode']}, graphs captured")
        compiled = (engine["compile_mode"], engine["compile_backend"])
        if compiled != ("DYNAMO_TRACE_ONCE", cpu_backend):
            problems.append(
                f"default on CPU: {engine['compile_mode']} with {engine['compile_backend']}, "
                f"not DYNAMO_TRACE_ONCE with {cpu_backend}"
            )
    return problems


def graphs_compilation_claim(doc: dict) -> Check:
    name = "compilation settings as the lesson says"
    kind = doc["device"]["kind"]
    problems = [
        p
        for e in doc["graph_engines"]
        for p in compilation_problems(e, kind, doc["parameters"]["cpu_compile_backend"])
    ]
    shown = "; ".join(
        f"{e['config']}: {e['compile_mode']}, {e['cudagraph_mode']}, "
        f"{len(e['capture_sizes'])} capture sizes"
        for e in doc["graph_engines"]
    )
    return lab.verdict(name, problems, shown)


def graphs_tpot(doc: dict, config: str, batch: int) -> float | None:
    rows = [
        c["tpot_s"]
        for c in doc["graph_calls"]
        if (c["config"], c["batch"], c["phase"]) == (config, batch, "measured")
    ]
    return statistics.median(rows) if rows else None


def both(doc: dict) -> bool:
    return set(doc["parameters"]["configs"]) == {"eager", "default"}


def claim_graphs_lower_small_batch_tpot(doc: dict) -> Check:
    """The lesson: at batch 1 launches weigh most, and one graph replay removes them."""
    name = "CUDA graphs lower TPOT at the smallest batch"
    b = min(doc["parameters"]["batches"])
    eager, default = graphs_tpot(doc, "eager", b), graphs_tpot(doc, "default", b)
    if eager is None or default is None:
        return Check("SKIP", name, "needs both configurations")
    detail = f"B={b}: eager {lab.ms(eager)}, default {lab.ms(default)}, x{eager / default:.2f}"
    return Check("PASS" if default < eager else "FAIL", name, detail)


def claim_gain_shrinks_with_batch(doc: dict) -> Check:
    """The lesson: the larger the batch, the longer the step and the smaller the launches'
    share, so the graphs' gain (eager TPOT / default TPOT) falls as the batch grows."""
    name = "the graphs' gain is largest at the smallest batch"
    batches = doc["parameters"]["batches"]
    if not both(doc) or len(batches) < 2:
        return Check("SKIP", name, "needs both configurations and two batch sizes")
    gain = {b: graphs_tpot(doc, "eager", b) / graphs_tpot(doc, "default", b) for b in batches}
    small, large = min(batches), max(batches)
    detail = ", ".join(f"B={b}: x{g:.2f}" for b, g in gain.items())
    return Check("PASS" if gain[small] >= gain[large] else "FAIL", name, detail)


def claim_above_floor(doc: dict) -> Check:
    from core.lab_results import gpu_and_model
    from kernels_cuda_graphs.lab_results import tpot_floor_s

    name = "every TPOT at or above its floor"
    known = gpu_and_model(doc)
    if known is None:
        return Check("SKIP", name, lab.NOT_IN_CORE)
    gpu, resolved = known
    p = doc["parameters"]
    below, n = [], 0
    for config in p["configs"]:
        for b in p["batches"]:
            floor = tpot_floor_s(
                gpu, *resolved, batch=b, prompt=p["prompt_tokens"], new=p["new_tokens"]
            )
            tpot = graphs_tpot(doc, config, b)
            n += 1
            if tpot < floor:
                below.append(f"{config} B={b}: {lab.ms(tpot)} < {lab.ms(floor)}")
    return lab.verdict(name, below, f"{n} medians on a {gpu.name}")


def claim_startup_costs_more(doc: dict) -> Check:
    """The lesson: compiling and capturing graphs is paid at start-up."""
    name = "the default configuration starts slower (compile and capture)"
    if not both(doc):
        return Check("SKIP", name, "needs both configurations")
    start = {e["config"]: e["startup_s"] for e in doc["graph_engines"]}
    detail = f"eager {start['eager']:.1f} s, default {start['default']:.1f} s"
    return Check("PASS" if start["default"] > start["eager"] else "FAIL", name, detail)


def graphs_gpu_claims(doc: dict) -> list[Check]:
    return [
        claim_graphs_lower_small_batch_tpot(doc),
        claim_gain_shrinks_with_batch(doc),
        claim_above_floor(doc),
        claim_startup_costs_more(doc),
    ]


CLAIMS = {
    LAB: Claims(
        lambda doc: [graphs_completeness(doc), graphs_compilation_claim(doc)],
        graphs_gpu_claims,
        "CPU run: no CUDA graphs exist on a CPU and its timings say nothing about a GPU, so only "
        "completeness and the compilation settings are checked",
    ),
}


# ---------------------------------------------------------------- CPU smoke run
# The runner appends --enforce-eager to every smoke run; this lab sets enforce_eager per
# configuration itself, says so, and on a CPU compiles the default with the eager backend.

BATCHES, PROMPT, NEW = (1, 4), 32, 16


def both_configurations_start_and_say_how(run: SmokeRun) -> None:
    doc = run.doc
    assert [e["config"] for e in doc["graph_engines"]] == ["eager", "default"]
    eager, default = doc["graph_engines"]
    assert eager["enforce_eager"] and not default["enforce_eager"]
    assert (eager["compile_mode"], default["compile_mode"]) == ("NONE", "DYNAMO_TRACE_ONCE")
    assert default["compile_backend"] == doc["parameters"]["cpu_compile_backend"] == "eager"
    assert all(e["startup_s"] > 0 and e["cudagraph_mode"] == "NONE" for e in doc["graph_engines"])
    assert "--enforce-eager does not apply to this lab" in run.stdout
    assert re.search(r"default: start-up [0-9.]+ s", run.stdout), run.stdout


def every_request_has_its_exact_tokens(run: SmokeRun) -> None:
    doc = run.doc
    by_key = Counter((m["series"], m["label"]) for m in doc["measurements"])
    assert by_key == {(c, f"batch {b}"): b for c in ("eager", "default") for b in BATCHES}
    assert all((m["prompt_tokens"], m["new_tokens"]) == (PROMPT, NEW) for m in doc["measurements"])


SMOKE = (
    Smoke(
        "cuda_graphs.py",
        f"--config tiny --batches {','.join(map(str, BATCHES))} --prompt-tokens {PROMPT} "
        f"--new-tokens {NEW} --repeats 1",
        (both_configurations_start_and_say_how, every_request_has_its_exact_tokens),
        ("completeness", "compilation settings as the lesson says"),
    ),
)
