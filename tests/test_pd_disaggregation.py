"""The PD-disaggregation lesson: KV handoff time, the mixed-step stall, the goodput model, the
ExampleConnector's store/load rule."""

import ast
import math

import pytest

from conftest import ROOT
from core.gpus import load_gpu
from core.links import load_link
from core.models import kv_bytes_per_token, layer_matmul_params, load_model
from core.roofline import step_bound, ttft_bound
from pd_disaggregation import goodput as gp
from pd_disaggregation import values as lesson
from pd_disaggregation.example_connector import (
    align_to_block_size,
    loaded_tokens,
    stored_bytes,
    stored_tokens,
)
from pd_disaggregation.transfer import break_even_bandwidth, handoff, interference

QWEN, H100 = load_model("qwen2.5-7b-instruct"), load_gpu("h100_sxm")
NDR = load_link("infiniband_ndr")


def test_kv_to_move_is_kappa_times_prompt():
    h = handoff(H100, QWEN, 2000, NDR)
    assert h.kv_bytes == kv_bytes_per_token(QWEN) * 2000
    assert h.transfer_s == pytest.approx(h.kv_bytes / 50e9)


def test_transfer_to_prefill_ratio_barely_depends_on_the_prompt():
    ratios = [handoff(H100, QWEN, p, NDR).ratio for p in (2000, 8000, 32000)]
    assert max(ratios) / min(ratios) < 1.05
    # and it is close to kappa F / (2 N B_link) for a compute-bound prefill
    n = layer_matmul_params(QWEN)  # the weights each prompt token is multiplied by
    approx = kv_bytes_per_token(QWEN) * H100.peak_flops / (2 * n * NDR.bandwidth_bytes)
    assert ratios[0] == pytest.approx(approx, rel=0.02)


def test_at_break_even_bandwidth_the_transfer_takes_the_prefill_time():
    bw = break_even_bandwidth(H100, QWEN, 2000)
    assert kv_bytes_per_token(QWEN) * 2000 / bw == pytest.approx(
        ttft_bound(H100, QWEN, 2000).seconds
    )


def test_the_stall_is_the_mixed_step_minus_the_decode_step():
    i = interference(H100, QWEN, 2000, 32, 2000)
    assert (
        i.mixed_step_s
        == step_bound(H100, QWEN, prefill_tokens=2000, decode_batch=32, decode_context=2000).seconds
    )
    assert i.stall_s == pytest.approx(i.mixed_step_s - i.decode_step_s)
    assert i.stall_s > 0


def test_colocated_tpot_grows_with_load_and_diverges_at_saturation():
    t_p = ttft_bound(H100, QWEN, gp.PROMPT).seconds
    low, high = (gp.colocated(H100, QWEN, lam).tpot_s for lam in (1.0, 0.8 / t_p))
    assert low < high
    assert math.isinf(gp.colocated(H100, QWEN, 1.0 / t_p).tpot_s)


def test_split_adds_the_transfer_to_ttft_and_frees_tpot_from_prefills():
    lam = 5.0
    co, split = gp.colocated(H100, QWEN, lam), gp.disaggregated(H100, QWEN, NDR, lam, 1, 1)
    assert split.tpot_s < co.tpot_s
    no_link = gp.disaggregated(H100, QWEN, load_link("nvlink4_h100"), lam, 1, 1)
    assert split.ttft_s > no_link.ttft_s


def test_split_wins_at_a_tight_tpot_target_and_loses_at_a_tight_ttft_target():
    tight_tpot = gp.goodput(H100, QWEN, NDR, 0.4, 0.008)
    tight_ttft = gp.goodput(H100, QWEN, NDR, 0.05, 0.05)
    assert tight_tpot.disaggregated_per_gpu > 1.2 * tight_tpot.colocated_per_gpu
    assert tight_ttft.disaggregated_per_gpu < tight_ttft.colocated_per_gpu


def test_goodput_meets_the_targets_at_the_rate_it_reports():
    g = gp.goodput(H100, QWEN, NDR, 0.4, 0.015)
    load = gp.colocated(H100, QWEN, g.colocated_per_gpu)
    assert load.ttft_s <= 0.4 and load.tpot_s <= 0.015
    worse = gp.colocated(H100, QWEN, g.colocated_per_gpu * 1.02)
    assert worse.ttft_s > 0.4 or worse.tpot_s > 0.015


@pytest.mark.parametrize(
    ("prompt", "block", "stored", "loaded"),
    [
        (300, 128, 256, 256),
        (257, 128, 256, 0),  # P - 1 is whole blocks: the consumer looks one block shorter
        (200, 128, 128, 128),
        (2000, 16, 1984, 1984),
        (2001, 16, 2000, 0),
        (100, 128, 0, 0),
    ],
)
def test_example_connector_rule(prompt, block, stored, loaded):
    assert stored_tokens(prompt, block) == stored
    assert loaded_tokens(prompt, block) == loaded


