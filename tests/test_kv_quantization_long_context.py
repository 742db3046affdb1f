"""KV-cache precision and long contexts (core.long_context) and the lesson's values.

Expected figures come from kappa = 2 L n_kv d_h b written out by hand (28 layers, 4 KV heads,
head dim 128), from vLLM 0.26.0's rules the lesson states (fp8 = one byte, YaRN's derived length
= original x factor, offload sizes in GiB) and from the links' bandwidth.
"""

import pytest

from core.formats import checkpoint_format, resident_weight_bytes
from core.forward import attention_flops_per_token, decode_flops
from core.gpus import GIB, load_gpus
from core.links import load_link
from core.long_context import (
    attention_flops_share,
    kv_bytes_share,
    kv_reload_seconds,
    kv_tokens,
    kv_value_bytes,
    sequence_kv_bytes,
    sequences_that_fit,
    weight_offload_step_seconds,
    yarn_hf_overrides,
    yarn_max_model_len,
)
from core.memory import MemoryBudget
from core.models import load_model

GPUS = load_gpus()
RTX, H100 = GPUS["rtx_4090"], GPUS["h100_sxm"]
QWEN = load_model("qwen2.5-7b-instruct")
QWEN_AWQ = load_model("qwen2.5-7b-instruct-awq")
PCIE4 = load_link("pcie4_x16")


def test_kv_cache_dtype_bytes_and_unknown_names():
    assert kv_value_bytes("auto") == 2 and kv_value_bytes("fp8") == 1
    with pytest.raises(ValueError, match="nvfp4"):
        kv_value_bytes("nvfp4")


def test_one_32k_sequence_of_qwen_is_1_75_gib_in_bf16_and_half_in_fp8():
    kappa = 2 * 28 * 4 * 128 * 2  # 57,344 bytes
    assert sequence_kv_bytes(QWEN, 32768) == kappa * 32768
    assert sequence_kv_bytes(QWEN, 32768) / GIB == 1.75
    assert sequence_kv_bytes(QWEN, 32768, "fp8") / GIB == 0.875
    assert sequence_kv_bytes(QWEN, 131072) / GIB == 7.0


def test_fp8_kv_doubles_the_tokens_that_fit_to_within_one_block():
    for model in (QWEN, QWEN_AWQ):
        fmt = checkpoint_format(model)
        auto, fp8 = kv_tokens(RTX, model, fmt), kv_tokens(RTX, model, fmt, "fp8")
        assert 0 <= fp8 - 2 * auto < 2 * MemoryBudget.for_gpu(RTX).block_size
    budget = MemoryBudget.for_gpu(RTX)
    expected = budget.tokens(resident_weight_bytes(QWEN), 57344)
    assert kv_tokens(RTX, QWEN, checkpoint_format(QWEN)) == expected


def test_sequences_that_fit_fall_with_context_and_none_when_weights_do_not_fit():
    fmt = checkpoint_format(QWEN)
    fits = [sequences_that_fit(RTX, QWEN, fmt, s) for s in (4096, 32768, 131072)]
    assert fits == sorted(fits, reverse=True)
    assert fits[-1] == 0  # 7 GiB does not fit next to BF16 weights on a 24 GB card
    assert sequences_that_fit(RTX, QWEN, fmt, 131072, "fp8") == 1
    q72 = load_model("qwen2.5-72b-instruct")
    assert sequences_that_fit(H100, q72, checkpoint_format(q72), 1024) == 0
    with pytest.raises(ValueError):
        sequences_that_fit(RTX, QWEN, fmt, 0)


def test_attention_share_of_flops_grows_with_context_toward_one():
    shares = [attention_flops_share(QWEN, s) for s in (1024, 32768, 131072, 10**7)]
    assert shares == sorted(shares) and shares[-1] > 0.99
    s = 32768
    a = attention_flops_per_token(QWEN, s)
    assert attention_flops_share(QWEN, s) == pytest.approx(a / (a + decode_flops(QWEN)))


def test_kv_share_of_a_steps_bytes_grows_with_batch_and_falls_with_fp8():
    assert kv_bytes_share(QWEN, 4096, batch=16) > kv_bytes_share(QWEN, 4096)
    assert kv_bytes_share(QWEN, 32768, kv_cache_dtype="fp8") < kv_bytes_share(QWEN, 32768)


def test_yarn_derived_length_is_original_times_factor():
    assert yarn_max_model_len(32768, 4.0) == 131072
    rope = yarn_hf_overrides(QWEN, 131072, 1e6)["rope_parameters"]
    assert rope == {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 32768,
        "rope_theta": 1e6,
    }
    with pytest.raises(ValueError):
        yarn_hf_overrides(QWEN, 32768, 1e6)  # no extension
    with pytest.raises(ValueError):
        yarn_max_model_len(32768, 0.5)


