"""The inference-arithmetic core (snippets/core/): every model and GPU quantity of the course.

Figures pinned here are written out from the models' config.json by hand (hidden 3584, 28 layers,
...) or quoted from the review in issue 9, so a change to the core that moves a figure fails here.
"""

import json
import math
from dataclasses import replace

import pytest

from conftest import ROOT
from core.formats import (
    BF16,
    FP8,
    WeightFormat,
    bits_per_linear_weight,
    checkpoint_format,
    matrix_bytes,
    resident_weight_bytes,
    streamed_weight_bytes,
    weight_bytes_by_part,
)
from core.forward import (
    attention_flops_per_token,
    decode_bytes,
    decode_flops,
    decode_matmul_params,
    kv_cache_bytes,
    prefill_attention_flops,
    prefill_bytes,
    prefill_flops,
)
from core.gpus import GIB, GPU, load_gpu, load_gpus
from core.memory import MemoryBudget, fits
from core.models import (
    ModelSpec,
    embedding_params,
    kv_bytes_per_token,
    layer_linear_shapes,
    layer_matmul_params,
    layer_parameters,
    lm_head_params,
    load_model,
    load_models,
    model_for_repo,
    non_embedding_params,
    param_breakdown,
    params,
)
from core.roofline import (
    StepCost,
    attainable_flops,
    bandwidth_utilization,
    bound,
    compute_peak,
    critical_batch,
    decode_intensity,
    decode_intensity_limit,
    decode_steps_bound_s,
    e2e_bound_s,
    flops_utilization,
    prefill_crossover_len,
    prefill_intensity,
    ridge_point,
    step_bound,
    tpot_bound,
    ttft_bound,
)

GPUS = load_gpus()
RTX = GPUS["rtx_4090"]
QWEN = load_model("qwen2.5-7b-instruct")
AWQ = load_model("qwen2.5-7b-instruct-awq")
AWQ_FMT = checkpoint_format(AWQ)
LAB_CONFIGS = ROOT / "labs" / "configs"

# Qwen2.5-7B-Instruct's config.json, written out
H, FF, LAYERS, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 3584, 18944, 28, 28, 4, 128, 152064
EMBEDDING = VOCAB * H  # 544,997,376
KAPPA = 2 * LAYERS * KV_HEADS * HEAD_DIM * 2  # 57,344 bytes per token (BF16 cache)
# the seven matrices of one layer: q, k, v, o and the gated MLP
LAYER_MATMUL = LAYERS * (2 * H * H + 2 * H * KV_HEADS * HEAD_DIM + 3 * H * FF)


def sixteen_bit_models() -> list[ModelSpec]:
    return [m for m in load_models().values() if m.quantization is None]


# ---------------------------------------------------------------- GPUs


def test_every_gpu_has_positive_figures_and_a_source():
    assert {"rtx_4090", "rtx_3090", "a100_80gb_sxm", "l40s", "h100_sxm", "h200_sxm", "h20"} <= set(
        GPUS
    )
    for gpu in GPUS.values():
        assert gpu.bf16_dense_tflops > 0 and gpu.memory_bandwidth_gbs > 0 and gpu.memory_gb > 0
        assert gpu.source.strip(), f"{gpu.key} has no source"


def test_rtx_4090_figures_and_ridge_point():
    assert (RTX.peak_flops, RTX.bandwidth_bytes) == (165.2e12, 1008e9)
    assert RTX.ridge_point == pytest.approx(163.89, abs=0.01)
    assert GIB == 2**30 and RTX.memory_gb == 24  # the label
    assert RTX.memory_bytes == 24_564 * 2**20  # what nvidia-smi reports: the budgets' capacity


def test_every_card_budgets_from_a_cited_nvidia_smi_total():
    for gpu in GPUS.values():
        assert gpu.memory_mib and "github.com/" in gpu.memory_source, gpu.key
        assert gpu.memory_bytes == gpu.memory_mib * 2**20
        # a little under the marketed figure read as GiB (L40S: ECC takes 1/16), never over it
        assert 0.93 < gpu.memory_bytes / (gpu.memory_gb * GIB) <= 1.0, gpu.key
    # a card added without a reading falls back to the marketed figure read as GiB
    assert toy_gpu(24).memory_bytes == 24 * GIB


