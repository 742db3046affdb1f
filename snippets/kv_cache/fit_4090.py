"""How many tokens of KV cache fit on one RTX 4090 next to Qwen2.5-7B-Instruct's weights.

Run it: python snippets/kv_cache/fit_4090.py
"""

from core.formats import BF16, checkpoint_format, resident_weight_bytes
from core.gpus import GIB, load_gpu
from core.memory import MemoryBudget
from core.models import kv_bytes_per_token, load_model


def rtx_4090() -> MemoryBudget:
    """vLLM's defaults on the RTX 4090 (its nvidia-smi total) and an assumed 2 GiB reserve."""
    return MemoryBudget.for_gpu(load_gpu("rtx_4090"))


def scenarios() -> list[tuple[str, float, float]]:
    """(label, weight bytes, kappa) for BF16 weights, AWQ weights, and AWQ weights with MHA."""
    qwen = load_model("qwen2.5-7b-instruct")
    awq = checkpoint_format(load_model("qwen2.5-7b-instruct-awq"))
    bf16_w, awq_w = resident_weight_bytes(qwen, BF16), resident_weight_bytes(qwen, awq)
    k = kv_bytes_per_token(qwen)
    return [
        ("BF16", bf16_w, k),
        ("AWQ", awq_w, k),
        ("AWQ, MHA", awq_w, kv_bytes_per_token(qwen.as_mha())),
    ]


def main() -> None:
    budget = rtx_4090()
    context = load_model("qwen2.5-7b-instruct").max_position_embeddings
    cases = scenarios()
    rows = [
        ("GPU memory, GiB", [f"{budget.capacity_bytes / GIB:.2f}"] * len(cases)),
        (f"x {budget.utilization} utilization", [f"{budget.usable_bytes / GIB:.2f}"] * len(cases)),
        ("- weights", [f"{w / GIB:.2f}" for _, w, _ in cases]),
        ("- reserve (assumed)", [f"{budget.reserve_bytes / GIB:.2f}"] * len(cases)),
        ("= KV cache, GiB", [f"{budget.kv_bytes(w) / GIB:.2f}" for _, w, _ in cases]),
        ("kappa, bytes/token", [f"{k:,.0f}" for _, _, k in cases]),
        (
            f"tokens ({budget.block_size}-token blocks)",
            [f"{budget.tokens(w, k):,}" for _, w, k in cases],
        ),
        (f"sequences of {context:,}", [f"{budget.tokens(w, k) // context}" for _, w, k in cases]),
    ]
    print(f"{'':<28}" + "".join(f"{label:>12}" for label, _, _ in cases))
    for name, cells in rows:
        print(f"{name:<28}" + "".join(f"{c:>12}" for c in cells))


if __name__ == "__main__":
    main()
