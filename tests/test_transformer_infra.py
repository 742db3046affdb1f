"""The Transformer lesson's estimators: exact parameter counts, FLOPs per token, weight bytes."""

import runpy
from dataclasses import replace
from decimal import ROUND_DOWN

import pytest

from conftest import ROOT
from specs.models import load_model, load_models
from transformer_infra import values as lesson_values
from transformer_infra.flops_per_token import (
    attention_equals_weights_context,
    attention_flops_per_token,
    matmul_weights,
    weight_flops_per_token,
)
from transformer_infra.model_cards import card_reading, in_billions
from transformer_infra.param_count import layer_parts, parameter_rows
from transformer_infra.weight_bytes import (
    BF16,
    FP8,
    PUBLISHED_SHARDS_GB,
    WeightFormat,
    awq_format,
    bits_per_linear_weight,
    total_bytes,
    weight_bytes,
)

SNIPPETS = ROOT / "snippets" / "transformer_infra"
QWEN = load_model("qwen2.5-7b-instruct")
MODELS = [m for m in load_models().values() if m.quantization is None]


@pytest.mark.parametrize("spec", MODELS, ids=lambda m: m.key)
def test_rows_add_up_to_the_spec_count_component_by_component(spec):
    rows = {name.split()[0]: (each, total) for name, each, total in parameter_rows(spec)}
    parts = spec.param_breakdown()
    assert sum(total for _, total in rows.values()) == spec.params
    assert rows["embed_tokens"][1] == parts["embedding"]
    assert rows["lm_head"][1] == parts["lm_head"]
    attention = sum(rows[m][1] for m in ("q_proj", "k_proj", "v_proj", "o_proj"))
    assert attention == parts["attention"]
    assert sum(rows[m][1] for m in ("gate_proj", "up_proj", "down_proj")) == parts["mlp"]
    norms = ("input_layernorm", "post_attention_layernorm", "norm")
    assert sum(rows[m][1] for m in norms) == parts["norms"]


def test_qwen2_q_k_v_carry_biases_and_llama_does_not():
    qwen = dict(layer_parts(QWEN))
    assert qwen["q_proj + bias"] == 3584 * 3584 + 3584
    assert qwen["k_proj + bias"] == qwen["v_proj + bias"] == 3584 * 512 + 512
    assert qwen["o_proj"] == 3584 * 3584
    llama = dict(layer_parts(load_model("llama-3.1-8b-instruct")))
    assert llama["q_proj"] == 4096 * 4096 and llama["k_proj"] == 4096 * 1024


def test_the_exact_count_and_its_card_readings():
    assert QWEN.params == 7_615_616_512
    assert in_billions(QWEN.params, "7.61B") == "7.62B"  # rounded
    assert in_billions(QWEN.params, "7.61B", ROUND_DOWN) == "7.61B"  # what the card prints
    assert card_reading(QWEN.params, "7.61B") == "truncated"
    assert card_reading(QWEN.non_embedding_params, "6.53B") == "rounded"
    q72 = load_model("qwen2.5-72b-instruct")
    assert card_reading(q72.non_embedding_params, "70.0B") == "differs"


@pytest.mark.parametrize("bad", ["7.61", "7.61 B", "seven"])
def test_in_billions_rejects_figures_that_are_not_like_a_card(bad):
    with pytest.raises(ValueError):
        in_billions(QWEN.params, bad)


def test_weight_flops_are_two_per_weight_that_multiplies():
    biases = 28 * (3584 + 2 * 512)
    norms = 28 * 2 * 3584 + 3584
    embedding = 152064 * 3584
    assert matmul_weights(QWEN) == QWEN.params - embedding - biases - norms
    assert weight_flops_per_token(QWEN) == 2 * matmul_weights(QWEN)
    assert weight_flops_per_token(QWEN) < 2 * QWEN.params  # 2N overstates: the lookup is free


