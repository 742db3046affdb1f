"""The structured outputs and multi-LoRA lesson's estimators, and its lab's claims on runs."""

import ast
import copy

import pytest

from conftest import ROOT
from core.models import load_model
from lab_docs import results_doc
from structured_outputs_lora import values as lesson
from structured_outputs_lora.lora import (
    ALL_MODULES,
    adapter_bytes,
    adapter_params,
    reserved_bytes,
    step_with_adapters,
)
from structured_outputs_lora.mask import bitmask_row_bytes, break_even_fill_s, mask_gpu_bytes

QWEN = load_model("qwen2.5-7b-instruct")
LAB = ROOT / "labs/structured_outputs_lora/structured_lora.py"


def test_a_bitmask_row_is_one_bit_per_token_in_whole_int32_words():
    assert bitmask_row_bytes(32) == 4 and bitmask_row_bytes(33) == 8
    assert bitmask_row_bytes(QWEN.vocab_size) == 4 * 4752  # 152,064 / 32 = 4,752 words exactly
    assert mask_gpu_bytes(32, 2, logit_bytes=2) == 2 * (4 + 2 * 32 * 2)
    assert break_even_fill_s(0.01, 100) == pytest.approx(1e-4)
    with pytest.raises(ValueError, match="vocab_size"):
        bitmask_row_bytes(0)


def test_an_adapter_holds_r_times_d_in_plus_d_out_per_matrix_per_layer():
    d, kv = QWEN.hidden_size, QWEN.kv_dim
    by_hand = QWEN.num_layers * 8 * ((d + d) + (d + kv))  # q_proj: d -> d, v_proj: d -> kv
    assert adapter_params(QWEN, 8, ("q_proj", "v_proj")) == by_hand
    assert adapter_bytes(QWEN, 8, ("q_proj", "v_proj")) == 2 * by_hand
    assert adapter_params(QWEN, 16) == 2 * adapter_params(QWEN, 8)  # linear in the rank
    with pytest.raises(ValueError, match="gate"):
        adapter_params(QWEN, 8, ("gate",))


def test_the_slots_cover_every_matrix_at_max_lora_rank_for_each_of_max_loras():
    one = adapter_bytes(QWEN, 16, ALL_MODULES)
    assert reserved_bytes(QWEN, 4, 16) == 4 * one
    with pytest.raises(ValueError, match="max_loras"):
        reserved_bytes(QWEN, 0, 16)


def test_adapters_in_the_batch_only_add_to_the_step():
    gpu = lesson.load_gpu("rtx_4090")
    floors = [step_with_adapters(gpu, QWEN, None, n, 16).seconds for n in (0, 1, 2, 4)]
    assert floors == sorted(floors) and floors[0] < floors[-1]
    with pytest.raises(ValueError, match="negative"):
        step_with_adapters(gpu, QWEN, None, -1, 16)


def test_the_lab_figures_on_the_page_use_the_lab_scripts_defaults():
    """values.py's LAB_* constants are the defaults of the lab script (read without running it)."""
    tree = ast.parse(LAB.read_text(encoding="utf-8"))
    defaults = {}
    for node in ast.walk(tree):
        first = node.args[0] if isinstance(node, ast.Call) and node.args else None
        if isinstance(first, ast.Constant) and first.value in {"--requests", "--prompt"}:
            defaults[first.value] = next(
                ast.literal_eval(k.value) for k in node.keywords if k.arg == "default"
            )
    constants = {
        t.id: ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name) and t.id in {"LORA_RANK", "ADAPTERS"}
    }
    assert defaults == {"--requests": lesson.LAB_REQUESTS, "--prompt": lesson.LAB_PROMPT}
    assert len(constants["ADAPTERS"]) == lesson.LAB_ADAPTERS
    assert lesson.LAB_RANK == 8  # the lesson's lab adapter is the lab's


# ---------------------------------------------------------------- the lab's claims


