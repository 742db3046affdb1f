"""The Transformer lesson: its parameter table, card readings, FLOPs per token, bytes of weights.

Counts, FLOPs and bytes themselves are the core's (tests/test_core.py); this file tests what the
lesson builds on them and the figures it quotes.
"""

import runpy
from decimal import ROUND_DOWN

import pytest

from conftest import ROOT
from core.formats import BF16, FP8, resident_weight_bytes, weight_bytes_by_part
from core.forward import attention_flops_per_token, decode_flops
from core.models import load_model, load_models, non_embedding_params, param_breakdown, params
from transformer_infra import values as lesson_values
from transformer_infra.flops_per_token import attention_equals_weights_context
from transformer_infra.model_cards import card_reading, counts, in_billions
from transformer_infra.param_count import main as param_count_main
from transformer_infra.param_count import parameter_rows, share
from transformer_infra.weight_bytes import PUBLISHED_SHARDS_GB, awq_format, rows

SNIPPETS = ROOT / "snippets" / "transformer_infra"
QWEN = load_model("qwen2.5-7b-instruct")
MODELS = [m for m in load_models().values() if m.quantization is None]


@pytest.mark.parametrize("spec", MODELS, ids=lambda m: m.key)
def test_rows_add_up_to_the_core_count_component_by_component(spec):
    rows = {name.split()[0]: (each, total) for name, each, total in parameter_rows(spec)}
    parts = param_breakdown(spec)
    assert sum(total for _, total in rows.values()) == params(spec)
    assert rows["embed_tokens"][1] == parts["embedding"]
    assert rows["lm_head"][1] == parts["lm_head"]
    attention = sum(rows[m][1] for m in ("q_proj", "k_proj", "v_proj", "o_proj"))
    assert attention == parts["attention"]
    assert sum(rows[m][1] for m in ("gate_proj", "up_proj", "down_proj")) == parts["mlp"]
    norms = ("input_layernorm", "post_attention_layernorm", "norm")
    assert sum(rows[m][1] for m in norms) == parts["norms"]


def test_the_table_shows_qwen2_biases_and_per_layer_counts():
    rows = {name: each for name, each, _ in parameter_rows(QWEN)}
    assert rows["q_proj + bias"] == 3584 * 3584 + 3584
    assert rows["k_proj + bias"] == rows["v_proj + bias"] == 3584 * 512 + 512
    assert rows["o_proj"] == 3584 * 3584 and rows["embed_tokens"] is None
    llama = {name: each for name, each, _ in parameter_rows(load_model("llama-3.1-8b-instruct"))}
    assert llama["q_proj"] == 4096 * 4096 and llama["k_proj"] == 4096 * 1024


def test_the_table_prints_the_exact_total(capsys):
    param_count_main()
    out = capsys.readouterr().out
    assert "7,615,616,512" in out and "6,525,621,760" in out
    assert share(1, 10**6) == "<0.01%" and share(1, 4) == "25.00%"


def test_the_exact_count_and_its_card_readings():
    assert counts(QWEN) == {"params": 7_615_616_512, "non_embedding_params": 6_525_621_760}
    assert in_billions(params(QWEN), "7.61B") == "7.62B"  # rounded
    assert in_billions(params(QWEN), "7.61B", ROUND_DOWN) == "7.61B"  # what the card prints
    assert card_reading(params(QWEN), "7.61B") == "truncated"
    assert card_reading(non_embedding_params(QWEN), "6.53B") == "rounded"
    q72 = load_model("qwen2.5-72b-instruct")
    assert card_reading(non_embedding_params(q72), "70.0B") == "differs"


@pytest.mark.parametrize("bad", ["7.61", "7.61 B", "seven"])
def test_in_billions_rejects_figures_that_are_not_like_a_card(bad):
    with pytest.raises(ValueError, match="a card figure looks like"):
        in_billions(params(QWEN), bad)


def test_attention_catches_up_with_the_weights_at_a_context_the_lesson_derives():
    s = attention_equals_weights_context(QWEN)
    assert attention_flops_per_token(QWEN, 1) * s == pytest.approx(decode_flops(QWEN))
    # 2 x matmul weights (layers + lm_head) / (4 x 28 layers x 3584)
    matmul = 28 * (2 * 3584 * 3584 + 2 * 3584 * 512 + 3 * 3584 * 18944) + 152064 * 3584
    assert s == pytest.approx(2 * matmul / (4 * 28 * 3584))


def test_awq_format_is_the_checkpoints():
    awq = awq_format()
    assert (awq.bits, awq.group_size, awq.zero_point) == (4, 128, True)


def test_the_bytes_table_has_bf16_fp8_and_awq():
    (bf16, n_bf16, s_bf16), (fp8, n_fp8, s_fp8), (awq, n_awq, s_awq) = rows()
    assert (bf16, fp8, awq) == (BF16, FP8, awq_format())
    assert n_bf16 == 2 * 7_615_616_512 and n_awq == 5_570_747_392
    assert n_fp8 == resident_weight_bytes(QWEN, FP8) and s_fp8 is None
    assert (s_bf16, s_awq) == (PUBLISHED_SHARDS_GB["qwen2.5-7b-instruct"], (4, 1.57))


@pytest.mark.parametrize(
    ("key", "fmt"),
    [("qwen2.5-7b-instruct", BF16), ("qwen2.5-7b-instruct-awq", awq_format())],
)
def test_exact_bytes_match_the_published_shards_to_their_displayed_precision(key, fmt):
    shards = PUBLISHED_SHARDS_GB[key]
    # each shard is listed to 3 significant digits: at most half a unit of 0.01 GB off
    assert abs(resident_weight_bytes(QWEN, fmt) / 1e9 - sum(shards)) <= 0.005 * len(shards)


def test_values_are_strings_and_agree_with_the_estimators():
    v = lesson_values.values()
    assert all(isinstance(x, str) for x in v.values())
    assert v["params"] == "7,615,616,512"
    assert v["params_rounded"] == "7.62B"
    assert v["card_params"] == v["params_truncated"] == "7.61B"
    assert v["awq_gb"] == v["awq_published_gb"] and v["bf16_gb"] == v["bf16_published_gb"]
    assert v["awq_bits_per_linear"] == "4.156"
    assert v["llama_params"] == "8,030,261,248" and v["q72_params"] == "72,706,203,648"
    parts = weight_bytes_by_part(QWEN, awq_format())
    assert (
        v["awq_group_overhead_mb"] == f"{(parts['group scales'] + parts['group zeros']) / 1e6:.0f}"
    )


def test_values_module_lists_its_names_when_run(capsys):
    runpy.run_path(str(SNIPPETS / "values.py"), run_name="__main__")
    assert "params = 7,615,616,512" in capsys.readouterr().out
