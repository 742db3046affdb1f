"""Tensor parallelism in vLLM: TPOT, TTFT and output throughput at TP = 1, 2, 4, batch 1 and 32.

For each tensor-parallel size t, a fresh engine (in a child process, so the previous one's GPU
memory is released) splits the model t ways with vLLM's own distributed executor
(tensor_parallel_size=t, distributed_executor_backend="mp": one worker process per GPU). For each
batch size B it hands B requests with distinct prompts of the same length to one generate() call,
each forced to produce exactly --new-tokens tokens; vLLM's request metrics give each request's
TTFT and TPOT, and the batch's output throughput is every new token over the span from the first
request queued to the last token. A short unmeasured warm-up runs first on each engine. Each
engine's own configuration is recorded (tensor_parallel_size, the executor, the KV heads and KV
blocks of one worker) so that scripts/verify_labs.py can check them against the lesson's rules
(core.parallel) and the measured TPOT against the lesson's floor with communication.

Pre-flight, before anything loads: at least as many visible GPUs as the largest t (on a CPU:
as many allowed cores, one per worker). On a CPU the lab binds worker i's threads to core i
(VLLM_CPU_OMP_THREADS_BIND), because vLLM's default binding wants a NUMA node per worker.

  python labs/tensor_parallelism/tp_sweep.py                  # Qwen2.5-7B-Instruct-AWQ, 4 GPUs
  python labs/tensor_parallelism/tp_sweep.py --tp 1,2 --link nvlink4_h100   # two H100 SXM
  .venv-labs/bin/python labs/tensor_parallelism/tp_sweep.py --config tiny --tp 2 \\
      --batches 1,4 --prompt-tokens 32 --new-tokens 8 --repeats 1     # CPU smoke: TP = 2, gloo
"""

import argparse
import contextlib
import json
import os
import statistics
import sys

import labkit as lab
from core.links import load_links

TP_SIZES = [1, 2, 4]
BATCHES = [1, 32]
PROMPT_TOKENS = 512
NEW_TOKENS = 64
REPEATS = 3
DEFAULT_LINK = "pcie4_x16"  # a machine of RTX 4090s (no NVLink); nvlink4_h100 for H100 SXM
EXECUTOR = "mp"  # vLLM's multiprocessing executor: one worker process per GPU, one machine
CPU_BIND = "VLLM_CPU_OMP_THREADS_BIND"


# ---------------------------------------------------------------- pre-flight: enough devices


def check_gpu_count(visible: int, largest_tp: int) -> None:
    """t-way tensor parallelism needs t GPUs of this machine, one worker each."""
    if visible < largest_tp:
        raise lab.PreflightError(
            f"--tp asks for up to {largest_tp} GPUs (tensor_parallel_size={largest_tp}), but "
            f"only {visible} {'is' if visible == 1 else 'are'} visible "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r})",
            f"run on a machine with {largest_tp} GPUs, or pass --tp with sizes up to "
            f"{max(visible, 1)} (e.g. --tp {','.join(str(t) for t in TP_SIZES if t <= visible)})"
            if visible >= 1
            else f"run on a machine with {largest_tp} GPUs",
        )


def check_cpu_count(allowed: int, largest_tp: int) -> None:
    """On a CPU each worker gets a core of its own (see cpu_thread_binding)."""
    if allowed < largest_tp:
        raise lab.PreflightError(
            f"--tp asks for {largest_tp} CPU workers, one core each, but this process may use "
            f"only {allowed} core(s)",
            f"pass --tp with sizes up to {allowed} (the CPU smoke run uses --tp 2)",
        )


def visible_gpu_count(cuda_visible_devices: str | None = None, nvml=None) -> int:
    """GPUs CUDA will see: NVML's device count, cut to the CUDA_VISIBLE_DEVICES list when it is
    set (an empty value hides every GPU). 0 without NVML. The lab's process creates no CUDA
    context (vLLM's workers do)."""
    if cuda_visible_devices is None:
        cuda_visible_devices = os.environ.get("CUDA_VISIBLE_DEVICES")
    try:
        if nvml is None:
            import pynvml as nvml  # nvidia-ml-py, a dependency of vLLM's CUDA build
        nvml.nvmlInit()
    except Exception:
        return 0
    try:
        count = nvml.nvmlDeviceGetCount()
    except Exception:
        return 0
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
    if cuda_visible_devices is None:
        return count
    listed = [d for d in cuda_visible_devices.split(",") if d.strip()]
    return min(len(listed), count)


def cpu_thread_binding(tp: int, allowed: list[int]) -> str:
    """Binds CPU worker i's OpenMP threads to allowed core i ("0|1" for two workers on cores 0
    and 1). vLLM 0.26's default ("auto") binds each worker to a NUMA node of its own and refuses
    ("Not enough allowed NUMA nodes to bind threads of 2 local CPUWorkers") on a machine with one
    node, which is what most small machines are. Kept when the user set it. Call before vLLM
    starts its workers: each reads the variable when it sets up its threads."""
    if CPU_BIND in os.environ:
        return f"{CPU_BIND}={os.environ[CPU_BIND]!r} as set by you"
    os.environ[CPU_BIND] = "|".join(str(core) for core in sorted(allowed)[:tp])
    return f"{CPU_BIND}={os.environ[CPU_BIND]!r}: one core per CPU worker"


# ---------------------------------------------------------------- one engine (a child process)


