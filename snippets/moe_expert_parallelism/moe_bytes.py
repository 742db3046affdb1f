"""Mixture-of-experts arithmetic: total against active parameters, the bytes a decode step reads
as the batch grows, the critical batch beside a dense model of the same active size, and what
expert parallelism moves per token.

Routing is assumed uniform: each token picks k of E experts at random, independently, so a layer
reads E * (1 - (1 - k/E)^B) distinct experts for B tokens (core.moe.expected_distinct_experts).
Times are roofline lower bounds on one GPU (core.roofline.bound). Stdlib + the core only: it also
runs in the browser.
"""

from core.gpus import load_gpu
from core.moe import (
    active_params,
    all_to_all_bytes_per_token,
    allgather_reducescatter_bytes_per_token,
    critical_batch_search,
    decode_weight_bytes,
    dense_twin_bound,
    expected_distinct_experts,
    load_moe_model,
    moe_decode_bound,
    moe_param_breakdown,
    total_params,
)
from core.parallel import allreduce_bytes_per_token

MODELS = ("qwen3-30b-a3b", "qwen3-235b-a22b")
MODEL = MODELS[0]  # the one the decode sweep uses: it fits on one GPU in BF16
GPU_KEY = "h100_sxm"
CONTEXT = 0  # KV reads left out: the weights' own critical batch (section 3 adds the KV)
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
EP_SIZES = (2, 4, 8)


def critical_batches(gpu, model, context: int = CONTEXT) -> tuple[int | None, int | None]:
    """(MoE, dense twin): the smallest batch at which a decode step is compute-bound."""
    moe = critical_batch_search(lambda b: moe_decode_bound(gpu, model, b, context))
    dense = critical_batch_search(lambda b: dense_twin_bound(gpu, model, b, context))
    return moe, dense


def main() -> None:
    print("Parameters (exact, from config.json):")
    for key in MODELS:
        m = load_moe_model(key)
        print(
            f"  {m.name}: E={m.num_experts}, k={m.experts_per_token}, "
            f"total {total_params(m):,} ({total_params(m) / 1e9:.1f}B), "
            f"active {active_params(m):,} ({active_params(m) / 1e9:.2f}B)"
        )
        for part, n in moe_param_breakdown(m).items():
            if n:
                print(f"      {part:<18} {n:>16,}")
    gpu, m = load_gpu(GPU_KEY), load_moe_model(MODEL)
    print(f"\n{m.name} decode on the {gpu.name}, BF16, context {CONTEXT}: per step")
    print(
        f"{'batch':>6} {'experts/layer':>13} {'weights GB':>10} {'MoE ms':>7} "
        f"{'dense ms':>8} {'MoE tok/s':>10} {'dense tok/s':>11}"
    )
    for b in BATCHES:
        moe, dense = moe_decode_bound(gpu, m, b, CONTEXT), dense_twin_bound(gpu, m, b, CONTEXT)
        touched = expected_distinct_experts(m.num_experts, m.experts_per_token, b)
        print(
            f"{b:>6} {touched:>13.1f} {decode_weight_bytes(m, b) / 1e9:>10.2f} "
            f"{moe.seconds * 1e3:>7.2f} {dense.seconds * 1e3:>8.2f} "
            f"{b / moe.seconds:>10,.0f} {b / dense.seconds:>11,.0f}"
        )
    moe_b, dense_b = critical_batches(gpu, m)
    print(f"critical batch: MoE {moe_b}, dense model of the same active size {dense_b}")
    print(f"\nBytes that cross links per token, all layers ({m.name}, BF16):")
    print(f"  tensor-parallel all-reduces (2*L*d*b): {allreduce_bytes_per_token(m):>12,.0f}")
    for ep in EP_SIZES:
        print(
            f"  EP={ep}: allgather_reducescatter "
            f"{allgather_reducescatter_bytes_per_token(m, ep):>12,.0f}"
            f"   all-to-all {all_to_all_bytes_per_token(m, ep):>12,.0f}"
        )


if __name__ == "__main__":
    main()