def structured_doc() -> dict:
    """A structured_lora results document as labs/structured_outputs_lora/structured_lora.py
    writes one: 2 requests per scene, a valid output for each constraint."""
    rows = []
    for series in ("plain", "json", "regex", "lora_mixed"):
        for i in range(2):
            new = 4 if series in ("plain", "lora_mixed") else 3
            rows.append(
                {"series": series, "label": f"request {i}", "repeat": 0, "prompt_tokens": 32,
                 "new_tokens": new, "wall_s": 0.1, "ttft_s": 0.02, "queue_s": 0.0,
                 "prefill_s": 0.02, "decode_s": 0.03, "tpot_s": 0.01, "cached_tokens": 0}
            )  # fmt: skip
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    outputs = [
        {"series": "json", "label": f"request {i}", "text": '{"ok":true}', "finish_reason": "stop",
         "valid": True}
        for i in range(2)
    ] + [
        {"series": "regex", "label": f"request {i}", "text": "123-ab", "finish_reason": "stop",
         "valid": True}
        for i in range(2)
    ]  # fmt: skip
    parameters = {
        "max_model_len": 64, "enable_prefix_caching": False, "warmup": 1, "requests": 2,
        "prompt_tokens": 32, "new_tokens": 4, "structured_max_tokens": 8, "json_schema": schema,
        "regex": "[0-9]{3}-[a-z]{2}", "structured_outputs_backend": "xgrammar",
        "disable_any_whitespace": True, "lora_rank": 8, "lora_modules": ["q_proj", "v_proj"],
        "max_loras": 2, "adapters": ["adapter_a", "adapter_b"], "engine_start_s": 10.0,
    }  # fmt: skip
    lora = [
        {"label": f"request {i}", "adapter": ["adapter_a", "adapter_b"][i], "new_tokens": 4,
         "differs_from_plain": False}
        for i in range(2)
    ]  # fmt: skip
    return results_doc(
        "structured_lora",
        parameters,
        rows,
        structured_outputs={"backends": {"json": ["xgrammar"], "regex": ["xgrammar"]},
                            "outputs": outputs},
        lora=lora,
    )  # fmt: skip


def verify(doc: dict) -> dict[str, str]:
    import verify_labs

    assert verify_labs.schema_errors(doc) == []
    return {c.name: c.status for c in verify_labs.checks_for(doc, [], 0.3)}


def test_verify_labs_passes_a_consistent_run():
    checks = verify(structured_doc())
    assert set(checks.values()) == {"PASS"}, checks


@pytest.mark.parametrize(
    ("series", "text"),
    [("json", '{"ok":1}'), ("json", '{"ok":true'), ("regex", "123-abc"), ("regex", "x123-ab")],
)
def test_an_output_that_breaks_its_constraint_fails_even_if_the_lab_called_it_valid(series, text):
    doc = structured_doc()
    output = next(o for o in doc["structured_outputs"]["outputs"] if o["series"] == series)
    output["text"] = text  # "valid" stays True: the check reads the text itself
    assert verify(doc)["constrained outputs parse and match"] == "FAIL"


def test_another_backend_or_a_short_adapter_request_fails():
    doc = structured_doc()
    doc["structured_outputs"]["backends"]["regex"] = ["guidance"]
    assert verify(doc)["backend: the engine's, recorded on every request"] == "FAIL"
    doc = structured_doc()
    doc["lora"][1]["new_tokens"] = 3
    assert verify(doc)["mixed LoRA batch: requested tokens per request"] == "FAIL"
    doc = structured_doc()
    doc["lora"][1]["adapter"] = "adapter_a"  # both requests on one adapter: not a mixed batch
    assert verify(doc)["mixed LoRA batch: requested tokens per request"] == "FAIL"


def test_on_a_gpu_a_slow_constrained_batch_fails_its_pace_claim():
    doc = structured_doc()
    assert verify(doc)["json time per output token within 1.5x of plain"] == "PASS"
    slow = copy.deepcopy(doc)
    for m in slow["measurements"]:
        if m["series"] == "json":
            m["tpot_s"] = 0.02  # twice the plain batch's
    assert verify(slow)["json time per output token within 1.5x of plain"] == "FAIL"