def test_fp8_w8a8_runs_at_the_fp8_peak_where_the_chip_has_fp8_tensor_cores():
    """Ada and Hopper have FP8 tensor cores at twice the 16-bit rate; Ampere has none, and vLLM
    runs FP8 weights there through 16-bit kernels; weight-only AWQ computes in 16 bits."""
    h100, a100 = GPUS["h100_sxm"], GPUS["a100_80gb_sxm"]
    assert FP8.activation_bits == 8 and BF16.activation_bits == 16
    assert compute_peak(h100, FP8) == 1979e12 and compute_peak(RTX, FP8) == 330.3e12
    assert compute_peak(a100, FP8) == a100.peak_flops == 312e12
    awq = checkpoint_format(load_model("qwen2.5-7b-instruct-awq"))
    assert compute_peak(h100, awq) == compute_peak(h100, BF16) == compute_peak(h100) == 989.5e12
    assert ridge_point(h100, FP8) == pytest.approx(2 * h100.ridge_point)
    for gpu in GPUS.values():  # FP8 tensor cores at twice the 16-bit dense rate, or none
        assert gpu.fp8_dense_tflops is None or gpu.fp8_dense_tflops == pytest.approx(
            2 * gpu.bf16_dense_tflops, rel=0.02
        ), gpu.key


def test_an_fp8_bound_is_below_what_fp8_tensor_cores_could_reach():
    """A prompt that is compute-bound in BF16 takes half the compute time in FP8 on an H100: the
    bound must not be set by the 16-bit peak (it would no longer be a lower bound)."""
    h100 = GPUS["h100_sxm"]
    flops = prefill_flops(QWEN, 8192)
    fp8 = ttft_bound(h100, QWEN, 8192, FP8)
    assert fp8.compute_s == pytest.approx(flops / 1979e12)
    bf16 = ttft_bound(h100, QWEN, 8192, BF16)
    assert fp8.compute_s == pytest.approx(bf16.compute_s / 2, rel=0.01)
    assert tpot_bound(h100, QWEN, 100, FP8, batch=64).compute_s == pytest.approx(
        decode_flops(QWEN, 64) / 1979e12
    )
    chunk_flops = prefill_flops(QWEN, 512)
    assert step_bound(h100, QWEN, prefill_tokens=512, fmt=FP8).compute_s == pytest.approx(
        chunk_flops / 1979e12
    )
    assert StepCost.of(h100, QWEN, FP8).bound(((512, 0, True),)).compute_s == pytest.approx(
        chunk_flops / 1979e12
    )
    assert prefill_crossover_len(h100, QWEN, FP8) > prefill_crossover_len(h100, QWEN, BF16)


def test_unknown_gpu_names_the_known_ones():
    assert load_gpu("h20") == GPUS["h20"]
    with pytest.raises(KeyError, match="rtx_4090"):
        load_gpu("no-such-gpu")


# ---------------------------------------------------------------- model shapes and counts


def test_qwen25_7b_exact_parameter_count_from_config():
    parts = param_breakdown(QWEN)
    assert parts["embedding"] == parts["lm_head"] == EMBEDDING == embedding_params(QWEN)
    # per layer: q (+bias), k, v (+bias), o, gated MLP, two RMSNorms
    per_layer = (H * H + H) + 2 * (H * 512 + 512) + H * H + 3 * H * FF + 2 * H
    assert params(QWEN) == LAYERS * per_layer + H + 2 * EMBEDDING == 7_615_616_512
    assert sum(n for _, n in layer_parameters(QWEN)) == per_layer
    assert non_embedding_params(QWEN) == 7_615_616_512 - 2 * EMBEDDING == 6_525_621_760
    assert (QWEN.head_dim, QWEN.q_dim, QWEN.kv_dim) == (128, 3584, 512)


def test_one_layer_has_seven_matrices_and_qwen2_biases_on_q_k_v_only():
    assert layer_linear_shapes(QWEN) == [
        ("q_proj", H, H),
        ("k_proj", H, 512),
        ("v_proj", H, 512),
        ("o_proj", H, H),
        ("gate_proj", H, FF),
        ("up_proj", H, FF),
        ("down_proj", FF, H),
    ]
    rows = dict(layer_parameters(QWEN))
    assert rows["q_proj + bias"] == H * H + H and rows["k_proj + bias"] == H * 512 + 512
    assert rows["o_proj"] == H * H and rows["input_layernorm"] == H
    assert layer_matmul_params(QWEN) == LAYER_MATMUL
    assert decode_matmul_params(QWEN) == LAYER_MATMUL + EMBEDDING  # + the lm_head


