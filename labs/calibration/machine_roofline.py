"""Your machine's own roofline, then the reference loop against it.

1. Memory bandwidth: a STREAM-style triad a = b + s*c over arrays far larger than any cache,
   counted as STREAM counts it (three arrays of bytes per pass; the write-allocate read of `a`
   is not counted, so a CPU that does it shows a little less than its bus can move).
2. Matrix-multiply throughput: square BF16 matmuls, 2n^3 FLOPs each, the best of a few sizes.
3. The reference loop (reference_loop.py) on the same machine, and every measured time beside
   the core's floor for the *measured* machine (core.measured): the share of its own roofline.

    python labs/calibration/machine_roofline.py                     # ~1-2 min on a laptop
    python labs/calibration/machine_roofline.py --smoke             # seconds (CI)
    python labs/calibration/machine_roofline.py --device cuda --model qwen2.5-7b-instruct ...

Writes one JSON file: the reference loop's results plus a "machine" block (schema.json here).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import reference_loop as loop  # beside this script

from core.measured import compare, measured_gpu

MiB = 2**20


def _best_seconds(fn, device: str, repeats: int) -> float:
    return min(loop._timed(fn, device, repeats))


def stream_triad_gbs(device: str, array_bytes: int, repeats: int) -> float:
    """Bytes moved per second by a = b + 3*c on float32 arrays of array_bytes each, in GB/s."""
    import torch

    n = array_bytes // 4
    b = torch.rand(n, device=device)
    c = torch.rand(n, device=device)
    a = torch.empty(n, device=device)
    seconds = _best_seconds(partial(torch.add, b, c, alpha=3.0, out=a), device, repeats)
    return 3 * array_bytes / seconds / 1e9


def matmul_tflops(device: str, sizes: tuple[int, ...], repeats: int) -> float:
    """The best BF16 matmul throughput over square sizes n: 2 n^3 FLOPs per product, in TFLOP/s."""
    import torch

    best = 0.0
    for n in sizes:
        x = torch.randn(n, n, device=device, dtype=torch.bfloat16)
        y = torch.randn(n, n, device=device, dtype=torch.bfloat16)
        seconds = _best_seconds(partial(torch.matmul, x, y), device, repeats)
        best = max(best, 2 * n**3 / seconds / 1e12)
    return best


def measure_machine(device: str, smoke: bool) -> dict:
    """The machine as the core's GPU record needs it (core.measured.measured_gpu)."""
    record = loop.device_record(device)
    if smoke:
        array_bytes, sizes, repeats = 16 * MiB, (256,), 2
    elif device == "cuda":
        array_bytes, sizes, repeats = 1024 * MiB, (4096, 8192), 10
    else:  # far past the last-level cache of any laptop or server CPU
        array_bytes, sizes, repeats = 256 * MiB, (1024, 2048), 5
    return {
        "name": record["name"],
        "slug": record["slug"],
        "memory_bytes": record["memory_bytes"],
        "date": datetime.now(UTC).date().isoformat(),
        "bandwidth_gbs": stream_triad_gbs(device, array_bytes, repeats),
        "bf16_tflops": matmul_tflops(device, sizes, repeats),
        "method": {
            "triad_array_bytes": array_bytes,
            "matmul_sizes": list(sizes),
            "repeats": repeats,
        },
    }


def main(argv: list[str] | None = None) -> None:
    args = loop.parse_args(argv)
    plan = loop.plan_from(args)
    loop.preflight(plan)  # before any tensor: torch present, device there, memory enough
    if plan.threads:
        import torch

        torch.set_num_threads(plan.threads)
    start = time.perf_counter()
    machine = measure_machine(plan.device, args.smoke)
    print(
        f"{machine['name']}: triad {machine['bandwidth_gbs']:.1f} GB/s, "
        f"BF16 matmul {machine['bf16_tflops'] * 1e3:.1f} GFLOP/s"
    )
    doc = loop.run(plan) | {"machine": machine}
    gpu = measured_gpu(machine)
    print(f"{'phase':8} {'batch':>5} {'tokens':>6} {'measured':>12} {'floor':>12}  share  bound by")
    for c in compare(gpu, plan.model, doc["measurements"]):
        print(
            f"{c.phase:8} {c.batch:5} {c.tokens:6} {c.measured_s * 1e3:9.2f} ms "
            f"{c.floor.seconds * 1e3:9.2f} ms"
            f"  {c.share:5.0%}  {c.bound_by}"
        )
    out = args.out or Path(
        loop.REPO,
        ".cache",
        "lab-results",
        machine["slug"],
        f"calibration-{doc['date'].replace('-', '').replace(':', '')}.json",
    )
    print(f"results: {loop.write(doc, out)}  ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
