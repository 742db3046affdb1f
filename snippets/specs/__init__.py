"""Shared specifications for every lesson: GPUs (gpus.toml) and models (models/*.json)."""

import tomllib
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    bf16_dense_tflops: float
    memory_bandwidth_gbs: float
    memory_gb: float
    memory_type: str
    source: str

    @property
    def peak_flops(self) -> float:
        return self.bf16_dense_tflops * 1e12

    @property
    def bandwidth_bytes(self) -> float:
        return self.memory_bandwidth_gbs * 1e9

    @property
    def ridge_point(self) -> float:
        """FLOPs per byte where the roofline turns from memory-bound to compute-bound."""
        return self.peak_flops / self.bandwidth_bytes


def load_gpus(path: Path = DATA_DIR / "gpus.toml") -> dict[str, GPU]:
    with path.open("rb") as f:
        table = tomllib.load(f)
    return {key: GPU(key=key, **row) for key, row in table.items()}