def test_llama31_8b_and_qwen25_72b_exact_counts_from_config():
    llama = load_model("llama-3.1-8b-instruct")
    # no biases anywhere; 8 KV heads of 128 dims: k and v are 4096 x 1024
    per_layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert params(llama) == 32 * per_layer + 4096 + 2 * 128256 * 4096 == 8_030_261_248
    assert not llama.attention_qkv_bias and "k_proj" in dict(layer_parameters(llama))
    q72 = load_model("qwen2.5-72b-instruct")
    per_layer = (
        (8192 * 8192 + 8192) + 2 * (8192 * 1024 + 1024) + 8192 * 8192 + 3 * 8192 * 29568 + 2 * 8192
    )
    assert params(q72) == 80 * per_layer + 8192 + 2 * 152064 * 8192 == 72_706_203_648
    assert llama.head_dim == q72.head_dim == 128


def test_tied_embeddings_count_the_table_once_but_still_multiply_by_it():
    tied = replace(QWEN, tie_word_embeddings=True)
    assert param_breakdown(tied)["lm_head"] == 0
    assert params(tied) == params(QWEN) - EMBEDDING
    assert lm_head_params(tied) == EMBEDDING
    assert decode_flops(tied) == decode_flops(QWEN)  # the logits are still a vocab x hidden matmul


# A card figure that its own config does not reproduce: pinned here so that it stays visible.
# Qwen2.5-72B-Instruct's card says 70.0B non-embedding; total minus embedding and lm_head is 70.2B.
CARD_MISMATCHES = {
    ("qwen2.5-72b-instruct", "non_embedding_params"): "70.2B",
    # the AWQ card repeats the BF16 count; its config pads the MLP (29,568 -> 29,696)
    ("qwen2.5-72b-instruct-awq", "params"): "73.0B",
}
# Qwen2.5-7B's card prints 7.61B for 7,615,616,512: truncated, where rounding gives 7.62B.
CARD_TRUNCATES = {("qwen2.5-7b-instruct", "params"), ("qwen2.5-7b-instruct-awq", "params")}
COUNTS = {"params": params, "non_embedding_params": non_embedding_params}


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
        exact = COUNTS[field](model)  # derived from the config, matrix by matrix
        rounded = billions_like(exact, card)
        if (model.key, field) in CARD_MISMATCHES:
            assert rounded == CARD_MISMATCHES[model.key, field] != card
        elif (model.key, field) in CARD_TRUNCATES:
            assert billions_like(exact, card, truncate=True) == card != rounded
        else:
            assert rounded == card, f"{model.key}.{field}: {exact:,} is {rounded}, card {card}"


def test_unknown_model_names_the_known_ones():
    with pytest.raises(KeyError, match=r"qwen2\.5-7b-instruct"):
        load_model("no-such-model")


def test_model_for_repo_finds_the_course_model_file():
    assert model_for_repo("Qwen/Qwen2.5-7B-Instruct-AWQ").key == "qwen2.5-7b-instruct-awq"
    assert model_for_repo("Qwen/Qwen2.5-7B-Instruct").key == "qwen2.5-7b-instruct"
    assert model_for_repo("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4") is None
    for model in load_models().values():
        assert model.hf_repo, f"{model.key} names no Hugging Face repo"
        assert model_for_repo(model.hf_repo) == model


# ---------------------------------------------------------------- from_config


def lab_config(name: str) -> dict:
    return json.loads((LAB_CONFIGS / name / "config.json").read_text(encoding="utf-8"))


def test_from_config_reads_the_labs_7b_config_as_the_course_model():
    spec = ModelSpec.from_config(lab_config("qwen2.5-7b-instruct"), key="lab")
    assert spec.attention_qkv_bias  # detected from model_type / architectures
    assert spec.head_dim == 128  # no head_dim in the config: hidden / heads
    shape = ("hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads")
    shape += ("head_dim", "vocab_size", "max_position_embeddings", "tie_word_embeddings")
    assert all(getattr(spec, f) == getattr(QWEN, f) for f in shape)
    assert params(spec) == 7_615_616_512 and kv_bytes_per_token(spec) == KAPPA


