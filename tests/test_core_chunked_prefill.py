"""core.roofline.batch_step_bound: several prefill chunks and decodes of different contexts."""

import pytest

from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model
from core.roofline import StepCost, batch_step_bound, step_bound

GPU = load_gpus()["rtx_4090"]
AWQ = load_model("qwen2.5-7b-instruct-awq")
FMT = checkpoint_format(AWQ)


@pytest.mark.parametrize(
    ("tokens", "cached", "last", "batch", "context"),
    [(512, 0, False, 0, 0), (512, 1024, True, 8, 700), (0, 0, True, 32, 1000)],
)
def test_one_chunk_and_equal_contexts_is_step_bound(tokens, cached, last, batch, context):
    chunks = ((tokens, cached, last),) if tokens else ()
    got = batch_step_bound(GPU, AWQ, chunks=chunks, decode_contexts=(context,) * batch, fmt=FMT)
    want = step_bound(
        GPU,
        AWQ,
        prefill_tokens=tokens,
        prefill_cached=cached,
        last_chunk=last,
        decode_batch=batch,
        decode_context=context,
        fmt=FMT,
    )
    assert got.compute_s == pytest.approx(want.compute_s, rel=1e-12)
    assert got.memory_s == pytest.approx(want.memory_s, rel=1e-12)


def test_two_chunks_in_one_step_read_the_weights_once():
    a = batch_step_bound(GPU, AWQ, chunks=((256, 0, True),), fmt=FMT)
    b = batch_step_bound(GPU, AWQ, chunks=((300, 100, False),), fmt=FMT)
    both = batch_step_bound(GPU, AWQ, chunks=((256, 0, True), (300, 100, False)), fmt=FMT)
    assert both.compute_s == pytest.approx(a.compute_s + b.compute_s, rel=1e-12)
    assert a.memory_s < both.memory_s < a.memory_s + b.memory_s


def test_decode_contexts_need_not_be_equal():
    mixed = batch_step_bound(GPU, AWQ, decode_contexts=(100, 1900), fmt=FMT)
    even = step_bound(GPU, AWQ, decode_batch=2, decode_context=1000, fmt=FMT)
    assert mixed.memory_s == pytest.approx(even.memory_s, rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "at least one"),
        ({"chunks": ((0, 0, True),)}, "chunk tokens"),
        ({"decode_contexts": (-1,)}, "decode context"),
    ],
)
def test_bad_steps_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        batch_step_bound(GPU, AWQ, **kwargs)


def test_step_cost_is_batch_step_bound_with_the_constants_computed_once():
    cost = StepCost.of(GPU, AWQ, FMT)
    chunks, contexts = ((100, 50, True),), (10, 20, 30)
    assert cost.bound(chunks, contexts) == batch_step_bound(
        GPU, AWQ, chunks=chunks, decode_contexts=contexts, fmt=FMT
    )
