"""Figures the kernels and CUDA graphs lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ kernels_cuda_graphs.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/kernels_cuda_graphs/values.py` to list every name and its value.
"""

from core.engine import MAX_NUM_BATCHED_TOKENS
from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.kernels import (
    QWEN2_LAYER_KERNELS,
    QWEN2_MODEL_KERNELS,
    attention_io_bytes,
    break_even_launch_s,
    default_capture_sizes,
    kernels_per_step,
    kv_block_bytes_per_layer,
    kv_blocks,
    launch_ratio,
)
from core.models import load_model
from core.reference import BF16_MODEL, PROMPT_LENGTHS
from core.roofline import tpot_bound
from kernels_cuda_graphs import lab_results as lab
from kernels_cuda_graphs.attention_io import DECODE_CONTEXT, QUERY_TILE
from kernels_cuda_graphs.launch import BATCHES, CONTEXT, GPU_KEYS, LAUNCH_COSTS_US

SMALL_MAX_NUM_SEQS = 16  # a latency-tuned deployment's max_num_seqs
SPEC_TOKENS = 4  # num_speculative_tokens, as in the speculative decoding lesson
TRANSFER_MODEL = "llama-3.1-8b-instruct"
QUIZ_LENGTH = 32_768  # the numeric self-test: the longest prompt the model takes


def values() -> dict[str, str]:
    gpus = load_gpus()
    model = load_model(BF16_MODEL)
    fmt = checkpoint_format(model)
    short, middle, long = PROMPT_LENGTHS
    io_short, io_mid, io_long = (attention_io_bytes(model, s, QUERY_TILE) for s in PROMPT_LENGTHS)
    quiz = attention_io_bytes(model, QUIZ_LENGTH, QUERY_TILE)
    kernels = kernels_per_step(model)
    slow, fast = (gpus[k] for k in GPU_KEYS)
    mid_cost = LAUNCH_COSTS_US[len(LAUNCH_COSTS_US) // 2] * 1e-6
    first, last = BATCHES[0], BATCHES[-1]

    def floor(gpu, batch, m=model, f=fmt):
        return tpot_bound(gpu, m, CONTEXT, f, batch).seconds

    blocks = kv_blocks(DECODE_CONTEXT)
    per_block = kv_block_bytes_per_layer(model)
    sizes = default_capture_sizes()
    llama = load_model(TRANSFER_MODEL)
    llama_kernels = kernels_per_step(llama)
    llama_floor = floor(fast, 1, llama, checkpoint_format(llama))
    return {
        # FlashAttention's I/O argument
        "query_tile": f"{QUERY_TILE}",
        "io_short": f"{short:,}",
        "io_mid": f"{middle:,}",
        "io_long": f"{long:,}",
        "scores_long_gb": f"{io_long.scores_bytes / 1e9:.2f}",
        "scores_long_gib": f"{io_long.scores_bytes / 2**30:.2f}",
        "naive_long_gb": f"{io_long.naive_bytes / 1e9:.1f}",
        "tiled_long_gb": f"{io_long.tiled_bytes / 1e9:.2f}",
        "qkvo_long_gb": f"{io_long.qkvo_bytes / 1e9:.3f}",
        "saving_short": f"{io_short.saving:.1f}",
        "saving_mid": f"{io_mid.saving:.1f}",
        "saving_long": f"{io_long.saving:.1f}",
        "kv_reads_long": f"{-(-long // QUERY_TILE)}",
        # paged decode
        "decode_context": f"{DECODE_CONTEXT:,}",
        "decode_blocks": f"{blocks}",
        "decode_mib_per_layer": f"{blocks * per_block / 2**20:.1f}",
        "decode_mib_all_layers": f"{blocks * per_block * model.num_layers / 2**20:.0f}",
        # launch overhead
        "kernels_per_layer": f"{len(QWEN2_LAYER_KERNELS)}",
        "model_kernels": f"{len(QWEN2_MODEL_KERNELS)}",
        "kernels_per_step": f"{kernels}",
        "slow_gpu": slow.name,
        "fast_gpu": fast.name,
        "fast_floor_ms": f"{floor(fast, first) * 1e3:.2f}",
        "slow_even_us": f"{break_even_launch_s(floor(slow, first), kernels) * 1e6:.1f}",
        "fast_even_us": f"{break_even_launch_s(floor(fast, first), kernels) * 1e6:.1f}",
        "last_batch": f"{last}",
        "fast_even_us_last": f"{break_even_launch_s(floor(fast, last), kernels) * 1e6:.1f}",
        "launch_costs_us": ", ".join(f"{c}" for c in LAUNCH_COSTS_US),
        "mid_cost_us": f"{mid_cost * 1e6:.0f}",
        "slow_ratio_mid": f"{launch_ratio(floor(slow, first), kernels, mid_cost):.2f}",
        "fast_ratio_mid": f"{launch_ratio(floor(fast, first), kernels, mid_cost):.2f}",
        "fast_ratio_mid_last": f"{launch_ratio(floor(fast, last), kernels, mid_cost):.2f}",
        # CUDA graph capture sizes
        "capture_count": f"{len(sizes)}",
        "capture_largest": f"{sizes[-1]}",
        "capture_count_spec": f"{len(default_capture_sizes(num_speculative_tokens=SPEC_TOKENS))}",
        "spec_tokens": f"{SPEC_TOKENS}",
        "small_max_num_seqs": f"{SMALL_MAX_NUM_SEQS}",
        "capture_small": ", ".join(map(str, default_capture_sizes(SMALL_MAX_NUM_SEQS))),
        "capture_budget_tokens": f"{MAX_NUM_BATCHED_TOKENS:,}",
        # the lab (labs/kernels_cuda_graphs/cuda_graphs.py)
        "graphs_lab_prompt": f"{lab.LAB_PROMPT_TOKENS}",
        "graphs_lab_new": f"{lab.LAB_NEW_TOKENS}",
        "graphs_lab_batch_small": f"{min(lab.LAB_BATCHES)}",
        "graphs_lab_batch_large": f"{max(lab.LAB_BATCHES)}",
        # self-test
        "quiz_length": f"{QUIZ_LENGTH:,}",
        "quiz_scores_gib": f"{quiz.scores_bytes / 2**30:.1f}",
        "quiz_naive_gb": f"{quiz.naive_bytes / 1e9:.0f}",
        "quiz_tiled_gb": f"{quiz.tiled_bytes / 1e9:.1f}",
        "transfer_model": llama.name,
        "transfer_layers": f"{llama.num_layers}",
        "transfer_kernels": f"{llama_kernels}",
        "transfer_floor_ms": f"{llama_floor * 1e3:.2f}",
        "transfer_even_us": f"{break_even_launch_s(llama_floor, llama_kernels) * 1e6:.1f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