def test_from_config_reads_the_tiny_lab_model():
    tiny = ModelSpec.from_config(lab_config("tiny-qwen2"), key="tiny-qwen2")
    assert (tiny.head_dim, tiny.kv_dim, tiny.attention_qkv_bias) == (64, 64, True)
    # per layer: q 128x128 + 128, k and v 128x64 + 64, o 128x128, MLP 3 x 128x256, two norms
    per_layer = (128 * 128 + 128) + 2 * (128 * 64 + 64) + 128 * 128 + 3 * 128 * 256 + 2 * 128
    assert per_layer == 147_968
    assert params(tiny) == 2 * per_layer + 128 + 2 * 1024 * 128 == 558_208
    assert kv_bytes_per_token(tiny) == 2 * 2 * 1 * 64 * 2 == 512


def test_from_config_without_qwen2_has_no_biases_and_honours_head_dim_and_mha():
    config = {**lab_config("tiny-qwen2"), "model_type": "llama", "head_dim": 32}
    config["architectures"] = ["LlamaForCausalLM"]
    del config["num_key_value_heads"]
    spec = ModelSpec.from_config(config)
    assert not spec.attention_qkv_bias
    assert (spec.head_dim, spec.num_kv_heads, spec.q_dim) == (32, 2, 64)  # no GQA: MHA
    assert "q_proj" in dict(layer_parameters(spec))


# ---------------------------------------------------------------- kappa and the KV cache


def test_kappa_of_qwen25_7b_from_its_config():
    assert kv_bytes_per_token(QWEN) == KAPPA == 57344
    assert kv_bytes_per_token(QWEN, 1) == 57344 / 2  # an FP8 cache halves it


@pytest.mark.parametrize("bad", [0, -2])
def test_kappa_rejects_non_positive_value_sizes(bad):
    with pytest.raises(ValueError, match="bytes_per_value must be positive"):
        kv_bytes_per_token(QWEN, bad)


def test_mha_has_as_many_kv_heads_as_query_heads():
    mha = QWEN.as_mha()
    assert mha.num_kv_heads == QWEN.num_heads and params(mha) > params(QWEN)
    assert kv_bytes_per_token(mha) / kv_bytes_per_token(QWEN) == 7 == HEADS / KV_HEADS
    assert kv_bytes_per_token(mha) == 401_408 and mha.name.endswith("as MHA")


def test_kv_cache_is_linear_in_tokens_and_batch():
    assert kv_cache_bytes(QWEN, 4096, 32) == KAPPA * 4096 * 32 == 7 * GIB
    assert kv_cache_bytes(QWEN, 8192) == 2 * kv_cache_bytes(QWEN, 4096)
    assert kv_cache_bytes(QWEN, 0) == 0
    with pytest.raises(ValueError, match="batch"):
        kv_cache_bytes(QWEN, 10, 0)


# ---------------------------------------------------------------- weight formats and bytes


@pytest.mark.parametrize("model", sixteen_bit_models(), ids=lambda m: m.key)
def test_bf16_bytes_are_two_per_parameter(model):
    assert checkpoint_format(model) == BF16
    assert resident_weight_bytes(model) == resident_weight_bytes(model, BF16) == 2 * params(model)


def test_streamed_bytes_are_the_layers_the_lm_head_and_one_embedding_row():
    parts = weight_bytes_by_part(QWEN)
    assert parts["lm_head"] == parts["embedding"] == EMBEDDING * 2
    layers = parts["linear weights"] + parts["norms + biases"]
    assert layers == 2 * (params(QWEN) - 2 * EMBEDDING)
    assert streamed_weight_bytes(QWEN) == layers + parts["lm_head"] + H * 2 == 14_141_245_440


def test_cached_figures_are_fresh_copies_and_follow_every_field_but_the_dicts():
    # the core memoises per (model, format): a caller's edit must not reach the next caller
    parts = weight_bytes_by_part(QWEN)
    parts["embedding"] = 0
    breakdown = param_breakdown(QWEN)
    breakdown["mlp"] = 0
    assert weight_bytes_by_part(QWEN)["embedding"] == EMBEDDING * 2
    assert param_breakdown(QWEN)["mlp"] > 0
    # a changed shape is a different key; the quantization config (a dict) is not hashed but
    # the format it selects is, so an AWQ model still gets its own bytes
    wider = replace(QWEN, intermediate_size=QWEN.intermediate_size + 128)
    assert layer_matmul_params(wider) > layer_matmul_params(QWEN)
    awq = load_model("qwen2.5-7b-instruct-awq")
    assert hash(awq) is not None and resident_weight_bytes(awq) < resident_weight_bytes(QWEN)


