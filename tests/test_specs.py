"""Shared specifications: GPU table, model configs, and the estimator's constants against them."""

import pytest

from prefill_decode.phase_intensity import QWEN25_7B
from specs import load_gpus
from specs.models import load_model, load_models


def test_every_gpu_has_positive_figures_and_a_source():
    gpus = load_gpus()
    assert {"rtx_4090", "rtx_3090", "a100_80gb_sxm", "l40s", "h100_sxm", "h200_sxm", "h20"} <= set(
        gpus
    )
    for gpu in gpus.values():
        assert gpu.bf16_dense_tflops > 0 and gpu.memory_bandwidth_gbs > 0 and gpu.memory_gb > 0
        assert gpu.source.strip(), f"{gpu.key} has no source"


def test_rtx_4090_ridge_point_is_about_164_flop_per_byte():
    assert load_gpus()["rtx_4090"].ridge_point == pytest.approx(165.2e12 / 1008e9)


def test_qwen25_7b_exact_parameter_count_from_config():
    model = load_model("qwen2.5-7b-instruct")
    parts = model.param_breakdown()
    assert parts["embedding"] == parts["lm_head"] == 152064 * 3584
    # per layer: q (+bias), k, v (+bias), o, gated MLP, two RMSNorms
    per_layer = (
        (3584 * 3584 + 3584) + 2 * (3584 * 512 + 512) + 3584 * 3584 + 3 * 3584 * 18944 + 2 * 3584
    )
    assert model.params == 28 * per_layer + 3584 + 2 * 152064 * 3584
    assert model.head_dim == 128 and model.kv_dim == 512


def test_parameter_counts_round_to_the_model_card():
    for model in load_models().values():
        if model.key.startswith("qwen2.5-7b"):
            assert f"{model.params / 1e9:.2f}B" == "7.62B"  # card: 7.61B (it truncates)
            assert f"{model.non_embedding_params / 1e9:.2f}B" == "6.53B"


# A card figure that its own config does not reproduce: pinned here so that it stays visible.
# Qwen2.5-72B-Instruct's card says 70.0B non-embedding; total minus embedding and lm_head is 70.2B.
CARD_MISMATCHES = {("qwen2.5-72b-instruct", "non_embedding_params"): "70.2B"}
# Qwen2.5-7B's card prints 7.61B for 7,615,616,512: truncated, where rounding gives 7.62B.
CARD_TRUNCATES = {("qwen2.5-7b-instruct", "params"), ("qwen2.5-7b-instruct-awq", "params")}


def billions_like(count: int, card: str, *, truncate: bool = False) -> str:
    """`count` in billions, with as many decimals as the card figure `card` ("7.61B")."""
    digits = len(card.removesuffix("B").partition(".")[2])
    value = count / 1e9
    if truncate:
        value = int(value * 10**digits) / 10**digits
    return f"{value:.{digits}f}B"


@pytest.mark.parametrize("model", load_models().values(), ids=lambda m: m.key)
def test_every_model_card_figure_is_the_exact_count_rounded(model):
    assert model.model_card, f"{model.key}: put the model card's figures in its JSON (model_card)"
    for field, card in model.model_card.items():
        exact = getattr(model, field)  # params or non_embedding_params, derived from the config
        rounded = billions_like(exact, card)
        if (model.key, field) in CARD_MISMATCHES:
            assert rounded == CARD_MISMATCHES[model.key, field] != card
        elif (model.key, field) in CARD_TRUNCATES:
            assert billions_like(exact, card, truncate=True) == card != rounded
        else:
            assert rounded == card, f"{model.key}.{field}: {exact:,} is {rounded}, card {card}"


def test_llama31_8b_and_qwen25_72b_exact_counts_from_config():
    llama = load_model("llama-3.1-8b-instruct")
    # no biases anywhere; 8 KV heads of 128 dims: k and v are 4096 x 1024
    per_layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert llama.params == 32 * per_layer + 4096 + 2 * 128256 * 4096 == 8_030_261_248
    q72 = load_model("qwen2.5-72b-instruct")
    per_layer = (
        (8192 * 8192 + 8192) + 2 * (8192 * 1024 + 1024) + 8192 * 8192 + 3 * 8192 * 29568 + 2 * 8192
    )
    assert q72.params == 80 * per_layer + 8192 + 2 * 152064 * 8192 == 72_706_203_648
    assert llama.head_dim == q72.head_dim == 128


def test_estimator_constants_agree_with_the_config():
    model = load_model("qwen2.5-7b-instruct")
    # The seed's N is the exact count truncated to millions; kappa is exact for BF16.
    assert QWEN25_7B.params == model.params // 10**6 * 10**6
    assert QWEN25_7B.kv_bytes_per_token == model.kv_bytes_per_token(QWEN25_7B.weight_bytes)


def test_unknown_model_names_the_known_ones():
    with pytest.raises(KeyError, match=r"qwen2\.5-7b-instruct"):
        load_model("no-such-model")
