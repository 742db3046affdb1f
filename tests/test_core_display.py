"""core.display and core.reference: how every lesson prints a time, and the choices they share."""

from core.display import ms, ms_tenths
from core.gpus import load_gpus
from core.models import load_model
from core.reference import AWQ_MODEL, BF16_MODEL, PROMPT_LENGTHS, QWEN_BENCH_GPU


def test_ms_keeps_three_significant_figures():
    assert [ms(s) for s in (0.002953, 0.01403, 0.6472, 1.5062)] == ["2.95", "14.0", "647", "1,506"]


def test_ms_tenths_keeps_one_decimal_and_marks_a_missing_time():
    assert [ms_tenths(s) for s in (0.00104, 0.01403, 1.50625)] == ["1.0", "14.0", "1,506.2"]
    assert ms_tenths(None) == "—"


def test_the_reference_choices_name_the_cores_records():
    bf16, awq = load_model(BF16_MODEL), load_model(AWQ_MODEL)
    assert bf16.quantization is None and awq.quantization is not None
    assert QWEN_BENCH_GPU in load_gpus()
    assert list(PROMPT_LENGTHS) == sorted(PROMPT_LENGTHS)