def test_vllm_derives_the_cores_yarn_length_from_the_lessons_hf_overrides():
    """vLLM 0.26.0 itself, on the lesson's config.json and dictionary: the length the page states,
    and an error (not a silent cap) for a max_model_len above the unextended one."""
    import json

    from conftest import ROOT
    from kv_quantization_long_context.long_context import rope_theta
    from labs_env import probe

    overrides = yarn_hf_overrides(QWEN, 131072, rope_theta(QWEN))
    code = f"""
import json, os
os.environ["HF_HUB_OFFLINE"] = "1"  # a local config.json: nothing to download
from vllm.engine.arg_utils import EngineArgs
config = {str(ROOT / "labs" / "configs" / "qwen2.5-7b-instruct")!r}
def model_config(**kw):
    return EngineArgs(model=config, skip_tokenizer_init=True, **kw).create_model_config()
extended = model_config(hf_overrides=json.loads({json.dumps(json.dumps(overrides))}))
try:
    model_config(max_model_len=65536)
    refused = ""
except Exception as error:
    refused = str(error)
print("RESULT " + json.dumps([model_config().max_model_len, extended.max_model_len, refused]))
"""
    plain, extended, refused = probe(code)
    assert plain == QWEN.max_position_embeddings
    assert extended == yarn_max_model_len(QWEN.max_position_embeddings, 4.0) == 131072
    assert "greater than the derived max_model_len" in refused
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in refused


def test_offloading_costs_are_bytes_over_the_host_link():
    assert PCIE4.bandwidth_gbs == pytest.approx(16 * 16 * 128 / 130 / 8)
    assert kv_reload_seconds(PCIE4, QWEN, 32768) == pytest.approx(
        1.75 * GIB / PCIE4.bandwidth_bytes
    )
    assert kv_reload_seconds(PCIE4, QWEN, 32768, "fp8") == pytest.approx(
        kv_reload_seconds(PCIE4, QWEN, 32768) / 2
    )
    assert weight_offload_step_seconds(PCIE4, 4) == pytest.approx(4 * GIB / PCIE4.bandwidth_bytes)
    with pytest.raises(ValueError):
        weight_offload_step_seconds(PCIE4, -1)


def test_lesson_values_are_the_cores_and_prefixed():
    from kv_quantization_long_context.values import values

    v = values()
    assert all(name.startswith("kvq_") for name in v)
    assert v["kvq_kappa_fp8"] == "28,672"
    assert v["kvq_yarn_len"] == "131,072"
    assert v["kvq_rtx_awq_bstar"] == "—" and v["kvq_rtx_awq_bstar_fp8"] != "—"
    assert float(v["kvq_h100_longest_gain"]) > float(v["kvq_h100_short_gain"]) > 1
    assert int(v["kvq_rtx_awq_long_fp8"]) >= 2 * int(v["kvq_rtx_awq_long"])
    assert float(v["kvq_reload_vs_prefill"]) > 10  # reloading beats recomputing a 32k prompt
    # section 3 says the batch at the longest context fits on the H100 only with an fp8 cache
    assert int(v["kvq_h100_longest"]) < int(v["kvq_batch"]) <= int(v["kvq_h100_longest_fp8"])
    # and that at batch 1 the weights are still most of a long-context step's bytes
    batch_1_share = float(v["kvq_kv_bytes_longest_b1"].rstrip("%"))
    assert batch_1_share < 50 < float(v["kvq_kv_share_long"].rstrip("%"))


def test_the_estimator_prints_every_table():
    import contextlib
    import io

    from kv_quantization_long_context.long_context import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main()
    text = out.getvalue()
    for heading in (
        "KV cache of one sequence",
        "Sequences whose KV fits",
        "YaRN",
        "cpu_offload_gb",
    ):
        assert heading in text


FLASH_ATTN_PROBE = """
import json
from unittest import mock
from vllm.v1.attention.backends import flash_attn
platform = flash_attn.current_platform
takes = {}
for major, minor, version in CARDS:
    def same_family(family, device_id=0):
        return major == family // 10
    with mock.patch.object(flash_attn, "get_flash_attn_version", lambda: version), \\
        mock.patch.object(platform, "is_xpu", lambda: False), \\
        mock.patch.object(platform, "is_device_capability_family", same_family):
        takes[f"{major}.{minor} FA{version}"] = (
            flash_attn.FlashAttentionBackend.supports_kv_cache_dtype("fp8")
        )
print("RESULT " + json.dumps(takes))
"""


def test_vllms_flashattention_takes_an_fp8_cache_only_as_fa3_on_sm_9x():
    """vLLM 0.26.0 itself, with the version and the card patched: the reason an fp8 cache moves
    an RTX 4090 (or an A100, or a Blackwell card) to FlashInfer, and the lab's FA3 exception."""
    from labs_env import probe
    from test_labs_gpu_path import lab_script

    cards = [(8, 0, 2), (8, 9, 2), (9, 0, 2), (9, 0, 3), (10, 0, 4), (12, 0, 2)]
    takes = probe(f"CARDS = {cards}\n" + FLASH_ATTN_PROBE)
    assert [name for name, ok in takes.items() if ok] == ["9.0 FA3"]
    assert lab_script("kv_quantization_long_context/kv_fp8.py").FA3_SM_MAJOR == 9
