"""HBM bytes of one layer's attention, with and without the S x S scores written out.

Prefill: standard attention writes the scores S = QK^T to HBM, reads them for the softmax, writes
the probabilities P and reads them for P.V: four passes over an S x S matrix per query head.
Tiled attention (FlashAttention) keeps each tile of scores on chip and streams K and V past each
tile of query rows. Decode: one query row per sequence; a paged kernel walks the block table and
reads each block's K and V once. Every figure comes from the core (core.kernels); HBM traffic only,
as FlashAttention's analysis counts it (an L2 hit on a repeated K/V read is not modelled).

Run it: python snippets/kernels_cuda_graphs/attention_io.py
"""

from core.engine import BLOCK_SIZE
from core.kernels import attention_io_bytes, kv_block_bytes_per_layer, kv_blocks
from core.models import load_model
from core.reference import BF16_MODEL, PROMPT_LENGTHS

QUERY_TILE = 128  # query rows per tile (FlashAttention-2's forward kernel uses 64 or 128)
DECODE_CONTEXT = 1024  # cached tokens of one decoding sequence
GB = 1e9


def prefill_table(model, lengths=PROMPT_LENGTHS, tile: int = QUERY_TILE) -> list[str]:
    lines = [
        f"{'prompt S':>9} {'scores GB':>10} {'standard GB':>12} {'tiled GB':>9} {'saving':>7}",
    ]
    for s in lengths:
        io = attention_io_bytes(model, s, tile)
        lines.append(
            f"{s:>9,} {io.scores_bytes / GB:10.3f} {io.naive_bytes / GB:12.3f} "
            f"{io.tiled_bytes / GB:9.3f} {io.saving:6.1f}x"
        )
    return lines


def main() -> None:
    model = load_model(BF16_MODEL)
    print(
        f"{model.name}: {model.num_heads} query heads, {model.num_kv_heads} KV heads, "
        f"head dim {model.head_dim}; one layer's prefill attention, 16-bit values, "
        f"query tile {QUERY_TILE}"
    )
    print("\n".join(prefill_table(model)))
    print()
    blocks = kv_blocks(DECODE_CONTEXT)
    per_block = kv_block_bytes_per_layer(model)
    print(
        f"decode, context {DECODE_CONTEXT:,}: {blocks} blocks of {BLOCK_SIZE} tokens, "
        f"{per_block / 1024:.0f} KiB of K and V per block per layer, "
        f"{blocks * per_block / 2**20:.1f} MiB per layer per sequence, "
        f"{blocks * per_block * model.num_layers / 2**20:.0f} MiB over {model.num_layers} layers"
    )


if __name__ == "__main__":
    main()