def engine_record(llm, tp: int) -> dict:
    """What the engine itself reports about its split: read back, not assumed."""
    config = llm.llm_engine.vllm_config
    parallel_config = config.parallel_config
    cache_config = config.cache_config
    return {
        "tp": tp,
        "tensor_parallel_size": parallel_config.tensor_parallel_size,
        "distributed_executor_backend": str(parallel_config.distributed_executor_backend),
        "world_size": parallel_config.world_size,
        "kv_heads_per_worker": llm.model_config.get_num_kv_heads(parallel_config),
        "total_kv_heads": llm.model_config.get_total_num_kv_heads(),
        "num_gpu_blocks": cache_config.num_gpu_blocks,
        "block_size": cache_config.block_size,
        "kv_cache_memory_bytes": cache_config.kv_cache_memory_bytes,
    }


def serve(opts: argparse.Namespace, spec: lab.LabModel, backend: str, tp: int) -> dict:
    """Child process: one engine of tensor_parallel_size=tp runs every batch size."""
    max_model_len = opts.max_model_len or opts.prompt_tokens + opts.new_tokens
    llm = lab.start_engine(
        spec,
        backend,
        max_model_len,
        opts,
        kv_tokens=max_model_len * max(opts.batches),  # CPU: the largest batch at its longest
        tensor_parallel_size=tp,  # the knob: one worker per GPU, each with 1/tp of every layer
        distributed_executor_backend=EXECUTOR,
    )
    engine = engine_record(llm, tp)
    rows, summaries = lab.sweep_batches(
        llm, opts.batches, opts.repeats, opts.prompt_tokens, opts.new_tokens, opts.seed,
        "tp_sweep", lambda batch: f"tp {tp} batch {batch}",
    )  # fmt: skip
    summaries = [{"tp": tp, **s} for s in summaries]
    parameters = lab.common_parameters(llm, opts)
    doc = lab.results_document("tp_sweep", backend, spec, llm, parameters, rows)
    doc["tp_engines"] = [engine]
    doc["tp_summaries"] = summaries
    return doc


# ---------------------------------------------------------------- the sweep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--tp", type=lab.int_list, default=TP_SIZES, help="tensor-parallel sizes (1,2,4)"
    )
    parser.add_argument("--batches", type=lab.int_list, default=BATCHES, help="batch sizes (1,32)")
    parser.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS)
    parser.add_argument("--new-tokens", type=int, default=NEW_TOKENS)
    parser.add_argument("--repeats", type=int, default=REPEATS, help="measured calls per batch")
    parser.add_argument(
        "--link",
        choices=sorted(load_links()),
        default=DEFAULT_LINK,
        help=f"how the GPUs talk (core/links.toml), for the floor (default {DEFAULT_LINK})",
    )
    parser.add_argument("--only", type=int, default=None, help=argparse.SUPPRESS)  # child mode
    opts = parser.parse_args()
    if opts.prompt_tokens < 1 or opts.new_tokens < 2 or opts.repeats < 1:
        parser.error("--prompt-tokens and --repeats must be >= 1, --new-tokens >= 2")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    longest = opts.prompt_tokens + opts.new_tokens
    max_model_len = opts.max_model_len or longest
    if opts.only is not None:  # child: one engine, write the partial document, exit
        backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
        if backend == "cpu":
            print(f"pre-flight: {cpu_thread_binding(opts.only, list(os.sched_getaffinity(0)))}")
        lab.setup_environment(spec.dummy)
        doc = serve(opts, spec, backend, opts.only)
        opts.out.write_text(json.dumps(doc) + "\n", encoding="utf-8")
        return

    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    try:  # too few devices is this machine's limit, not a wrong setting: exit NOT_THIS_MACHINE
        if backend == "cuda":
            visible = visible_gpu_count()
            check_gpu_count(visible, max(opts.tp))
            print(f"pre-flight: {visible} GPU(s) visible, tensor-parallel sizes {opts.tp}")
        else:
            allowed = len(os.sched_getaffinity(0))
            check_cpu_count(allowed, max(opts.tp))
            print(f"pre-flight: {allowed} CPU core(s) allowed, tensor-parallel sizes {opts.tp}")
    except lab.PreflightError as refusal:
        lab.refuse_on_this_machine(refusal)
    docs = lab.run_children(__file__, sys.argv[1:], [str(t) for t in opts.tp], "--tp")

    doc = lab.merge_children(docs, "tp_engines", "tp_summaries")
    engines, summaries = doc["tp_engines"], doc["tp_summaries"]
    print(
        f"\n{'TP':>3} {'batch':>6} {'TTFT ms':>9} {'TPOT ms':>9} {'tok/s':>9}   "
        f"(medians over {opts.repeats} call(s); link for the floor: {opts.link})"
    )
    for t in opts.tp:
        for b in opts.batches:
            mine = [s for s in summaries if (s["tp"], s["batch"]) == (t, b)]
            ttft = statistics.median(s["ttft_median_s"] for s in mine)
            tpot = statistics.median(s["tpot_median_s"] for s in mine)
            tps = statistics.median(s["output_tokens_per_s"] for s in mine)
            print(f"{t:>3} {b:>6} {ttft * 1e3:9.1f} {tpot * 1e3:9.2f} {tps:9,.0f}")
    for e in engines:
        print(
            f"engine TP={e['tp']}: tensor_parallel_size {e['tensor_parallel_size']}, executor "
            f"{e['distributed_executor_backend']}, {e['kv_heads_per_worker']} of "
            f"{e['total_kv_heads']} KV head(s) per worker, {e['num_gpu_blocks']} KV blocks"
        )
    doc["parameters"] |= {  # the child's engine parameters, and the sweep's
        "warmup": 1,
        "tp_sizes": opts.tp,
        "batches": opts.batches,
        "prompt_tokens": opts.prompt_tokens,
        "new_tokens": opts.new_tokens,
        "repeats": opts.repeats,
        "link": opts.link,
        "distributed_executor_backend": EXECUTOR,
    }
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
