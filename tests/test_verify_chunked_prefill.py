"""scripts/verify_labs.py on chunked_prefill results (labs/chunked_prefill/long_prompt.py): the
GPU claim and the completeness checks, on synthetic documents (no GPU here)."""

import pytest

import verify_labs  # scripts/verify_labs.py
from lab_docs import RTX_4090, TEST_CPU, results_doc

PARAMETERS = {
    "max_model_len": 6016, "enable_prefix_caching": False, "warmup": 1,
    "values": [512, 2048], "unchunked": True, "decodes": 16,
    "decode_prompt_tokens": 256, "decode_new_tokens": 64, "warm_tokens": 8,
    "long_prompt_tokens": 6000, "long_new_tokens": 8,
}  # fmt: skip


def row(budget: int, chunked: bool, worst_s: float) -> dict:
    return {
        "label": f"{'chunked' if chunked else 'unchunked'} {budget}",
        "max_num_batched_tokens": budget, "enable_chunked_prefill": chunked, "decodes": 16,
        "decode_tokens_out": [64] * 16, "long_prompt_tokens": 6000, "long_tokens_out": 8,
        "long_ttft_s": 0.5, "prefill_steps": 3, "itl_before_p50_s": 0.006,
        "itl_before_max_s": 0.008, "itl_during_max_s": worst_s, "itl_all_p50_s": 0.006,
        "preemptions": 0,
    }  # fmt: skip


def scene(kind: str = "cuda", worst=(0.04, 0.16, 0.48)) -> dict:
    rows = [row(512, True, worst[0]), row(2048, True, worst[1]), row(6016, False, worst[2])]
    return results_doc(
        "chunked_prefill", PARAMETERS, rows, device=TEST_CPU if kind == "cpu" else RTX_4090
    )


def statuses(doc: dict) -> dict[str, str]:
    return {c.name: c.status for c in verify_labs.checks_for(doc, [], 0.3)}


def test_a_gpu_run_where_chunking_lowers_the_worst_itl_passes():
    got = statuses(scene())
    assert got["structure"] == got["completeness"] == "PASS"
    assert got["chunking lowers the decodes' worst ITL during the long prefill"] == "PASS"


def test_a_chunked_budget_no_better_than_unchunked_fails():
    got = statuses(scene(worst=(0.04, 0.5, 0.48)))
    assert got["chunking lowers the decodes' worst ITL during the long prefill"] == "FAIL"


def test_a_cpu_run_checks_structure_and_completeness_only():
    checks = verify_labs.checks_for(scene("cpu"), [], 0.3)
    assert [c.status for c in checks] == ["PASS", "PASS", "SKIP"]


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [("decode_tokens_out", [64] * 15 + [63], "output lengths"),
     ("preemptions", 2, "preemption"), ("long_prompt_tokens", 5000, "not the scene")],
)  # fmt: skip
def test_a_short_output_a_preemption_or_another_scene_fails_completeness(field, value, says):
    doc = scene()
    doc["measurements"][1][field] = value
    check = next(c for c in verify_labs.checks_for(doc, [], 0.3) if c.name == "completeness")
    assert check.status == "FAIL" and says in check.detail


def test_a_missing_engine_fails_completeness():
    doc = scene()
    del doc["measurements"][2]
    assert statuses(doc)["completeness"] == "FAIL"
