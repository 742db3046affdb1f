"""The KV-cache lesson's estimators: kappa, cache size, what fits on an RTX 4090, the crossover."""

import pytest

from conftest import ROOT
from kv_cache import values as lesson_values
from kv_cache.cache_size import cache_bytes
from kv_cache.crossover import crossover_context
from kv_cache.fit_4090 import GIB, MemoryBudget, rtx_4090, scenarios
from kv_cache.kappa import as_mha, kappa, kv_bytes_per_token
from specs.models import load_model, load_models
from transformer_infra.weight_bytes import BF16, total_bytes

SNIPPETS = ROOT / "snippets" / "kv_cache"
QWEN = load_model("qwen2.5-7b-instruct")


def test_kappa_of_qwen25_7b_from_its_config():
    assert kv_bytes_per_token(28, 4, 128, 2) == 2 * 28 * 4 * 128 * 2 == 57344
    assert kappa(QWEN) == 57344
    assert kappa(QWEN, 1) == 57344 / 2  # an FP8 cache halves it


@pytest.mark.parametrize("spec", list(load_models().values()), ids=lambda m: m.key)
def test_kappa_agrees_with_the_shared_model_spec(spec):
    assert kappa(spec) == spec.kv_bytes_per_token(2)


def test_mha_needs_heads_over_kv_heads_times_more():
    mha = as_mha(QWEN)
    assert mha.num_kv_heads == QWEN.num_heads and mha.params > QWEN.params
    assert kappa(mha) / kappa(QWEN) == QWEN.num_heads / QWEN.num_kv_heads == 7


@pytest.mark.parametrize(
    "args", [(0, 4, 128), (28, 0, 128), (28, 4, -128), (28, 4, 128, 0)], ids=str
)
def test_kappa_rejects_non_positive_inputs(args):
    with pytest.raises(ValueError, match=r"must be (a )?positive"):
        kv_bytes_per_token(*args)


def test_cache_is_linear_in_context_and_batch():
    k = kappa(QWEN)
    assert cache_bytes(k, 4096, 32) == k * 4096 * 32 == 7 * GIB
    assert cache_bytes(k, 8192) == 2 * cache_bytes(k, 4096)


@pytest.mark.parametrize(("context", "batch"), [(0, 1), (1, 0), (-5, 3)])
def test_cache_rejects_non_positive_sizes(context, batch):
    with pytest.raises(ValueError, match="must be positive"):
        cache_bytes(57344, context, batch)


def test_tokens_that_fit_are_whole_blocks_within_the_budget():
    budget = rtx_4090()
    assert budget.capacity_bytes == 24 * GIB
    for _, weights, k in scenarios():
        tokens = budget.tokens(weights, k)
        assert tokens % budget.block_size == 0
        assert tokens * k <= budget.kv_bytes(weights) < (tokens + budget.block_size) * k


def test_awq_weights_leave_more_room_than_bf16_and_mha_much_less():
    budget = rtx_4090()
    (_, bf16, k), (_, awq, _), (_, _, k_mha) = scenarios()
    assert budget.tokens(awq, k) > 2 * budget.tokens(bf16, k)
    assert budget.tokens(awq, k_mha) < budget.tokens(awq, k) / 6


def test_a_model_that_does_not_fit_is_reported_not_given_negative_room():
    q72 = load_model("qwen2.5-72b-instruct")
    with pytest.raises(ValueError, match="leave no room"):
        rtx_4090().tokens(total_bytes(q72, BF16), kappa(q72))


@pytest.mark.parametrize(
    "kwargs",
    [{"utilization": 0}, {"utilization": 1.1}, {"capacity_bytes": 0}, {"block_size": 0}],
    ids=str,
)
def test_memory_budget_rejects_impossible_settings(kwargs):
    with pytest.raises(ValueError):
        MemoryBudget(**{"capacity_bytes": 24 * GIB, **kwargs})


def test_tokens_reject_a_non_positive_kappa():
    with pytest.raises(ValueError, match="kappa must be positive"):
        rtx_4090().tokens(GIB, 0)


def test_crossover_is_where_the_batch_kv_equals_the_weights():
    w, k = total_bytes(QWEN, BF16), kappa(QWEN)
    for batch in (1, 8, 32):
        assert k * crossover_context(w, k, batch) * batch == pytest.approx(w)
    assert crossover_context(w, k, 8) == pytest.approx(crossover_context(w, k) / 8)


@pytest.mark.parametrize(("w", "k", "b"), [(0, 1, 1), (1, 0, 1), (1, 1, 0), (1, 1, -2)])
def test_crossover_rejects_non_positive_inputs(w, k, b):
    with pytest.raises(ValueError, match="positive"):
        crossover_context(w, k, b)


def test_values_are_strings_and_agree_with_the_estimators():
    v = lesson_values.values()
    assert all(isinstance(x, str) for x in v.values())
    assert v["kappa"] == "57,344" and v["mha_kappa"] == "401,408" and v["gqa_group"] == "7"
    assert int(v["awq_tokens"].replace(",", "")) > int(v["bf16_tokens"].replace(",", ""))
