"""Read the KV capacity vLLM allocates and compare it with the PagedAttention lesson's estimate.

One engine start per setting, nothing generated (random weights with --dummy). A setting is one of
  explicit: LLM(kv_cache_memory_bytes=M, block_size=s)  -> the estimate must equal the engine's
            num_gpu_blocks, "GPU KV cache size" and "Maximum concurrency" exactly;
  profiled: LLM(gpu_memory_utilization=u)               -> GPU only; the estimate assumes the
            KV-cache lesson's runtime reserve, so only the relative error is reported.
            It budgets from the total CUDA reports (what vLLM's request_memory multiplies by
            u), measured in a throwaway process: NVML's total is about 0.35 GiB larger on an
            RTX 4090. vLLM then subtracts the weights and what its profiling pass measured:
            the activation peak of a max_num_batched_tokens forward pass (with the sampler's
            warm-up for max_num_seqs), memory outside PyTorch's allocator and an estimate of the
            CUDA graphs it captures (on by default); the lesson's reserve stands for those.
The engine's figures are read from llm.llm_engine.vllm_config.cache_config (num_gpu_blocks,
block_size, kv_cache_size_tokens, kv_cache_max_concurrency), filled in at start-up.

  python labs/paged_attention/kv_capacity.py                       # Qwen2.5-7B-Instruct-AWQ, GPU
  python labs/paged_attention/kv_capacity.py --dummy               # same shape, random weights
  .venv-labs/bin/python labs/paged_attention/kv_capacity.py --dummy --config tiny   # CPU smoke
"""

import argparse
from dataclasses import dataclass

import labkit as lab
from core.engine import GPU_MEMORY_UTILIZATION
from core.formats import resident_weight_bytes
from core.memory import MemoryBudget
from core.models import ModelSpec, kv_bytes_per_token
from paged_attention.engine_capacity import engine_capacity

GiB = 2**30
GPU_KV_BYTES = [4 * GiB, 4 * GiB + 12_345]  # the odd one: not whole pages
CPU_KV_BYTES = [8 * 2**20 + 12_345]  # small: the tiny config's pages are a few KiB
UTILIZATIONS = [GPU_MEMORY_UTILIZATION, 0.80]  # vLLM's default and a lower one


@dataclass(frozen=True)
class Setting:
    label: str
    kv_cache_memory_bytes: int | None  # None: vLLM profiles and applies gpu_memory_utilization
    block_size: int | None  # None: the engine's default (16 on CUDA, 128 on CPU)
    gpu_memory_utilization: float


@dataclass(frozen=True)
class CapacityRow:
    label: str
    kv_cache_memory_bytes: int | None
    gpu_memory_utilization: float
    block_size: int  # as the engine chose it
    max_model_len: int
    num_gpu_blocks: int  # the engine's, block 0 (the null block) included
    kv_cache_tokens: int  # the start-up line "GPU KV cache size: N tokens"
    max_concurrency: float  # the start-up line "Maximum concurrency for L tokens per request"
    estimate_num_blocks: int | None  # None for a profiled setting (no byte count to start from)
    estimate_tokens: int
    estimate_concurrency: float
    exact: bool  # an explicit setting: the estimate must equal the engine's figures


