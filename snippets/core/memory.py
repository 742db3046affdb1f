"""How much KV cache a GPU holds next to the weights, the way a vLLM-style engine budgets it."""

from dataclasses import dataclass

from core.engine import BLOCK_SIZE, GPU_MEMORY_UTILIZATION
from core.formats import WeightFormat, resident_weight_bytes
from core.forward import kv_cache_bytes
from core.gpus import GIB, GPU
from core.models import ModelSpec

# peak activations and CUDA graphs (assumed, not measured); the CUDA context is not in it:
# vLLM 0.26.0 snapshots memory after creating it, so it sits in the (1 - utilization) share
ASSUMED_RESERVE_BYTES = 2 * GIB


@dataclass(frozen=True)
class MemoryBudget:
    """What the engine may give the KV cache on one GPU. The reserve is an assumption."""

    capacity_bytes: float  # the card's memory (GPU.memory_bytes)
    utilization: float = GPU_MEMORY_UTILIZATION  # vLLM's default for LLM(...)
    reserve_bytes: float = ASSUMED_RESERVE_BYTES
    block_size: int = BLOCK_SIZE  # tokens per KV-cache block

    def __post_init__(self) -> None:
        if not 0 < self.utilization <= 1:
            raise ValueError(f"utilization must be in (0, 1], got {self.utilization}")
        if self.capacity_bytes <= 0 or self.reserve_bytes < 0 or self.block_size <= 0:
            raise ValueError("capacity and block size must be positive, the reserve not negative")

    @classmethod
    def for_gpu(cls, gpu: GPU, **options) -> "MemoryBudget":
        return cls(capacity_bytes=gpu.memory_bytes, **options)

    @property
    def usable_bytes(self) -> float:
        return self.capacity_bytes * self.utilization

    def kv_bytes(self, weight_bytes: float) -> float:
        """Memory left for the KV cache: capacity * utilization - weights - reserve."""
        left = self.usable_bytes - weight_bytes - self.reserve_bytes
        if left <= 0:
            raise ValueError(
                f"weights ({weight_bytes / GIB:.2f} GiB) and reserve "
                f"({self.reserve_bytes / GIB:.2f} GiB) leave no room in "
                f"{self.usable_bytes / GIB:.2f} GiB"
            )
        return left

    def tokens(self, weight_bytes: float, kappa: float) -> int:
        """Whole blocks of KV cache that fit, in tokens."""
        if kappa <= 0:
            raise ValueError(f"kappa must be positive, got {kappa}")
        return int(self.kv_bytes(weight_bytes) // (self.block_size * kappa)) * self.block_size


def fits(gpu: GPU, model: ModelSpec, context: int = 0, fmt: WeightFormat | None = None) -> bool:
    """Do the weights and one sequence's KV cache of `context` tokens fit in the card at all?"""
    need = resident_weight_bytes(model, fmt) + kv_cache_bytes(model, context)
    return need <= gpu.memory_bytes
