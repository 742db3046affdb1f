"""CUDA graphs in vLLM: start-up time and batch-1 / batch-32 TPOT, eager against the default.

Two configurations (--configs), each in a fresh child process with empty compile caches (vLLM's,
Inductor's and Triton's in a temporary folder), so each start-up pays for what that
configuration builds: "eager" is LLM(enforce_eager=True), no torch.compile and no CUDA graphs;
"default" is LLM's defaults, which on a GPU compile the model with torch.compile and capture a CUDA
graph for every batch size of the capture list. Per engine: the time LLM(...) took to build, and
the compilation settings vLLM resolved (mode, backend, cudagraph_mode, capture sizes). Then an
unmeasured warm-up at the largest batch and, per batch size (default 1 and 32), B requests with
distinct prompts, exactly --new-tokens each, one generate() call: TPOT from each request's
metrics, output throughput per call.

The graph path exists only on a GPU. On a CPU, vLLM's "default" is torch.compile with Inductor
(minutes of start-up); this lab sets VLLM_CPU_CI_ENV=1 there, the switch vLLM's CPU platform reads
(platforms/cpu.py) to trace the model with Dynamo but run it with the eager backend, unless
--cpu-inductor is given. The shared --enforce-eager option (which the smoke runner always passes)
does not apply: this lab chooses enforce_eager per configuration and says so.

  python labs/kernels_cuda_graphs/cuda_graphs.py               # Qwen2.5-7B-Instruct-AWQ on a GPU
  .venv-labs/bin/python labs/kernels_cuda_graphs/cuda_graphs.py --config tiny \\
      --batches 1,4 --prompt-tokens 32 --new-tokens 16 --repeats 1   # CPU smoke
"""

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import labkit as lab
from kernels_cuda_graphs import lab_results as lesson

CPU_EAGER_BACKEND = {"VLLM_CPU_CI_ENV": "1"}  # vLLM's CPU platform: Dynamo + eager backend


def config_list(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names or any(c not in lesson.CONFIGS for c in names):
        raise argparse.ArgumentTypeError(f"expected some of {','.join(lesson.CONFIGS)}")
    return [c for c in lesson.CONFIGS if c in names]


def cold_caches(folder: Path) -> dict[str, str]:
    """Compile caches in an empty folder: the start-up pays for every compilation."""
    return {
        "VLLM_CACHE_ROOT": str(folder / "vllm"),
        "TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor"),
        "TRITON_CACHE_DIR": str(folder / "triton"),
    }


def cpu_compile_backend(backend: str, opts: argparse.Namespace) -> str | None:
    """The backend the default configuration compiles with on a CPU; None on a GPU."""
    if backend != "cpu":
        return None
    return "inductor" if opts.cpu_inductor else "eager"


def compilation_record(llm, config: str, startup_s: float) -> dict:
    """What vLLM resolved for this engine (after the platform's defaults)."""
    vllm_config = llm.llm_engine.vllm_config
    compilation_config = vllm_config.compilation_config
    scheduler_config = vllm_config.scheduler_config
    return {
        "config": config,
        "enforce_eager": config == "eager",
        "startup_s": startup_s,
        "compile_mode": compilation_config.mode.name,
        "compile_backend": compilation_config.backend or None,
        "cudagraph_mode": compilation_config.cudagraph_mode.name,
        "capture_sizes": list(compilation_config.cudagraph_capture_sizes or []),
        "max_num_seqs": scheduler_config.max_num_seqs,
        "max_num_batched_tokens": scheduler_config.max_num_batched_tokens,
    }