def test_tied_embeddings_are_read_once_as_the_lm_head():
    tied = replace(QWEN, tie_word_embeddings=True)
    parts = weight_bytes_by_part(tied)
    assert parts["lm_head"] == 0
    layers = parts["linear weights"] + parts["norms + biases"]
    assert streamed_weight_bytes(tied) == layers + parts["embedding"] == resident_weight_bytes(tied)


def test_the_awq_checkpoint_format_comes_from_its_quantization_config():
    assert (AWQ_FMT.bits, AWQ_FMT.group_size, AWQ_FMT.zero_point) == (4, 128, True)
    assert AWQ_FMT.name == "AWQ 4-bit g128"
    hf_style = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
    assert WeightFormat.from_quantization(hf_style) == AWQ_FMT


def test_one_awq_matrix_has_vllms_gemm_layout():
    # k_proj, 3584 in x 512 out: qweight int32 [3584, 64], qzeros int32 [28, 64],
    # scales fp16 [28, 512]
    assert matrix_bytes(AWQ_FMT, H, 512) == {
        "weights": H * 512 // 8 * 4,
        "scales": H // 128 * 512 * 2,
        "zeros": H // 128 * 512 // 8 * 4,
        "tensor scale": 0,
    }


def test_awq_bytes_part_by_part_match_the_published_checkpoint():
    parts = weight_bytes_by_part(AWQ)
    assert parts["linear weights"] == LAYER_MATMUL // 2
    assert parts["group scales"] == LAYER_MATMUL // 128 * 2
    assert parts["group zeros"] == LAYER_MATMUL // 128 // 2
    assert parts["embedding"] == parts["lm_head"] == EMBEDDING * 2  # left 16-bit
    # Qwen/Qwen2.5-7B-Instruct-AWQ ships shards of 4 GB and 1.57 GB
    assert resident_weight_bytes(AWQ) == resident_weight_bytes(QWEN, AWQ_FMT) == 5_570_747_392
    quantized = LAYER_MATMUL * (0.5 + 2 / 128 + 0.5 / 128)  # 4 bits + FP16 scale + 4-bit zero
    others = (params(AWQ) - LAYER_MATMUL) * 2
    assert resident_weight_bytes(AWQ) == pytest.approx(quantized + others)
    assert bits_per_linear_weight(AWQ) == 4 + (16 + 4) / 128


def test_fp8_keeps_embeddings_16_bit_and_stores_one_scale_per_matrix():
    parts = weight_bytes_by_part(QWEN, FP8)
    assert parts["linear weights"] == LAYER_MATMUL  # 1 byte each
    assert parts["embedding"] + parts["lm_head"] == 2 * 2 * EMBEDDING
    assert parts["tensor scales"] == LAYERS * 7 * 4
    assert parts["group scales"] == parts["group zeros"] == 0


def test_issue_9_decode_step_bytes_bf16_and_awq():
    # "AWQ cuts the bytes read per decode step from ~14.14 to ~4.48 GB"
    assert f"{streamed_weight_bytes(QWEN) / 1e9:.2f}" == "14.14"
    assert f"{streamed_weight_bytes(AWQ) / 1e9:.2f}" == "4.48"


def test_only_awq_has_a_byte_layout():
    with pytest.raises(ValueError, match="gptq"):
        WeightFormat.from_quantization({"method": "gptq", "bits": 4, "group_size": 128})
    gptq = replace(AWQ, quantization={"quant_method": "gptq", "bits": 4, "group_size": 128})
    with pytest.raises(ValueError, match="gptq"):
        resident_weight_bytes(gptq)


def test_a_group_size_that_does_not_divide_the_inputs_is_rejected():
    g100 = WeightFormat("g100", bits=4, group_size=100)
    with pytest.raises(ValueError, match="in_features 3584 is not a multiple of 100"):
        matrix_bytes(g100, H, 512)
    odd = replace(AWQ, quantization={**AWQ.quantization, "group_size": 100})
    with pytest.raises(ValueError, match="not a multiple of 100"):
        weight_bytes_by_part(odd)


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


# ---------------------------------------------------------------- FLOPs and bytes per forward


def test_prefill_counts_the_lm_head_once_for_the_last_token():
    per_token = 2 * LAYER_MATMUL
    for s in (1, 2, 2000):
        assert prefill_flops(QWEN, s) == s * per_token + 2 * VOCAB * H
    assert prefill_flops(QWEN, 1) == decode_flops(QWEN) == 2 * (LAYER_MATMUL + EMBEDDING)
    assert prefill_flops(QWEN, 2000) < 2000 * decode_flops(QWEN)


