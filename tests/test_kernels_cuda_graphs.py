"""Kernels and CUDA graphs: attention's HBM traffic with and without the scores written out, the
paged decode kernel's blocks, launch overhead against the step floor, vLLM 0.26.0's default CUDA
graph capture sizes, the chart and the lesson's values."""

import math
import xml.etree.ElementTree as ET

import pytest

from core.engine import BLOCK_SIZE
from core.gpus import load_gpus
from core.kernels import (
    QWEN2_LAYER_KERNELS,
    attention_io_bytes,
    break_even_launch_s,
    default_capture_sizes,
    kernels_per_step,
    kv_block_bytes_per_layer,
    kv_blocks,
    launch_ratio,
)
from core.models import kv_bytes_per_token, load_model
from core.roofline import tpot_bound
from kernels_cuda_graphs import chart
from kernels_cuda_graphs.values import values

QWEN = load_model("qwen2.5-7b-instruct")
GPUS = load_gpus()


def test_attention_io_counts_each_tensor_and_the_score_passes():
    s, tile = 1000, 128
    io = attention_io_bytes(QWEN, s, tile)
    d, b = QWEN.head_dim, 2
    q_o = 2 * QWEN.num_heads * s * d * b
    k_v = 2 * QWEN.num_kv_heads * s * d * b
    assert io.qkvo_bytes == q_o + k_v
    assert io.scores_bytes == QWEN.num_heads * s * s * b
    assert io.naive_bytes == q_o + k_v + 4 * io.scores_bytes
    assert io.tiled_bytes == q_o + math.ceil(s / tile) * k_v  # 8 tiles, the last one partial


def test_tiling_saves_more_the_longer_the_prompt_and_a_whole_prompt_tile_reads_kv_once():
    savings = [attention_io_bytes(QWEN, s).saving for s in (128, 1024, 8192, 32768)]
    assert savings == sorted(savings) and savings[0] > 1
    one_tile = attention_io_bytes(QWEN, 100, query_tile=128)
    assert one_tile.tiled_bytes == one_tile.qkvo_bytes
    # with MHA the K and V re-reads weigh more: the saving shrinks
    assert attention_io_bytes(QWEN.as_mha(), 8192).saving < attention_io_bytes(QWEN, 8192).saving
    with pytest.raises(ValueError):
        attention_io_bytes(QWEN, 0)


def test_paged_blocks_hold_the_kv_of_the_context():
    assert kv_blocks(1024) == 1024 // BLOCK_SIZE
    assert kv_blocks(1025) == 1024 // BLOCK_SIZE + 1
    assert kv_blocks(0) == 0
    per_layer = kv_block_bytes_per_layer(QWEN)
    assert per_layer * QWEN.num_layers == kv_bytes_per_token(QWEN) * BLOCK_SIZE
    assert per_layer == 2 * QWEN.num_kv_heads * QWEN.head_dim * BLOCK_SIZE * 2


def test_kernels_per_step_and_launch_arithmetic():
    assert kernels_per_step(QWEN) == QWEN.num_layers * len(QWEN2_LAYER_KERNELS) + 4
    assert break_even_launch_s(0.01, 100) == pytest.approx(1e-4)
    assert launch_ratio(0.01, 100, 1e-4) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        break_even_launch_s(0.01, 0)


def test_a_faster_card_tolerates_less_launch_overhead_and_batching_helps():
    slow, fast = GPUS["rtx_4090"], GPUS["h200_sxm"]
    n = kernels_per_step(QWEN)
    even = {g.key: break_even_launch_s(tpot_bound(g, QWEN, 1024).seconds, n) for g in (slow, fast)}
    assert even["h200_sxm"] < even["rtx_4090"] / 3
    big = break_even_launch_s(tpot_bound(fast, QWEN, 1024, None, 256).seconds, n)
    assert big > even["h200_sxm"]


def test_default_capture_sizes_follow_vllm_0_26_0():
    sizes = default_capture_sizes()  # max_num_seqs 256, max_num_batched_tokens 8192
    assert sizes[:4] == [1, 2, 4, 8] and sizes[-1] == 512
    assert len(sizes) == 3 + len(range(8, 256, 8)) + len(range(256, 513, 16)) == 51
    assert default_capture_sizes(16) == [1, 2, 4, 8, 16, 24, 32]
    # the token budget caps the largest size and is itself captured when it is the cap
    assert default_capture_sizes(256, 100) == [1, 2, 4, *range(8, 100, 8), 100]
    assert default_capture_sizes(2) == [1, 2, 4]
    # speculative tokens widen the decode query: max_num_seqs * (1 + g) * 2, still capped at 512
    assert default_capture_sizes(16, num_speculative_tokens=3)[-1] == 128


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_chart_has_three_lines_and_a_description(lang):
    root = ET.fromstring(chart.chart(lang))
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polyline")) == 3
    assert "GB" in root.find(f"{ns}desc").text


def test_values_follow_from_the_core():
    v = values()
    assert v["capture_count"] == "51"
    assert v["kernels_per_step"] == f"{kernels_per_step(QWEN)}"
    assert float(v["fast_even_us"]) < float(v["slow_even_us"])
    assert float(v["fast_ratio_mid"]) > float(v["slow_ratio_mid"])
    assert float(v["saving_long"]) > float(v["saving_mid"]) > float(v["saving_short"])


# vLLM 0.26.0's source (.venv-labs): vllm/platforms/cuda.py cannot be imported without CUDA, so
# the probe reads _get_backend_priorities with ast: its last two lists are the non-MLA orders
# (compute capability 10.x with causal attention, then every other case)
VLLM_BACKEND_ORDER_PROBE = """
import ast, importlib.util, json, pathlib
root = pathlib.Path(importlib.util.find_spec("vllm").submodule_search_locations[0])
tree = ast.parse((root / "platforms" / "cuda.py").read_text())
fn = next(n for n in ast.walk(tree)
          if isinstance(n, ast.FunctionDef) and n.name == "_get_backend_priorities")
returns = sorted((r for r in ast.walk(fn)
                  if isinstance(r, ast.Return) and isinstance(r.value, ast.List)),
                 key=lambda r: r.lineno)
lists = [[e.attr for e in r.value.elts if isinstance(e, ast.Attribute)] for r in returns]
print("RESULT " + json.dumps({"blackwell": lists[-2], "other": lists[-1]}))
"""


def test_the_pages_backend_order_is_vllm_0_26_0s():
    from conftest import DOCS
    from labs_env import probe

    order = probe(VLLM_BACKEND_ORDER_PROBE)
    assert order["blackwell"][:2] == ["FLASHINFER", "FLASH_ATTN"]
    for name in ("kernels_cuda_graphs.md", "kernels_cuda_graphs.en.md"):
        page = (DOCS / "decoding" / name).read_text(encoding="utf-8")
        section = page[page.index("{#backends}") : page.index("{#launch-overhead}")]
        table = [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]
        # the table's rows in the default order, the last entry named after it
        assert table == order["other"][:-1], name
        assert f"`{order['other'][-1]}`" in section, name
