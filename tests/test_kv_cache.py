"""The KV-cache lesson: its kappa table, the batch table, what fits on an RTX 4090, the crossover.

kappa, the cache size and the memory budget themselves are the core's (tests/test_core.py); this
file tests what the lesson builds on them.
"""

import pytest

from core.formats import BF16, checkpoint_format, resident_weight_bytes
from core.gpus import load_gpu
from core.models import kv_bytes_per_token, load_model
from kv_cache import values as lesson_values
from kv_cache.cache_size import main as cache_size_main
from kv_cache.crossover import crossover_context
from kv_cache.fit_4090 import rtx_4090, scenarios
from kv_cache.kappa import main as kappa_main
from kv_cache.kappa import models

QWEN = load_model("qwen2.5-7b-instruct")
KAPPA = 2 * 28 * 4 * 128 * 2  # 57,344


def test_the_kappa_table_compares_qwen_with_itself_as_mha_and_two_others():
    keys = [m.key for m in models()]
    assert keys == [
        "qwen2.5-7b-instruct",
        "qwen2.5-7b-instruct",
        "llama-3.1-8b-instruct",
        "qwen2.5-72b-instruct",
    ]
    qwen, mha = models()[:2]
    assert (qwen.num_kv_heads, mha.num_kv_heads) == (4, 28)


def test_the_kappa_table_prints_each_models_kappa(capsys):
    kappa_main()
    rows = {line[:30].strip(): line[30:].split() for line in capsys.readouterr().out.splitlines()}
    assert rows["Qwen2.5-7B-Instruct"][:4] == ["28", "4", "128", "57,344"]
    assert rows["Qwen2.5-7B-Instruct as MHA"][:4] == ["28", "28", "128", "401,408"]
    # Llama 3.1 8B: 32 layers, 8 KV heads of 128 dims; Qwen2.5-72B: 80 layers, 8 KV heads
    assert rows["Llama-3.1-8B-Instruct"][3] == f"{2 * 32 * 8 * 128 * 2:,}"
    assert rows["Qwen2.5-72B-Instruct"][3] == f"{2 * 80 * 8 * 128 * 2:,}"


def test_the_batch_table_is_kappa_times_context_times_batch(capsys):
    cache_size_main()
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["4,096"])
    # 57,344 B x 4,096 tokens = 0.21875 GiB per sequence
    assert row.split()[1:] == ["0.22", "1.75", "7.00", "14.00"]
    assert "kappa = 57,344 bytes/token" in out


def test_scenarios_are_bf16_awq_and_awq_with_mha():
    (l1, bf16, k1), (l2, awq, k2), (l3, awq_mha, k3) = scenarios()
    assert (l1, l2, l3) == ("BF16", "AWQ", "AWQ, MHA")
    assert bf16 == 2 * 7_615_616_512 and awq == awq_mha == 5_570_747_392
    assert k1 == k2 == KAPPA and k3 == 7 * KAPPA


def test_tokens_that_fit_are_whole_blocks_within_the_budget():
    budget = rtx_4090()
    assert budget.capacity_bytes == load_gpu("rtx_4090").memory_bytes == 24_564 * 2**20
    for _, weights, k in scenarios():
        tokens = budget.tokens(weights, k)
        assert tokens % budget.block_size == 0
        assert tokens * k <= budget.kv_bytes(weights) < (tokens + budget.block_size) * k


def test_awq_weights_leave_more_room_than_bf16_and_mha_much_less():
    budget = rtx_4090()
    (_, bf16, k), (_, awq, _), (_, _, k_mha) = scenarios()
    assert budget.tokens(awq, k) > 2 * budget.tokens(bf16, k)
    assert budget.tokens(awq, k_mha) < budget.tokens(awq, k) / 6


def test_crossover_is_where_the_batch_kv_equals_the_weights():
    w, k = resident_weight_bytes(QWEN, BF16), kv_bytes_per_token(QWEN)
    for batch in (1, 8, 32):
        assert k * crossover_context(w, k, batch) * batch == pytest.approx(w)
    assert crossover_context(w, k, 8) == pytest.approx(crossover_context(w, k) / 8)
    assert f"{crossover_context(w, k):,.0f}" == f"{2 * 7_615_616_512 / KAPPA:,.0f}" == "265,612"


@pytest.mark.parametrize(("w", "k", "b"), [(0, 1, 1), (1, 0, 1), (1, 1, 0), (1, 1, -2)])
def test_crossover_rejects_non_positive_inputs(w, k, b):
    with pytest.raises(ValueError, match="positive"):
        crossover_context(w, k, b)


def test_values_are_strings_and_agree_with_the_estimators():
    v = lesson_values.values()
    assert all(isinstance(x, str) for x in v.values())
    assert v["kappa"] == "57,344" and v["mha_kappa"] == "401,408" and v["gqa_group"] == "7"
    assert v["fp8_kappa"] == "28,672" and v["kappa_kib"] == "56"
    assert int(v["awq_tokens"].replace(",", "")) > int(v["bf16_tokens"].replace(",", ""))
    assert v["example_kv_gib"] == "7.00"  # 4,096 tokens x 32 sequences


def test_self_test_2_the_kv_is_a_small_share_of_an_awq_decode_step():
    # issue 9 (c): about 59 MB of KV in about 4.5 GB read per step at a 1k context
    v = lesson_values.values()
    assert v["awq_quiz_context"] == "1,024" and v["awq_quiz_kv_mb"] == "59"
    awq = load_model("qwen2.5-7b-instruct-awq")
    step = resident_weight_bytes(awq, checkpoint_format(awq)) - 152064 * 3584 * 2 + 3584 * 2
    assert v["awq_quiz_step_gb"] == f"{(step + KAPPA * 1024) / 1e9:.2f}" == "4.54"