def test_attention_flops_grow_with_context_and_ignore_gqa():
    assert attention_flops_per_token(QWEN, 1000) == 4 * 28 * 1000 * 3584
    assert attention_flops_per_token(QWEN, 2000) == 2 * attention_flops_per_token(QWEN, 1000)
    mha = replace(QWEN, num_kv_heads=QWEN.num_heads)
    assert attention_flops_per_token(mha, 1000) == attention_flops_per_token(QWEN, 1000)
    s = attention_equals_weights_context(QWEN)
    assert attention_flops_per_token(QWEN, 1) * s == pytest.approx(weight_flops_per_token(QWEN))


@pytest.mark.parametrize("bad", [0, -1])
def test_attention_flops_reject_non_positive_contexts(bad):
    with pytest.raises(ValueError, match=r"context must be a positive number of tokens"):
        attention_flops_per_token(QWEN, bad)


@pytest.mark.parametrize("spec", MODELS, ids=lambda m: m.key)
def test_bf16_bytes_are_two_per_parameter(spec):
    assert total_bytes(spec, BF16) == 2 * spec.params


def test_fp8_keeps_embeddings_16_bit_and_stores_one_scale_per_matrix():
    parts = weight_bytes(QWEN, FP8)
    assert parts["linear weights"] == matmul_weights(QWEN) - 152064 * 3584  # 1 byte each
    assert parts["embed_tokens + lm_head"] == 2 * 2 * 152064 * 3584
    assert parts["tensor scales"] == 28 * 7 * 4


def test_awq_bytes_part_by_part():
    awq = awq_format()
    assert (awq.bits, awq.group_size, awq.zero_point) == (4, 128, True)
    parts = weight_bytes(QWEN, awq)
    linear = matmul_weights(QWEN) - 152064 * 3584
    assert parts["linear weights"] == linear // 2
    assert parts["group scales"] == linear // 128 * 2
    assert parts["group zeros"] == linear // 128 // 2
    assert total_bytes(QWEN, awq) == 5_570_747_392
    assert bits_per_linear_weight(QWEN, awq) == 4 + (16 + 4) / 128


@pytest.mark.parametrize(
    ("key", "fmt"),
    [("qwen2.5-7b-instruct", BF16), ("qwen2.5-7b-instruct-awq", awq_format())],
)
def test_exact_bytes_match_the_published_shards_to_their_displayed_precision(key, fmt):
    shards = PUBLISHED_SHARDS_GB[key]
    # each shard is listed to 3 significant digits: at most half a unit of 0.01 GB off
    assert abs(total_bytes(QWEN, fmt) / 1e9 - sum(shards)) <= 0.005 * len(shards)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bits": 3}, "bits must be 4, 8 or 16"),
        ({"bits": 4, "group_size": 0}, "group_size must be positive"),
        ({"bits": 4, "zero_point": True}, "zero point is stored per group"),
    ],
)
def test_weight_format_rejects_impossible_layouts(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WeightFormat("bad", **kwargs)


def test_a_group_size_that_does_not_divide_the_inputs_is_rejected():
    with pytest.raises(ValueError, match="not a multiple of group_size 100"):
        weight_bytes(QWEN, WeightFormat("g100", bits=4, group_size=100))


def test_values_are_strings_and_agree_with_the_estimators():
    v = lesson_values.values()
    assert all(isinstance(x, str) for x in v.values())
    assert v["params"] == "7,615,616,512"
    assert v["params_rounded"] == "7.62B"
    assert v["card_params"] == v["params_truncated"] == "7.61B"
    assert v["awq_gb"] == v["awq_published_gb"] and v["bf16_gb"] == v["bf16_published_gb"]


def test_values_module_lists_its_names_when_run(capsys):
    runpy.run_path(str(SNIPPETS / "values.py"), run_name="__main__")
    assert "params = 7,615,616,512" in capsys.readouterr().out
