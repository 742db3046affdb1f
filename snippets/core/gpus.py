"""GPU specifications (core/gpus.toml): dense peak compute, memory bandwidth, capacity, source."""

import tomllib
from dataclasses import dataclass
from pathlib import Path

GPUS_FILE = Path(__file__).resolve().parent / "gpus.toml"
GIB = 2**30


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    bf16_dense_tflops: float
    memory_bandwidth_gbs: float
    memory_gb: float  # as marketed; DRAM chips are binary, so "24 GB" holds 24 GiB
    memory_type: str
    source: str
    fp8_dense_tflops: float | None = None  # FP8 tensor cores (W8A8); None where there are none

    @property
    def peak_flops(self) -> float:
        return self.bf16_dense_tflops * 1e12

    @property
    def bandwidth_bytes(self) -> float:
        return self.memory_bandwidth_gbs * 1e9

    @property
    def memory_bytes(self) -> float:
        """Capacity read as binary gibibytes (how the chips are built and what CUDA reports)."""
        return self.memory_gb * GIB

    @property
    def ridge_point(self) -> float:
        """FLOPs per byte where the roofline turns from memory-bound to compute-bound."""
        return self.peak_flops / self.bandwidth_bytes


def load_gpus(path: Path = GPUS_FILE) -> dict[str, GPU]:
    with path.open("rb") as f:
        table = tomllib.load(f)
    return {key: GPU(key=key, **row) for key, row in table.items()}


def load_gpu(key: str) -> GPU:
    gpus = load_gpus()
    if key not in gpus:
        raise KeyError(f"no GPU '{key}' in {GPUS_FILE} (known: {', '.join(gpus)})")
    return gpus[key]
