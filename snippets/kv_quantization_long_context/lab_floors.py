"""The KV-cache lab's settings and its floors (labs/kv_quantization_long_context/kv_fp8.py).

The lab starts one engine per kv_cache_dtype (auto, then fp8) and reads the KV capacity it
allocated; then, in each, one request per context length decodes LAB_NEW_TOKENS tokens alone
(batch 1). Capacity is checked against the course's estimate (exactly where the KV cache's bytes
are given, within a tolerance where vLLM profiles them), each median TPOT against the decode
bound at that context with that KV dtype (core.roofline.tpot_bound with kv_bytes).

Run it: python snippets/kv_quantization_long_context/lab_floors.py
"""

from core.formats import WeightFormat, checkpoint_format
from core.gpus import GPU, load_gpus
from core.long_context import kv_tokens, kv_value_bytes
from core.models import ModelSpec, load_model
from core.roofline import tpot_bound

LAB_DTYPES = ("auto", "fp8")
LAB_CONTEXTS = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000)  # prompt tokens: 1k ... 32k
LAB_NEW_TOKENS = 32  # the longest request, 32,032 tokens, fits Qwen2.5's 32,768 positions
LAB_MODEL = "qwen2.5-7b-instruct-awq"  # the labs' default checkpoint


def tpot_floor_s(
    gpu: GPU, model: ModelSpec, context: int, kv_cache_dtype: str, fmt: WeightFormat | None = None
) -> float:
    """One batch-1 decode step at `context` cached tokens (the decode's shortest) with that KV
    dtype, for the weights the run loaded (the checkpoint's own format by default)."""
    fmt = fmt or checkpoint_format(model)
    kv = kv_value_bytes(kv_cache_dtype)
    return tpot_bound(gpu, model, context, fmt, kv_bytes=kv).seconds


def main() -> None:
    gpu, model = load_gpus()["rtx_4090"], load_model(LAB_MODEL)
    fmt = checkpoint_format(model)
    print(f"{gpu.name}, {model.name}: the KV-cache lab's estimates and floors")
    for dtype in LAB_DTYPES:
        tokens = kv_tokens(gpu, model, fmt, dtype)
        print(f"KV tokens at vLLM's defaults, kv_cache_dtype={dtype}: {tokens:,}")
    print(f"{'context':>8}" + "".join(f"{f'TPOT {d} ms':>14}" for d in LAB_DTYPES))
    for s in LAB_CONTEXTS:
        cells = "".join(f"{tpot_floor_s(gpu, model, s, d) * 1e3:>14.2f}" for d in LAB_DTYPES)
        print(f"{s:>8,}{cells}")


if __name__ == "__main__":
    main()