def test_flops_scale_with_the_batch():
    for batch in (1, 2, 64):
        assert prefill_flops(QWEN, 100, batch) == batch * prefill_flops(QWEN, 100)
        assert decode_flops(QWEN, batch) == batch * decode_flops(QWEN)


def test_bytes_read_the_weights_once_however_large_the_batch():
    weights = streamed_weight_bytes(QWEN)
    for batch in (1, 8, 32):
        assert prefill_bytes(QWEN, 1000, batch=batch) == weights + batch * 1000 * KAPPA
        assert decode_bytes(QWEN, 1000, batch=batch) == weights + batch * 1000 * KAPPA
    assert decode_bytes(QWEN, 1000) - decode_bytes(QWEN, 0) == 1000 * KAPPA
    assert decode_bytes(QWEN, 0, AWQ_FMT) == streamed_weight_bytes(QWEN, AWQ_FMT)


def test_attention_flops_grow_with_context_and_ignore_gqa():
    assert attention_flops_per_token(QWEN, 1000) == 4 * LAYERS * 1000 * H
    assert attention_flops_per_token(QWEN, 2000) == 2 * attention_flops_per_token(QWEN, 1000)
    assert attention_flops_per_token(QWEN.as_mha(), 1000) == attention_flops_per_token(QWEN, 1000)


@pytest.mark.parametrize("s", [1, 2, 7, 100])
def test_prefill_attention_is_the_causal_sum_over_the_prompt(s):
    causal = sum(attention_flops_per_token(QWEN, i) for i in range(1, s + 1))
    assert prefill_attention_flops(QWEN, s) == causal
    assert prefill_attention_flops(QWEN, s) < s * attention_flops_per_token(QWEN, s) or s == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "8"])
def test_bad_lengths_are_rejected_naming_the_argument(bad):
    for call in (
        lambda: prefill_flops(QWEN, bad),
        lambda: prefill_bytes(QWEN, bad),
        lambda: prefill_attention_flops(QWEN, bad),
        lambda: ttft_bound(RTX, QWEN, bad),
    ):
        with pytest.raises(ValueError, match="prompt_len must be an integer >= 1"):
            call()
    with pytest.raises(ValueError, match="context must be an integer >= 1"):
        attention_flops_per_token(QWEN, bad)
    with pytest.raises(ValueError, match="batch must be an integer >= 1"):
        decode_flops(QWEN, bad)


def test_a_negative_context_is_rejected_but_zero_is_allowed():
    assert tpot_bound(RTX, QWEN, 0).memory_s == streamed_weight_bytes(QWEN) / 1008e9
    with pytest.raises(ValueError, match="must be an integer >= 0, got -1"):
        tpot_bound(RTX, QWEN, -1)
    with pytest.raises(ValueError, match="new_tokens"):
        e2e_bound_s(RTX, QWEN, 10, 0)


# ---------------------------------------------------------------- the roofline


def test_attainable_flops_is_the_smaller_ceiling():
    assert attainable_flops(RTX, 1.0) == pytest.approx(1008e9)
    assert attainable_flops(RTX, 1e4) == RTX.peak_flops
    assert attainable_flops(RTX, RTX.ridge_point) == pytest.approx(RTX.peak_flops)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_attainable_flops_rejects_non_positive_intensity(bad):
    with pytest.raises(ValueError, match="positive"):
        attainable_flops(RTX, bad)


def test_a_bound_is_the_larger_of_compute_and_memory_time():
    b = bound(RTX, 165.2e12, 2016e9)  # one second of compute, two of memory
    assert (b.compute_s, b.memory_s, b.seconds, b.memory_bound) == (1.0, 2.0, 2.0, True)
    assert not bound(RTX, 2 * 165.2e12, 1008e9).memory_bound


def test_intensities_are_flops_over_bytes():
    assert prefill_intensity(QWEN, 1024) == prefill_flops(QWEN, 1024) / prefill_bytes(QWEN, 1024)
    assert f"{prefill_intensity(QWEN, 1024):.0f}" == "941"  # issue 9: one value, not 1020 and 941
    assert decode_intensity(QWEN, 1024, batch=8) == decode_flops(QWEN, 8) / decode_bytes(
        QWEN, 1024, batch=8
    )
    assert decode_intensity(QWEN, 128) < 2 / 2  # BF16 decode: under 2 FLOPs per 2-byte weight


