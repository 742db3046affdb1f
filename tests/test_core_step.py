"""core.roofline.step_bound: a mixed step (prefill chunk + decodes) and its two pure cases."""

import pytest

from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model
from core.roofline import step_bound, tpot_bound, ttft_bound

GPU = load_gpus()["rtx_4090"]
MODEL = load_model("qwen2.5-7b-instruct")
AWQ = load_model("qwen2.5-7b-instruct-awq")


def test_a_whole_prompt_alone_is_the_ttft_bound():
    for prompt in (1, 178, 2000):
        step = step_bound(GPU, MODEL, prefill_tokens=prompt)
        assert step == ttft_bound(GPU, MODEL, prompt)


def test_decodes_alone_are_the_batched_tpot_bound():
    for batch, context in ((1, 0), (8, 1000), (64, 4096)):
        step = step_bound(GPU, MODEL, decode_batch=batch, decode_context=context)
        assert step == tpot_bound(GPU, MODEL, context, batch=batch)


def test_the_weight_format_changes_the_bytes_only():
    awq = checkpoint_format(AWQ)
    bf16 = step_bound(GPU, MODEL, prefill_tokens=64, decode_batch=4, decode_context=100)
    small = step_bound(GPU, MODEL, prefill_tokens=64, decode_batch=4, decode_context=100, fmt=awq)
    assert small.compute_s == bf16.compute_s and small.memory_s < bf16.memory_s


def test_a_chunk_reads_the_earlier_chunks_kv_and_only_the_last_chunk_has_logits():
    first = step_bound(GPU, MODEL, prefill_tokens=512, last_chunk=False)
    last = step_bound(GPU, MODEL, prefill_tokens=512, prefill_cached=512)
    assert last.memory_s > first.memory_s and last.compute_s > first.compute_s
    # split into two chunks, the FLOPs add up to the unchunked prompt's (weights are read twice)
    whole = ttft_bound(GPU, MODEL, 1024)
    assert first.compute_s + last.compute_s == pytest.approx(whole.compute_s, rel=1e-12)
    assert first.memory_s + last.memory_s > whole.memory_s


def test_adding_decodes_to_a_chunk_costs_less_than_a_separate_step():
    mixed = step_bound(GPU, MODEL, prefill_tokens=256, decode_batch=16, decode_context=1000)
    alone = (
        step_bound(GPU, MODEL, prefill_tokens=256).seconds
        + step_bound(GPU, MODEL, decode_batch=16, decode_context=1000).seconds
    )
    assert mixed.seconds < alone


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "at least one"),
        ({"prefill_tokens": -1}, "prefill_tokens"),
        ({"decode_batch": 2, "decode_context": 1.5}, "decode_context"),
    ],
)
def test_bad_steps_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        step_bound(GPU, MODEL, **kwargs)