def byte_list(text: str) -> list[int]:
    values = [int(float(v)) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive byte counts like 4e9, got {text!r}")
    return values


def block_list(text: str) -> list[int | None]:
    """'auto,32' -> [None, 32]: auto lets the engine choose."""
    out = []
    for v in (v.strip() for v in text.split(",") if v.strip()):
        if v == "auto":
            out.append(None)
        elif v.isdigit() and int(v) > 0:
            out.append(int(v))
        else:
            raise argparse.ArgumentTypeError(f"block sizes are positive integers or auto: {v!r}")
    return out or [None]


def float_list(text: str) -> list[float]:
    values = [float(v) for v in text.split(",") if v.strip()]
    if not values or not all(0 < v <= 1 for v in values):
        raise argparse.ArgumentTypeError(f"utilizations are in (0, 1], got {text!r}")
    return values


def settings(backend: str, opts) -> list[Setting]:
    kv_bytes = opts.kv_cache_bytes or (CPU_KV_BYTES if backend == "cpu" else GPU_KV_BYTES)
    rows = [
        Setting(f"M={m:,} B, block={s or 'auto'}", m, s, opts.gpu_memory_utilization)
        for m in kv_bytes
        for s in opts.block_sizes
    ]
    if backend == "cpu":  # on CPU the utilization is a share of RAM: nothing to compare with
        return rows
    return rows + [
        Setting(f"utilization={u}, block={s or 'auto'}", None, s, u)
        for u in opts.utilizations
        for s in opts.block_sizes[:1]
    ]


def cache_dtype_bytes(llm) -> int:
    """Bytes per cached K or V value: the model's dtype unless kv_cache_dtype says otherwise."""
    cache_dtype = llm.llm_engine.vllm_config.cache_config.cache_dtype
    if cache_dtype == "auto":
        return llm.model_config.dtype.itemsize
    if cache_dtype.startswith("fp8"):
        return 1
    raise ValueError(f"kv_cache_dtype {cache_dtype!r}: the lab knows auto and fp8 only")


def measure(setting: Setting, llm, device_bytes: int | None, weight_bytes: int | None):
    vllm_config = llm.llm_engine.vllm_config
    cache_config = vllm_config.cache_config  # filled in by the engine at start-up
    max_model_len = vllm_config.model_config.max_model_len
    model = ModelSpec.from_config(llm.model_config.hf_config.to_dict())
    dtype_bytes = cache_dtype_bytes(llm)
    if setting.kv_cache_memory_bytes is not None:
        est = engine_capacity(
            model,
            setting.kv_cache_memory_bytes,
            cache_config.block_size,
            max_model_len,
            dtype_bytes,
        )
        estimate = (est.num_blocks, est.kv_cache_tokens, est.max_concurrency)
    else:  # the KV-cache lesson's budget: capacity x utilization - weights - assumed reserve
        budget = MemoryBudget(
            device_bytes, setting.gpu_memory_utilization, block_size=cache_config.block_size
        )
        tokens = budget.tokens(weight_bytes, kv_bytes_per_token(model, dtype_bytes))
        blocks_per_request = -(-max_model_len // cache_config.block_size)
        estimate = (None, tokens, tokens / cache_config.block_size / blocks_per_request)
    return CapacityRow(
        label=setting.label,
        kv_cache_memory_bytes=setting.kv_cache_memory_bytes,
        gpu_memory_utilization=setting.gpu_memory_utilization,
        block_size=cache_config.block_size,
        max_model_len=max_model_len,
        num_gpu_blocks=cache_config.num_gpu_blocks,
        kv_cache_tokens=cache_config.kv_cache_size_tokens,
        max_concurrency=cache_config.kv_cache_max_concurrency,
        estimate_num_blocks=estimate[0],
        estimate_tokens=estimate[1],
        estimate_concurrency=estimate[2],
        exact=setting.kv_cache_memory_bytes is not None,
    )


HEADER = (
    f"{'setting':<34} {'block':>5} {'blocks':>9} {'est.':>9} {'KV tokens':>11} {'est.':>11} "
    f"{'concur.':>8} {'est.':>8}  verdict"
)


def row(r: CapacityRow) -> str:
    if r.exact:
        same = (r.num_gpu_blocks, r.kv_cache_tokens, r.max_concurrency) == (
            r.estimate_num_blocks,
            r.estimate_tokens,
            r.estimate_concurrency,
        )
        verdict = "exact" if same else "MISMATCH"
    else:
        verdict = f"estimate {r.estimate_tokens / r.kv_cache_tokens - 1:+.1%}"
    est_blocks = "-" if r.estimate_num_blocks is None else f"{r.estimate_num_blocks:,}"
    return (
        f"{r.label:<34} {r.block_size:>5} {r.num_gpu_blocks:>9,} {est_blocks:>9} "
        f"{r.kv_cache_tokens:>11,} {r.estimate_tokens:>11,} {r.max_concurrency:>8.2f} "
        f"{r.estimate_concurrency:>8.2f}  {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument("--kv-cache-bytes", type=byte_list, default=None, help="comma list")
    parser.add_argument("--block-sizes", type=block_list, default=[None, 32], help="e.g. auto,32")
    parser.add_argument("--utilizations", type=float_list, default=UTILIZATIONS, help="GPU only")
    opts = parser.parse_args()

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    max_model_len = opts.max_model_len or 4096
    # each setting runs at one of these shares; vLLM checks it even with an explicit KV size
    utilization = max([*opts.utilizations, opts.gpu_memory_utilization])
    backend = lab.preflight(spec, max_model_len, max_model_len, utilization)
    lab.setup_environment(spec.dummy)

    # the profiled rows' budget: CUDA's total, as vLLM sees it; None on CPU (no profiled rows)
    total = lab.cuda_total_bytes() if backend == "cuda" else None
    if backend == "cuda" and total is None:
        raise RuntimeError("torch.cuda.mem_get_info() failed in a fresh process: is CUDA usable?")
    plan = settings(backend, opts)
    rows, llm = [], None
    print(HEADER)
    for i, setting in enumerate(plan):
        llm = lab.start_engine(  # waits for the previous engine's memory to be released
            spec,
            backend,
            max_model_len,
            opts,
            gpu_memory_utilization=setting.gpu_memory_utilization,
            block_size=setting.block_size,  # None: the platform's default
            # sizes the KV cache instead of the profiled free memory; vLLM still runs its
            # profiling forward pass (and on CUDA captures its graphs) before allocating it
            kv_cache_memory_bytes=setting.kv_cache_memory_bytes,
        )
        weights = resident_weight_bytes(spec.spec, spec.fmt) if spec.spec else None
        if setting.kv_cache_memory_bytes is None and weights is None:
            print(f"{setting.label}: no weight estimate for {spec.model}, skipped")
        else:
            rows.append(measure(setting, llm, total, weights))
            print(row(rows[-1]))
        if i < len(plan) - 1:
            lab.stop_engine(llm)  # the next start_engine waits until its memory is free
            del llm

    parameters = lab.common_parameters(llm, opts) | {
        "gpu_memory_utilization": max(opts.utilizations),
        "settings": [
            {
                "label": s.label,
                "kv_cache_memory_bytes": s.kv_cache_memory_bytes,
                "block_size": s.block_size,
                "gpu_memory_utilization": s.gpu_memory_utilization,
            }
            for s in plan
        ],
    }
    doc = lab.results_document("kv_capacity", backend, spec, llm, parameters, rows)
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