def test_tpot_bound_is_bytes_over_bandwidth_at_batch_one():
    b = tpot_bound(RTX, QWEN, 128)
    assert b.memory_bound
    assert b.seconds == (14_141_245_440 + 128 * KAPPA) / 1008e9


def test_ttft_bound_of_a_long_prompt_is_its_flops_at_peak():
    long = ttft_bound(RTX, QWEN, 8192)
    assert not long.memory_bound
    assert long.seconds == (8192 * 2 * LAYER_MATMUL + 2 * EMBEDDING) / 165.2e12
    # issue 9: the prefill floor without the lm_head for every prompt token
    assert [f"{ttft_bound(RTX, QWEN, s).seconds * 1e3:.0f}" for s in (2000, 4000)] == ["158", "316"]


def test_e2e_bound_is_one_prefill_plus_n_minus_one_growing_steps():
    e2e = e2e_bound_s(RTX, QWEN, 100, 3)
    steps = tpot_bound(RTX, QWEN, 100).seconds + tpot_bound(RTX, QWEN, 101).seconds
    assert e2e == pytest.approx(ttft_bound(RTX, QWEN, 100).seconds + steps)
    assert e2e_bound_s(RTX, QWEN, 100, 1) == ttft_bound(RTX, QWEN, 100).seconds
    assert decode_steps_bound_s(RTX, QWEN, 100, 3) == pytest.approx(steps)


def test_issue_9_awq_decode_floor_on_the_4090():
    # "the AWQ decode floor is about 4.45 ms/step, so 255 steps take at least ~1.14 s"
    assert f"{tpot_bound(RTX, AWQ, 8).seconds * 1e3:.2f}" == "4.45"
    assert f"{decode_steps_bound_s(RTX, AWQ, 8, 256):.2f}" == "1.14"
    assert tpot_bound(RTX, QWEN, 8, AWQ_FMT) == tpot_bound(RTX, AWQ, 8)


def compute_minus_memory(b) -> float:
    return b.compute_s - b.memory_s


@pytest.mark.parametrize(("model", "expected"), [(QWEN, "178"), (AWQ, "56")], ids=["bf16", "awq"])
def test_prefill_turns_compute_bound_exactly_at_the_crossover(model, expected):
    s_star = prefill_crossover_len(RTX, model)
    assert f"{s_star:.0f}" == expected  # issue 9: 178 for BF16 on the 4090, in every lesson
    below, above = math.floor(s_star), math.ceil(s_star)
    assert ttft_bound(RTX, model, below).memory_bound
    assert not ttft_bound(RTX, model, above).memory_bound
    # compute - memory is linear in S: its root, from two integer lengths, is the crossover
    f0 = compute_minus_memory(ttft_bound(RTX, model, below))
    f1 = compute_minus_memory(ttft_bound(RTX, model, above))
    assert below - f0 / (f1 - f0) == pytest.approx(s_star, rel=1e-9)


@pytest.mark.parametrize("context", [0, 128, 512, 1024])
def test_critical_batch_is_where_decode_compute_meets_memory(context):
    b_star = critical_batch(RTX, QWEN, context)
    below, above = max(1, math.floor(b_star)), math.ceil(b_star)
    assert tpot_bound(RTX, QWEN, context, batch=below).memory_bound
    assert not tpot_bound(RTX, QWEN, context, batch=above).memory_bound
    f0 = compute_minus_memory(tpot_bound(RTX, QWEN, context, batch=below))
    f1 = compute_minus_memory(tpot_bound(RTX, QWEN, context, batch=above))
    root = below - f0 / (f1 - f0) * (above - below)
    assert root == pytest.approx(b_star, rel=1e-9)


def test_critical_batch_is_none_once_the_kv_outgrows_the_compute():
    # the KV read per sequence grows with the context; past 2 M' / (R kappa) it outpaces the FLOPs
    limit = 2 * (LAYER_MATMUL + EMBEDDING) / (RTX.ridge_point * KAPPA)
    assert critical_batch(RTX, QWEN, math.floor(limit)) > 10_000
    assert critical_batch(RTX, QWEN, math.ceil(limit)) is None
    assert critical_batch(RTX, QWEN, 100_000) is None
    assert all(
        tpot_bound(RTX, QWEN, math.ceil(limit), batch=b).memory_bound for b in (1, 10**3, 10**6)
    )


