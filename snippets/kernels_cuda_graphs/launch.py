"""Launch overhead against the decode step's floor: why CUDA graphs matter most at small batch.

In eager mode the CPU launches every kernel of a decode step one by one: the layers' kernels and
the model's own (core.kernels.QWEN2_LAYER_KERNELS, a count from vLLM's model code, not a trace).
If each launch costs the host t_launch, the step takes at least kernels x t_launch however fast
the GPU is, even when every launch overlaps the GPU's work. The step's floor is the roofline
lower bound (core.roofline.tpot_bound). The per-kernel cost at which the two are equal is the
break-even launch cost: a faster card has a lower floor and so tolerates less. A CUDA graph
replays the whole step with one launch. The per-kernel costs in LAUNCH_COSTS_US are assumptions
to sweep, not measurements; measure yours with a profiler.

Run it: python snippets/kernels_cuda_graphs/launch.py
"""

from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.kernels import (
    QWEN2_LAYER_KERNELS,
    break_even_launch_s,
    default_capture_sizes,
    kernels_per_step,
    launch_ratio,
)
from core.models import load_model
from core.reference import BF16_MODEL
from core.roofline import tpot_bound

GPU_KEYS = ("rtx_4090", "h200_sxm")  # a slower and a faster card
CONTEXT = 1024
BATCHES = (1, 8, 64, 256)
LAUNCH_COSTS_US = (5, 10, 20)  # assumed host cost per kernel launch, microseconds


def main() -> None:
    model = load_model(BF16_MODEL)
    fmt = checkpoint_format(model)
    kernels = kernels_per_step(model)
    print(
        f"{model.name}: {len(QWEN2_LAYER_KERNELS)} kernels per layer x {model.num_layers} layers"
        f" + the model's own = {kernels} kernels per decode step (eager)"
    )
    gpus = load_gpus()
    header = "".join(f"{f'{c} us/kernel':>14}" for c in LAUNCH_COSTS_US)
    for key in GPU_KEYS:
        gpu = gpus[key]
        print(f"\n{gpu.name}, BF16, context {CONTEXT:,}: launch time / the step's floor")
        print(f"{'batch':>6} {'floor ms':>9} {'break-even us':>14}{header}")
        for b in BATCHES:
            floor = tpot_bound(gpu, model, CONTEXT, fmt, b).seconds
            even = break_even_launch_s(floor, kernels)
            shares = "".join(
                f"{launch_ratio(floor, kernels, c * 1e-6):>14.2f}" for c in LAUNCH_COSTS_US
            )
            print(f"{b:>6} {floor * 1e3:9.2f} {even * 1e6:14.1f}{shares}")
    sizes = default_capture_sizes()
    print(
        f"\nCUDA graph capture sizes with the LLM defaults: {len(sizes)} "
        f"({', '.join(map(str, sizes[:5]))}, ..., {sizes[-1]})"
    )


if __name__ == "__main__":
    main()
