"""A machine measured by the reader (labs/calibration/machine_roofline.py), as the core's GPU, and
the reference loop's times set beside the floors for that machine.

The floor for a measured time is the core's own bound (core.roofline) with the machine's measured
copy bandwidth and matrix-multiply throughput in place of a datasheet's: the same arithmetic the
lessons use for an H100, applied to the laptop or CI runner the numbers came from.
"""

from dataclasses import dataclass

from core.formats import BF16
from core.gpus import GPU
from core.models import ModelSpec
from core.roofline import Bound, tpot_bound, ttft_bound


def measured_gpu(machine: dict) -> GPU:
    """The core's GPU record for a measured machine: {"name", "slug", "bandwidth_gbs",
    "bf16_tflops", "memory_bytes", "date"} as machine_roofline.py writes it."""
    return GPU(
        key=f"measured_{machine['slug']}",
        name=machine["name"],
        bf16_dense_tflops=machine["bf16_tflops"],
        memory_bandwidth_gbs=machine["bandwidth_gbs"],
        memory_gb=machine["memory_bytes"] / 2**30,
        memory_type="measured",
        source=f"measured by labs/calibration/machine_roofline.py on {machine['date']}",
        memory_mib=machine["memory_bytes"] // 2**20,
    )


@dataclass(frozen=True)
class Comparison:
    """One measured time of the reference loop and its floor on the measured machine."""

    phase: str  # "prefill" or "decode"
    batch: int
    tokens: int  # prefill: prompt length; decode: cached context per sequence
    measured_s: float
    floor: Bound

    @property
    def share(self) -> float:
        """floor / measured: the share of the roofline the loop reached (1 = on the roof)."""
        return self.floor.seconds / self.measured_s

    @property
    def bound_by(self) -> str:
        return "memory" if self.floor.memory_bound else "compute"


def floor(gpu: GPU, model: ModelSpec, phase: str, batch: int, tokens: int) -> Bound:
    """Prefill of `tokens` prompt tokens (batch 1), or one decode step of `batch` sequences that
    each hold `tokens` cached tokens: the roofline bound for BF16 weights and KV."""
    if phase == "prefill":
        return ttft_bound(gpu, model, tokens, BF16, batch)
    if phase == "decode":
        return tpot_bound(gpu, model, tokens, BF16, batch)
    raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")


def compare(gpu: GPU, model: ModelSpec, measurements: list[dict]) -> list[Comparison]:
    """Each measurement ({"phase", "batch", "tokens", "median_s"}) beside its floor on `gpu`."""
    return [
        Comparison(
            m["phase"],
            m["batch"],
            m["tokens"],
            m["median_s"],
            floor(gpu, model, m["phase"], m["batch"], m["tokens"]),
        )
        for m in measurements
    ]