def test_decode_intensity_approaches_its_limit_as_the_batch_grows():
    limit = decode_intensity_limit(QWEN, 1024)
    assert limit == 2 * (LAYER_MATMUL + EMBEDDING) / (KAPPA * 1024)
    values = [decode_intensity(QWEN, 1024, batch=b) for b in (1, 8, 64, 1024, 10**7)]
    assert values == sorted(values) and values[-1] < limit
    assert values[-1] == pytest.approx(limit, rel=1e-4)


def test_utilization_is_the_share_of_peak_a_measured_time_implies():
    step = tpot_bound(RTX, QWEN, 1024)
    nbytes = decode_bytes(QWEN, 1024)
    assert bandwidth_utilization(RTX, nbytes, step.memory_s) == pytest.approx(1.0)
    assert bandwidth_utilization(RTX, nbytes, 2 * step.memory_s) == pytest.approx(0.5)
    assert bandwidth_utilization(RTX, 504e9, 1.0) == 0.5
    flops = prefill_flops(QWEN, 8192)
    prefill = ttft_bound(RTX, QWEN, 8192)
    assert flops_utilization(RTX, flops, prefill.compute_s) == pytest.approx(1.0)
    assert flops_utilization(RTX, 16.52e12, 1.0) == pytest.approx(0.1)
    # an FP8 (W8A8) step is measured against the FP8 peak it runs at, not the 16-bit one
    h100 = GPUS["h100_sxm"]
    fp8 = ttft_bound(h100, QWEN, 8192, FP8)
    assert flops_utilization(h100, flops, fp8.compute_s, FP8) == pytest.approx(1.0)
    assert flops_utilization(h100, 197.9e12, 1.0, FP8) == pytest.approx(0.1)
    assert flops_utilization(h100, 197.9e12, 1.0, BF16) == pytest.approx(0.2)


# ---------------------------------------------------------------- memory


def toy_gpu(memory_gb: float) -> GPU:
    return GPU("toy", f"Toy {memory_gb:g}GB", 100, 1000, memory_gb, "GDDR", "made up")


def test_fits_compares_weights_and_one_sequence_of_kv_with_the_card():
    small = toy_gpu(8)
    assert not fits(small, QWEN) and fits(small, AWQ) and fits(small, QWEN, fmt=AWQ_FMT)
    room = (RTX.memory_bytes - resident_weight_bytes(QWEN)) / KAPPA  # tokens of KV that fit
    assert fits(RTX, QWEN, math.floor(room)) and not fits(RTX, QWEN, math.ceil(room))


def test_memory_budget_defaults_follow_vllm_and_an_assumed_reserve():
    budget = MemoryBudget.for_gpu(RTX)
    assert budget.capacity_bytes == RTX.memory_bytes == 24_564 * 2**20
    assert (budget.utilization, budget.reserve_bytes, budget.block_size) == (0.92, 2 * GIB, 16)
    assert budget.usable_bytes == 24_564 * 2**20 * 0.92
    weights = resident_weight_bytes(QWEN)
    assert budget.kv_bytes(weights) == 24_564 * 2**20 * 0.92 - weights - 2 * GIB


@pytest.mark.parametrize("fmt", [BF16, AWQ_FMT], ids=["bf16", "awq"])
def test_tokens_that_fit_are_whole_blocks_within_the_budget(fmt):
    budget = MemoryBudget.for_gpu(RTX)
    weights = resident_weight_bytes(QWEN, fmt)
    tokens = budget.tokens(weights, KAPPA)
    assert tokens > 0 and tokens % budget.block_size == 0
    assert tokens * KAPPA <= budget.kv_bytes(weights) < (tokens + budget.block_size) * KAPPA


def test_a_model_that_does_not_fit_is_reported_not_given_negative_room():
    q72 = load_model("qwen2.5-72b-instruct")
    with pytest.raises(ValueError, match="leave no room"):
        MemoryBudget.for_gpu(RTX).tokens(resident_weight_bytes(q72), kv_bytes_per_token(q72))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"utilization": 0},
        {"utilization": 1.1},
        {"capacity_bytes": 0},
        {"block_size": 0},
        {"reserve_bytes": -1},
    ],
    ids=str,
)
def test_memory_budget_rejects_impossible_settings(kwargs):
    with pytest.raises(ValueError):
        MemoryBudget(**{"capacity_bytes": 24 * GIB, **kwargs})


def test_tokens_reject_a_non_positive_kappa():
    with pytest.raises(ValueError, match="kappa must be positive"):
        MemoryBudget.for_gpu(RTX).tokens(GIB, 0)
