"""The Prefill/Decode estimator: each function, its input checks, and the seed's exact output."""

import math
import runpy
import subprocess
import sys

import pytest

from conftest import ROOT
from prefill_decode.phase_intensity import (
    QWEN25_7B,
    ModelConfig,
    decode_intensity,
    prefill_intensity,
)

SCRIPT = ROOT / "snippets" / "prefill_decode" / "phase_intensity.py"

# The lesson specification's "expected output" block, character for character.
SEED_EXPECTED_OUTPUT = """\
prefill S=  128: intensity ~=    127.9 FLOP/byte
prefill S= 1024: intensity ~=   1020.1 FLOP/byte
prefill S= 8192: intensity ~=   7946.9 FLOP/byte
decode  ctx=  128: intensity ~=     1.00 FLOP/byte
decode  ctx= 1024: intensity ~=     1.00 FLOP/byte
decode  ctx= 8192: intensity ~=     0.97 FLOP/byte
"""

TOY = ModelConfig("toy", params=1000, kv_bytes_per_token=10, weight_bytes=2)


def test_prefill_intensity_matches_the_formula():
    # 2NS / (Nb + kappa S) with N=1000, b=2, kappa=10, S=100: 200000 / 3000
    assert prefill_intensity(TOY, 100) == pytest.approx(200_000 / 3_000)


def test_decode_intensity_matches_the_formula():
    # 2N / (Nb + kappa S): 2000 / 3000
    assert decode_intensity(TOY, 100) == pytest.approx(2_000 / 3_000)


def test_prefill_is_exactly_s_times_decode_at_equal_length():
    for s in (1, 7, 128, 8192):
        assert prefill_intensity(QWEN25_7B, s) / decode_intensity(QWEN25_7B, s) == pytest.approx(s)


def test_decode_intensity_never_exceeds_two_over_b_and_falls_with_context():
    values = [decode_intensity(QWEN25_7B, s) for s in (1, 128, 1024, 8192, 32768)]
    assert all(v < 2 / QWEN25_7B.weight_bytes for v in values)
    assert values == sorted(values, reverse=True)


def test_prefill_intensity_saturates_at_2n_over_kappa():
    limit = 2 * QWEN25_7B.params / QWEN25_7B.kv_bytes_per_token
    assert prefill_intensity(QWEN25_7B, 10**12) == pytest.approx(limit, rel=1e-3)
    assert prefill_intensity(QWEN25_7B, 10**12) < limit


def test_prefill_intensity_is_about_2s_over_b_for_short_prompts():
    s = 128
    assert prefill_intensity(QWEN25_7B, s) == pytest.approx(
        2 * s / QWEN25_7B.weight_bytes, rel=1e-3
    )


@pytest.mark.parametrize("bad", [0, -1, -8192])
@pytest.mark.parametrize("function", [prefill_intensity, decode_intensity])
def test_non_positive_lengths_are_rejected_with_a_clear_error(function, bad):
    with pytest.raises(ValueError, match=r"must be a positive number of tokens, got -?\d+"):
        function(QWEN25_7B, bad)


@pytest.mark.parametrize("field", ["params", "kv_bytes_per_token", "weight_bytes"])
def test_model_config_rejects_non_positive_sizes(field):
    kwargs = {"name": "bad", "params": 1, "kv_bytes_per_token": 1, "weight_bytes": 1, field: 0}
    with pytest.raises(ValueError, match=field):
        ModelConfig(**kwargs)


def test_seed_inputs():
    assert QWEN25_7B.params == 7_615_000_000
    # kappa = 2 (K and V) * 28 layers * 4 KV heads * 128 head dim * 2 bytes
    assert QWEN25_7B.kv_bytes_per_token == 2 * 28 * 4 * 128 * 2
    assert math.isclose(QWEN25_7B.weight_bytes, 2)


def test_script_output_equals_the_seed_character_for_character():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True)
    assert proc.stdout == SEED_EXPECTED_OUTPUT


def test_script_runs_standalone_without_the_course_on_sys_path(tmp_path, capsys):
    # A reader copies the single file anywhere and runs it.
    copy = tmp_path / "phase_intensity.py"
    copy.write_text(SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    runpy.run_path(str(copy), run_name="__main__")
    assert capsys.readouterr().out == SEED_EXPECTED_OUTPUT
