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


def test_estimator_constants_agree_with_the_config():
    model = load_model("qwen2.5-7b-instruct")
    # The seed's N is the exact count truncated to millions; kappa is exact for BF16.
    assert QWEN25_7B.params == model.params // 10**6 * 10**6
    assert QWEN25_7B.kv_bytes_per_token == model.kv_bytes_per_token(QWEN25_7B.weight_bytes)


def test_unknown_model_names_the_known_ones():
    with pytest.raises(KeyError, match=r"qwen2\.5-7b-instruct"):
        load_model("no-such-model")
