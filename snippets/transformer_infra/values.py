"""Figures the Transformer lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ transformer_infra.<name> }}; coursesite.values fills them in.
Run `python snippets/transformer_infra/values.py` to list every name and its value.
"""

from decimal import ROUND_DOWN, Decimal

from core.formats import BF16, FP8, bits_per_linear_weight, resident_weight_bytes
from core.formats import weight_bytes_by_part as weight_bytes
from core.forward import attention_flops_per_token, decode_flops, decode_matmul_params
from core.models import ModelSpec, layer_parameters, load_model, non_embedding_params, params
from transformer_infra.flops_per_token import attention_equals_weights_context
from transformer_infra.model_cards import in_billions
from transformer_infra.param_count import parameter_rows
from transformer_infra.weight_bytes import PUBLISHED_SHARDS_GB, awq_format

SHORT_CONTEXT = 4096  # prose: attention's share of the FLOPs at a chat-sized context
ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP = ("gate_proj", "up_proj", "down_proj")
NORMS = ("input_layernorm", "post_attention_layernorm", "norm")


def card_billions(spec: ModelSpec, field: str) -> Decimal:
    """A model card figure such as "70.0B" as the exact decimal 70.0."""
    return Decimal(spec.model_card[field].removesuffix("B"))


def values() -> dict[str, str]:
    qwen = load_model("qwen2.5-7b-instruct")
    llama = load_model("llama-3.1-8b-instruct")
    q72 = load_model("qwen2.5-72b-instruct")
    n = params(qwen)
    totals = {name.split()[0]: total for name, _, total in parameter_rows(qwen)}
    layer = {name.split()[0]: count for name, count in layer_parameters(qwen)}
    attention_layer = sum(layer[m] for m in ATTENTION)
    mlp_layer = sum(layer[m] for m in MLP)
    embedding = totals["embed_tokens"]
    context = qwen.max_position_embeddings
    weights_flops = decode_flops(qwen)
    attention_short = attention_flops_per_token(qwen, SHORT_CONTEXT)
    attention_context = attention_flops_per_token(qwen, context)
    awq = awq_format()
    awq_parts = weight_bytes(qwen, awq)
    awq_groups = awq_parts["group scales"] + awq_parts["group zeros"]
    awq_embeddings = awq_parts["embedding"] + awq_parts["lm_head"]
    bf16_bytes, fp8_bytes, awq_bytes = (resident_weight_bytes(qwen, f) for f in (BF16, FP8, awq))
    bf16_shards = PUBLISHED_SHARDS_GB["qwen2.5-7b-instruct"]
    awq_shards = PUBLISHED_SHARDS_GB["qwen2.5-7b-instruct-awq"]
    q72_card_gap = card_billions(q72, "params") - card_billions(q72, "non_embedding_params")
    return {
        # the config
        "model_name": qwen.name,
        "hidden": f"{qwen.hidden_size:,}",
        "intermediate": f"{qwen.intermediate_size:,}",
        "layers": f"{qwen.num_layers}",
        "heads": f"{qwen.num_heads}",
        "kv_heads": f"{qwen.num_kv_heads}",
        "head_dim": f"{qwen.head_dim}",
        "kv_dim": f"{qwen.kv_dim:,}",
        "vocab": f"{qwen.vocab_size:,}",
        "tied": f"{qwen.tie_word_embeddings}".lower(),
        "context_len": f"{context:,}",
        # exact parameter count
        "params": f"{n:,}",
        "params_rounded": in_billions(n, qwen.model_card["params"]),
        "params_truncated": in_billions(n, qwen.model_card["params"], ROUND_DOWN),
        "card_params": qwen.model_card["params"],
        "non_embedding": f"{non_embedding_params(qwen):,}",
        "non_embedding_rounded": in_billions(non_embedding_params(qwen), "0.00B"),
        "non_embedding_truncated": in_billions(non_embedding_params(qwen), "0.00B", ROUND_DOWN),
        "card_non_embedding": qwen.model_card["non_embedding_params"],
        "per_layer": f"{sum(layer.values()):,}",
        "embedding": f"{embedding:,}",
        "embedding_share": f"{embedding / n:.1%}",
        "embedding_pair_share": f"{2 * embedding / n:.1%}",
        "mlp_share": f"{mlp_layer * qwen.num_layers / n:.1%}",
        "attention_share": f"{attention_layer * qwen.num_layers / n:.1%}",
        "mlp_to_attention": f"{mlp_layer / attention_layer:.1f}",
        "qkv_biases": f"{qwen.num_layers * (qwen.hidden_size + 2 * qwen.kv_dim):,}",
        "norm_params": f"{sum(totals[m] for m in NORMS):,}",
        # FLOPs per token
        "two_n_gflop": f"{2 * n / 1e9:.2f}",
        "matmul_weights": f"{decode_matmul_params(qwen):,}",
        "matmul_gflop": f"{weights_flops / 1e9:.2f}",
        "two_n_overstates": f"{2 * n / weights_flops - 1:.1%}",
        "attention_equals_weights": f"{attention_equals_weights_context(qwen):,.0f}",
        "attention_equals_weights_mha": f"{attention_equals_weights_context(qwen.as_mha()):,.0f}",
        "short_context": f"{SHORT_CONTEXT:,}",
        "attention_share_short": f"{attention_short / weights_flops:.1%}",
        "attention_share_context": f"{attention_context / weights_flops:.1%}",
        # bytes of weights
        "bf16_gb": f"{bf16_bytes / 1e9:.2f}",
        "bf16_gib": f"{bf16_bytes / 2**30:.2f}",
        "gib_gb_gap": f"{2**30 / 1e9 - 1:.1%}",
        "fp8_gb": f"{fp8_bytes / 1e9:.2f}",
        "awq_gb": f"{awq_bytes / 1e9:.2f}",
        "awq_gib": f"{awq_bytes / 2**30:.2f}",
        "bf16_published_gb": f"{sum(bf16_shards):.2f}",
        "bf16_shards": " + ".join(f"{s:g}" for s in bf16_shards),
        "awq_published_gb": f"{sum(awq_shards):.2f}",
        "awq_shards": " + ".join(f"{s:g}" for s in awq_shards),
        "awq_bits": f"{awq.bits}",
        "awq_group_size": f"{awq.group_size}",
        "awq_naive_gb": f"{n * awq.bits / 8 / 1e9:.2f}",
        "awq_group_overhead_mb": f"{awq_groups / 1e6:.0f}",
        "awq_embedding_gb": f"{awq_embeddings / 1e9:.2f}",
        "awq_embedding_share": f"{awq_embeddings / awq_bytes:.0%}",
        "awq_bits_per_linear": f"{bits_per_linear_weight(qwen, awq):.3f}",
        "awq_bits_per_param": f"{8 * awq_bytes / n:.2f}",
        "fp8_bits_per_param": f"{8 * fp8_bytes / n:.2f}",
        "bf16_to_awq": f"{bf16_bytes / awq_bytes:.2f}",
        # the other model cards
        "llama_name": llama.name,
        "llama_params": f"{params(llama):,}",
        "llama_card": llama.model_card["params"],
        "llama_bf16_gb": f"{resident_weight_bytes(llama, BF16) / 1e9:.2f}",
        "llama_two_n_gflop": f"{2 * params(llama) / 1e9:.2f}",
        "q72_name": q72.name,
        "q72_params": f"{params(q72):,}",
        "q72_card": q72.model_card["params"],
        "q72_non_embedding": f"{non_embedding_params(q72):,}",
        "q72_non_embedding_rounded": in_billions(non_embedding_params(q72), "0.0B"),
        "q72_card_non_embedding": q72.model_card["non_embedding_params"],
        "q72_card_gap": f"{q72_card_gap}B",
        "q72_embedding_pair": in_billions(params(q72) - non_embedding_params(q72), "0.00B"),
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