def serve(opts: argparse.Namespace, spec: lab.LabModel, backend: str, config: str) -> dict:
    """One configuration's engine: its start-up, its compilation settings and its calls."""
    from vllm import SamplingParams

    largest = max(opts.batches)
    context = opts.prompt_tokens + opts.new_tokens
    opts.enforce_eager = config == "eager"  # this configuration's, not the shared option's
    t0 = time.perf_counter()
    # max_num_seqs stays vLLM's default (256): it sets the capture sizes the lesson counts
    llm = lab.start_engine(spec, backend, opts.max_model_len, opts, kv_tokens=context * largest)
    record = compilation_record(llm, config, time.perf_counter() - t0)
    print(f"{config}: start-up {record['startup_s']:.1f} s, {record}")
    vocab = llm.model_config.get_vocab_size()
    seeds = itertools.count(opts.seed)
    params = SamplingParams(max_tokens=opts.new_tokens, ignore_eos=True, detokenize=False)
    rows, calls = [], []
    for phase, repeat, b in [("warmup", 0, largest)] + [
        ("measured", r, b) for r in range(opts.repeats) for b in opts.batches
    ]:
        prompts = [lab.prompt_ids(opts.prompt_tokens, vocab, next(seeds)) for _ in range(b)]
        for prompt in prompts:
            lab.validate_token_ids(prompt, vocab)
        t1 = time.perf_counter()
        outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
        wall = time.perf_counter() - t1
        measured = [lab.measurement(config, f"batch {b}", repeat, o, wall) for o in outs]
        span = max(o.metrics.last_token_ts for o in outs) - min(o.metrics.queued_ts for o in outs)
        if phase == "measured":
            rows += measured
        calls.append(
            {
                "config": config,
                "phase": phase,
                "batch": b,
                "repeat": repeat,
                "tpot_s": statistics.median(m.tpot_s for m in measured),
                "output_tokens_per_s": sum(m.new_tokens for m in measured) / span,
                "span_s": span,
            }
        )
    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=1,
        repeats=opts.repeats,
        configs=opts.configs,
        batches=opts.batches,
        prompt_tokens=opts.prompt_tokens,
        new_tokens=opts.new_tokens,
        cold_caches=not opts.warm_caches,
        cpu_compile_backend=cpu_compile_backend(backend, opts),
    )
    doc = lab.results_document(lesson.LAB, backend, spec, llm, parameters, rows)
    doc["graph_engines"] = [record]
    doc["graph_calls"] = calls
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--configs", type=config_list, default=list(lesson.CONFIGS), help="eager,default"
    )
    parser.add_argument(
        "--batches",
        type=lab.int_list,
        default=list(lesson.LAB_BATCHES),
        help=f"comma list of B (default {','.join(map(str, lesson.LAB_BATCHES))})",
    )
    parser.add_argument("--prompt-tokens", type=int, default=lesson.LAB_PROMPT_TOKENS)
    parser.add_argument("--new-tokens", type=int, default=lesson.LAB_NEW_TOKENS)
    parser.add_argument("--repeats", type=int, default=3, help="rounds over the batch sizes")
    parser.add_argument(
        "--warm-caches",
        action="store_true",
        help="keep vLLM's compile cache (.cache/vllm): start-up then measures a restart",
    )
    parser.add_argument(
        "--cpu-inductor",
        action="store_true",
        help="CPU only: compile the default configuration with Inductor (minutes)",
    )
    parser.add_argument("--only", default=None, help=argparse.SUPPRESS)  # child mode
    opts = parser.parse_args()
    if opts.prompt_tokens < 1 or opts.new_tokens < 2 or opts.repeats < 1:
        parser.error("--prompt-tokens and --repeats must be positive, --new-tokens at least 2")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    context = opts.prompt_tokens + opts.new_tokens
    opts.max_model_len = opts.max_model_len or context
    backend = lab.preflight(spec, opts.max_model_len, context, opts.gpu_memory_utilization)
    if opts.only is not None:  # child: one engine, write its document, exit
        with tempfile.TemporaryDirectory(prefix="cuda-graphs-caches-") as tmp:
            if not opts.warm_caches:
                os.environ.update(cold_caches(Path(tmp)))
            if backend == "cpu" and not opts.cpu_inductor:
                os.environ.update(CPU_EAGER_BACKEND)
            lab.setup_environment(spec.dummy)
            doc = serve(opts, spec, backend, opts.only)
        opts.out.write_text(json.dumps(doc) + "\n", encoding="utf-8")
        return

    if opts.enforce_eager:
        print(
            "note: --enforce-eager does not apply to this lab: it compares enforce_eager=True "
            "with the default itself (--configs); each engine gets its configuration's setting"
        )
    if backend == "cpu":
        how = "Dynamo with the eager backend (VLLM_CPU_CI_ENV=1)"
        how = "Inductor" if opts.cpu_inductor else how
        print(f"note: CPU: no CUDA graphs; the default configuration compiles with {how}")
    docs = lab.run_children(__file__, sys.argv[1:], opts.configs, "configuration")
    doc = lab.merge_children(docs, "graph_engines", "graph_calls")

    print(f"\n{lesson.LAB}: {opts.prompt_tokens}-token prompts, {opts.new_tokens} new tokens each")
    print(f"{'config':<8} {'start-up s':>10} {'mode':>18} {'cudagraph_mode':>20} {'sizes':>6}")
    for e in doc["graph_engines"]:
        print(
            f"{e['config']:<8} {e['startup_s']:10.1f} {e['compile_mode']:>18} "
            f"{e['cudagraph_mode']:>20} {len(e['capture_sizes']):>6}"
        )
    print(f"{'config':<8} {'B':>4} {'TPOT ms':>9} {'tok/s':>9}")
    for b in opts.batches:
        for config in opts.configs:
            mine = [
                c
                for c in doc["graph_calls"]
                if (c["config"], c["batch"], c["phase"]) == (config, b, "measured")
            ]
            tpot = statistics.median(c["tpot_s"] for c in mine)
            tps = statistics.median(c["output_tokens_per_s"] for c in mine)
            print(f"{config:<8} {b:>4} {tpot * 1e3:9.2f} {tps:9,.0f}")
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
