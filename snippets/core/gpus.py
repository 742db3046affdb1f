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
    memory_gb: float  # as marketed ("24 GB"): a label, not a budget
    memory_type: str
    source: str
    fp8_dense_tflops: float | None = None  # FP8 tensor cores (W8A8); None where there are none
    memory_mib: int | None = None  # nvidia-smi's memory.total, as cited in memory_source
    memory_source: str | None = None
    compute_capability: str | None = None  # CUDA's "8.9": vLLM picks kernels by it

    @property
    def sm(self) -> tuple[int, int] | None:
        """The compute capability as (major, minor), comparable: (8, 9) >= (8, 9)."""
        if self.compute_capability is None:
            return None
        major, minor = self.compute_capability.split(".")
        return int(major), int(minor)

    @property
    def peak_flops(self) -> float:
        return self.bf16_dense_tflops * 1e12

    @property
    def bandwidth_bytes(self) -> float:
        return self.memory_bandwidth_gbs * 1e9

    @property
    def memory_bytes(self) -> float:
        """The capacity a memory budget starts from: nvidia-smi's total where it is known, else the
        marketed figure read as GiB (a card a reader adds without a reading)."""
        if self.memory_mib is not None:
            return self.memory_mib * 2**20
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
