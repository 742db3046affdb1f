"""The Prefill/Decode estimator: the simple model 2NS / (Nb + kappa S), and the seed's exact output.

N and kappa come from the core (exact, from the config); the output must still be the lesson
specification's six lines, character for character.
"""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from core.models import ModelSpec, kv_bytes_per_token, params
from prefill_decode.phase_intensity import (
    BYTES_PER_WEIGHT,
    LENGTHS,
    MODEL,
    decode_intensity,
    prefill_intensity,
)

SCRIPT = ROOT / "snippets" / "prefill_decode" / "phase_intensity.py"
TINY_CONFIG = ROOT / "labs" / "configs" / "tiny-qwen2" / "config.json"

# The lesson specification's "expected output" block, character for character.
SEED_EXPECTED_OUTPUT = """\
prefill S=  128: intensity ~=    127.9 FLOP/byte
prefill S= 1024: intensity ~=   1020.1 FLOP/byte
prefill S= 8192: intensity ~=   7946.9 FLOP/byte
decode  ctx=  128: intensity ~=     1.00 FLOP/byte
decode  ctx= 1024: intensity ~=     1.00 FLOP/byte
decode  ctx= 8192: intensity ~=     0.97 FLOP/byte
"""

# Qwen2.5-7B-Instruct, exactly (the seed rounded N to 7,615,000,000)
N = 7_615_616_512
KAPPA = 2 * 28 * 4 * 128 * 2


def tiny() -> ModelSpec:
    """The labs' tiny Qwen2: N = 558,208 and kappa = 512 (pinned in test_core)."""
    return ModelSpec.from_config(json.loads(TINY_CONFIG.read_text(encoding="utf-8")), key="tiny")


def test_prefill_intensity_matches_the_formula():
    # 2NS / (Nb + kappa S) with N = 558,208, b = 2, kappa = 512, S = 100
    assert prefill_intensity(tiny(), 100) == pytest.approx(
        2 * 558_208 * 100 / (558_208 * 2 + 51_200)
    )
    assert prefill_intensity(tiny(), 100, b=1) == pytest.approx(
        2 * 558_208 * 100 / (558_208 + 51_200)
    )


def test_decode_intensity_matches_the_formula():
    # 2N / (Nb + kappa S)
    assert decode_intensity(tiny(), 100) == pytest.approx(2 * 558_208 / (558_208 * 2 + 51_200))


def test_the_estimator_uses_the_exact_core_count_not_the_seeds_rounding():
    assert MODEL.key == "qwen2.5-7b-instruct" and BYTES_PER_WEIGHT == 2
    assert params(MODEL) == N and kv_bytes_per_token(MODEL) == KAPPA
    for s in LENGTHS:
        assert prefill_intensity(MODEL, s) == 2 * N * s / (N * 2 + KAPPA * s)
        assert decode_intensity(MODEL, s) == 2 * N / (N * 2 + KAPPA * s)
    rounded = 2 * 7_615_000_000 * 1024 / (7_615_000_000 * 2 + KAPPA * 1024)
    assert prefill_intensity(MODEL, 1024) != rounded  # same print, different number


def test_prefill_is_exactly_s_times_decode_at_equal_length():
    for s in (1, 7, 128, 8192):
        assert prefill_intensity(MODEL, s) / decode_intensity(MODEL, s) == pytest.approx(s)


def test_decode_intensity_never_exceeds_two_over_b_and_falls_with_context():
    values = [decode_intensity(MODEL, s) for s in (1, 128, 1024, 8192, 32768)]
    assert all(v < 2 / BYTES_PER_WEIGHT for v in values)
    assert values == sorted(values, reverse=True)


def test_prefill_intensity_saturates_at_2n_over_kappa():
    limit = 2 * N / KAPPA
    assert prefill_intensity(MODEL, 10**12) == pytest.approx(limit, rel=1e-3)
    assert prefill_intensity(MODEL, 10**12) < limit


def test_prefill_intensity_is_about_2s_over_b_for_short_prompts():
    s = 128
    assert prefill_intensity(MODEL, s) == pytest.approx(2 * s / BYTES_PER_WEIGHT, rel=1e-3)


@pytest.mark.parametrize("bad", [0, -1, -8192])
@pytest.mark.parametrize("function", [prefill_intensity, decode_intensity])
def test_non_positive_lengths_are_rejected_with_a_clear_error(function, bad):
    with pytest.raises(ValueError, match=r"must be a positive number of tokens, got -?\d+"):
        function(MODEL, bad)


def test_script_output_equals_the_seed_character_for_character():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True)
    assert proc.stdout == SEED_EXPECTED_OUTPUT


def test_a_copy_runs_anywhere_because_core_is_installed(tmp_path):
    # A reader copies the single file anywhere and runs it: `core` comes from the installed
    # package, not from the script's folder or the working directory (-I: isolated mode).
    copy = tmp_path / "phase_intensity.py"
    shutil.copy(SCRIPT, copy)
    proc = subprocess.run(
        [sys.executable, "-I", str(copy)], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == SEED_EXPECTED_OUTPUT
