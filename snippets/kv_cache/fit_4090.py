"""How many tokens of KV cache fit on one RTX 4090 next to Qwen2.5-7B-Instruct's weights.

Run it: python snippets/kv_cache/fit_4090.py
"""

import sys
from dataclasses import dataclass
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kv_cache.kappa import as_mha, kappa
from specs import load_gpus
from specs.models import load_model
from transformer_infra.weight_bytes import BF16, awq_format, total_bytes

GIB = 2**30


@dataclass(frozen=True)
class MemoryBudget:
    """What a vLLM-style engine may give the KV cache on one GPU. The reserve is an assumption."""

    capacity_bytes: float  # the card's memory; DRAM capacity is binary: 24 GB means 24 GiB
    utilization: float = 0.92  # vLLM's default gpu_memory_utilization
    reserve_bytes: float = 2 * GIB  # activations, CUDA context, CUDA graphs (assumed, not measured)
    block_size: int = 16  # tokens per KV-cache block

    def __post_init__(self) -> None:
        if not 0 < self.utilization <= 1:
            raise ValueError(f"utilization must be in (0, 1], got {self.utilization}")
        if self.capacity_bytes <= 0 or self.reserve_bytes < 0 or self.block_size <= 0:
            raise ValueError("capacity and block size must be positive, the reserve not negative")

    def kv_bytes(self, weight_bytes: float) -> float:
        """Memory left for the KV cache: capacity * utilization - weights - reserve."""
        left = self.capacity_bytes * self.utilization - weight_bytes - self.reserve_bytes
        if left <= 0:
            usable = self.capacity_bytes * self.utilization / GIB
            raise ValueError(
                f"weights ({weight_bytes / GIB:.2f} GiB) and reserve "
                f"({self.reserve_bytes / GIB:.2f} GiB) leave no room in {usable:.2f} GiB"
            )
        return left

    def tokens(self, weight_bytes: float, kappa_bytes: float) -> int:
        """Whole blocks of KV cache that fit, in tokens."""
        if kappa_bytes <= 0:
            raise ValueError(f"kappa must be positive, got {kappa_bytes}")
        return int(self.kv_bytes(weight_bytes) // (self.block_size * kappa_bytes)) * self.block_size


def rtx_4090() -> MemoryBudget:
    return MemoryBudget(capacity_bytes=load_gpus()["rtx_4090"].memory_gb * GIB)


def scenarios() -> list[tuple[str, float, float]]:
    """(label, weight bytes, kappa) for BF16 weights, AWQ weights, and AWQ weights with MHA."""
    qwen = load_model("qwen2.5-7b-instruct")
    bf16, awq = total_bytes(qwen, BF16), total_bytes(qwen, awq_format())
    return [
        ("BF16", bf16, kappa(qwen)),
        ("AWQ", awq, kappa(qwen)),
        ("AWQ, MHA", awq, kappa(as_mha(qwen))),
    ]


def main() -> None:
    budget = rtx_4090()
    context = load_model("qwen2.5-7b-instruct").max_position_embeddings
    cases = scenarios()
    rows = [
        ("GPU memory, GiB", [f"{budget.capacity_bytes / GIB:.2f}"] * len(cases)),
        (
            f"x {budget.utilization} utilization",
            [f"{budget.capacity_bytes * budget.utilization / GIB:.2f}"] * len(cases),
        ),
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