def lab_default_prompt_lens() -> list[int]:
    """--prompt-lens' default in labs/pd_disaggregation/kv_connector.py, read without running it."""
    tree = ast.parse((ROOT / "labs/pd_disaggregation/kv_connector.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        first = node.args[0] if isinstance(node, ast.Call) and node.args else None
        if isinstance(first, ast.Constant) and first.value == "--prompt-lens":
            return next(ast.literal_eval(k.value) for k in node.keywords if k.arg == "default")
    raise AssertionError("kv_connector.py has no --prompt-lens option")


@pytest.mark.parametrize("block", [16, lesson.LAB_BLOCK])  # vLLM's CUDA default, the CPU's
def test_the_labs_default_prompts_all_hit_as_the_page_says(block):
    for prompt in lab_default_prompt_lens():
        assert loaded_tokens(prompt, block) == stored_tokens(prompt, block) > 0, (prompt, block)


def test_example_connector_helpers_reject_nonsense():
    with pytest.raises(ValueError, match="block_size"):
        align_to_block_size(10, 0)
    assert stored_bytes(QWEN, 300, 128) == kv_bytes_per_token(QWEN) * 256


def test_values_are_all_strings_and_cover_the_pages():
    v = lesson.values()
    assert all(isinstance(x, str) and x for x in v.values())
    assert v["lab_loaded_off"] == "0" and v["lab_loaded_ok"] == v["lab_stored_ok"]


SAVE_KV_LAYER_PROBE = """
import ast, importlib.util, json, pathlib
v1 = pathlib.Path(importlib.util.find_spec("vllm").origin).parent
v1 = v1 / "distributed" / "kv_transfer" / "kv_connector" / "v1"


def save_kv_layer(path, cls):
    tree = ast.parse((v1 / path).read_text(encoding="utf-8"))
    c = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls)
    return next((f for f in c.body if getattr(f, "name", "") == "save_kv_layer"), None)


def saves(path, cls):
    f = save_kv_layer(path, cls)
    code = [s for s in f.body if not isinstance(getattr(s, "value", None), ast.Constant)]
    return not all(isinstance(s, ast.Pass) for s in code)


common = (v1 / "moriio" / "moriio_common.py").read_text(encoding="utf-8")
print("RESULT " + json.dumps({
    "nixl": saves("nixl/connector.py", "NixlBaseConnector"),
    "nixl_subclasses_override": [
        c for c in ("NixlPullConnector", "NixlPushConnector")
        if save_kv_layer("nixl/connector.py", c) is not None
    ],
    "mooncake": saves("mooncake/mooncake_connector.py", "MooncakeConnector"),
    "moriio": saves("moriio/moriio_connector.py", "MoRIIOConnector"),
    "moriio_writes_by_default": '.get("read_mode", "false")' in common,
}))
"""


def test_which_gpu_to_gpu_connectors_save_layer_by_layer():
    """Issue 26, defect 8: NIXL (pull and push) and Mooncake leave save_kv_layer empty, so their
    whole transfer follows the prefill; MoRIIO's default write mode does push per layer, so the
    page names the connectors instead of saying 'vLLM's GPU-to-GPU connectors'."""
    from labs_env import probe

    found = probe(SAVE_KV_LAYER_PROBE)
    assert found == {
        "nixl": False,
        "nixl_subclasses_override": [],
        "mooncake": False,
        "moriio": True,
        "moriio_writes_by_default": True,
    }
    for page in ("pd_disaggregation.md", "pd_disaggregation.en.md"):
        text = (ROOT / "docs" / "scheduling" / page).read_text(encoding="utf-8")
        assert "GPU-to-GPU connectors do not" not in text
        assert "在 GPU 之间搬 KV 的 connector 并不" not in text
        assert text.count("MoRIIOConnector") >= 2


@pytest.mark.parametrize("page", ["pd_disaggregation.md", "pd_disaggregation.en.md"])
def test_the_layer_wise_savers_point_to_the_source_note_by_its_section(page):
    """Section 3 names MoRIIO and LMCache as layer-wise savers and sends the reader to the source
    note for where; the zh once said 源码注释, the word the same sentence uses for the code comment
    it quotes ('does not save explicitly'), so the pointer now links the note's section."""
    text = (ROOT / "docs" / "scheduling" / page).read_text(encoding="utf-8")
    paragraph = next(p for p in text.split("\n\n") if "MoRIIOConnector" in p and "LMCache" in p)
    tail = paragraph[paragraph.index("MoRIIOConnector") :]
    assert "(#vllm-connector)" in tail
    assert "见下文的源码注释" not in text
