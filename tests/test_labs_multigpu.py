"""The Part 7 labs' pre-flight on CPU with fakes: what a multi-GPU (or 80 GB) machine needs from
them before anything loads. labs/tensor_parallelism/tp_sweep.py must refuse, with a clear
message, when fewer GPUs are visible than its largest tensor-parallel size, and bind one core per
CPU worker on a CPU; labs/moe_expert_parallelism/moe_decode.py must refuse a dense config, a model
the core does not describe, and a GPU its experts do not fit.
"""

import sys

import pytest

import labkit as lab
from test_labs_gpu_path import lab_script  # a lab script as a module

GiB = 2**30


@pytest.fixture
def tp():
    return lab_script("tensor_parallelism/tp_sweep.py")


@pytest.fixture
def moe():
    return lab_script("moe_expert_parallelism/moe_decode.py")


class FakeNvml:
    """pynvml's three calls visible_gpu_count makes, on a machine with `count` GPUs."""

    def __init__(self, count: int, broken: bool = False) -> None:
        self.count, self.broken, self.shut = count, broken, False

    def nvmlInit(self) -> None:
        if self.broken:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlDeviceGetCount(self) -> int:
        return self.count

    def nvmlShutdown(self) -> None:
        self.shut = True


# ---------------------------------------------------------------- tensor parallelism: GPU count


@pytest.mark.parametrize(
    ("visible", "expected"),
    [(None, 4), ("0,1", 2), ("GPU-1f2e,GPU-3c4d,GPU-5a6b", 3), ("", 0), ("0,1,2,3,4,5", 4)],
)
def test_visible_gpus_are_nvmls_count_cut_to_cuda_visible_devices(tp, visible, expected):
    nvml = FakeNvml(4)
    assert tp.visible_gpu_count(visible, nvml) == expected
    assert nvml.shut


def test_without_nvml_no_gpu_is_visible(tp):
    assert tp.visible_gpu_count(None, FakeNvml(4, broken=True)) == 0


def test_fewer_gpus_than_the_largest_tp_is_refused_with_the_fix(tp, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    with pytest.raises(lab.PreflightError) as refused:
        tp.check_gpu_count(2, 4)
    message = str(refused.value)
    assert "pre-flight: --tp asks for up to 4 GPUs (tensor_parallel_size=4)" in message
    assert "only 2 are visible (CUDA_VISIBLE_DEVICES='0,1')" in message
    assert "fix: run on a machine with 4 GPUs, or pass --tp with sizes up to 2 (e.g. --tp 1,2)" in (
        message
    )
    tp.check_gpu_count(4, 4)  # enough: no refusal


def test_the_sweep_refuses_before_any_engine_starts(tp, monkeypatch, capsys):
    # a one-GPU CUDA machine, the default sweep (TP 1, 2, 4): refused in the parent process,
    # before run_children starts a child (and so before vLLM is imported anywhere)
    monkeypatch.setattr(sys, "argv", ["tp_sweep.py"])
    monkeypatch.setattr(tp.lab, "preflight", lambda *a: "cuda")
    monkeypatch.setattr(tp, "visible_gpu_count", lambda: 1)

    def no_engine(*args):
        raise AssertionError("an engine was started despite the pre-flight")

    monkeypatch.setattr(tp.lab, "run_children", no_engine)
    with pytest.raises(SystemExit) as refused:
        tp.main()
    assert refused.value.code == lab.NOT_THIS_MACHINE  # verify_labs --run: skipped, not failed
    assert "pre-flight: --tp asks for up to 4 GPUs" in capsys.readouterr().err


def test_a_cpu_gives_each_worker_a_core_and_refuses_more_workers_than_cores(tp, monkeypatch):
    monkeypatch.delenv(tp.CPU_BIND, raising=False)
    said = tp.cpu_thread_binding(2, [3, 0, 1])
    assert tp.os.environ[tp.CPU_BIND] == "0|1" and "one core per CPU worker" in said
    monkeypatch.setenv(tp.CPU_BIND, "nobind")
    assert "as set by you" in tp.cpu_thread_binding(2, [0, 1])
    assert tp.os.environ[tp.CPU_BIND] == "nobind"
    with pytest.raises(lab.PreflightError, match="only 1 core"):
        tp.check_cpu_count(1, 2)


# ---------------------------------------------------------------- MoE: the model and its memory


def test_a_dense_config_is_refused_before_loading(moe):
    with pytest.raises(lab.PreflightError, match="not a mixture-of-experts config"):
        moe.resolve_moe("ignored", True, str(lab.CONFIGS["tiny"]))


def test_a_model_the_core_does_not_describe_is_refused(moe):
    with pytest.raises(lab.PreflightError, match="not an MoE model the course's core describes"):
        moe.resolve_moe("someone/Some-MoE", False, None)


def test_the_default_and_tiny_models_resolve_to_the_cores_moe(moe):
    spec, m = moe.resolve_moe(moe.DEFAULT_MODEL, False, None)
    assert (spec.model, spec.load_format, m.num_experts, m.experts_per_token) == (
        "Qwen/Qwen3-30B-A3B",
        "auto",
        128,
        8,
    )
    spec, m = moe.resolve_moe("ignored", False, "tiny")
    assert spec.dummy and (m.num_experts, m.experts_per_token, m.head_dim) == (8, 2, 64)


def gpu(name: str, total: int, free: int) -> lab.GpuInfo:
    return lab.GpuInfo(name, total, free, "580.95.05", 13000)


def test_all_experts_must_fit_a_24_gb_card_refuses_qwen3_30b_a3b(moe, monkeypatch, capsys):
    _, m = moe.resolve_moe(moe.DEFAULT_MODEL, False, None)
    card = gpu("NVIDIA GeForce RTX 4090", 24 * GiB, 23 * GiB)
    monkeypatch.setattr(moe.lab, "probe_gpu", lambda: card)
    with pytest.raises(SystemExit) as refused:
        moe.check_gpu_fits(m, 0.9, 192, 192, 128)
    assert refused.value.code == lab.NOT_THIS_MACHINE
    said = capsys.readouterr().err
    assert "weights take 56.9 GiB in BF16, more than this NVIDIA GeForce RTX 4090's" in said
    assert "use a GPU with at least" in said  # 30.5B parameters in BF16, every expert


def test_a_card_that_holds_the_weights_gets_labkits_fix_for_its_settings(moe, monkeypatch):
    _, m = moe.resolve_moe(moe.DEFAULT_MODEL, False, None)
    card = gpu("NVIDIA H100 80GB HBM3", 80 * GiB, 79 * GiB)
    monkeypatch.setattr(moe.lab, "probe_gpu", lambda: card)
    with pytest.raises(lab.PreflightError, match="pass --gpu-memory-utilization"):
        moe.check_gpu_fits(m, 0.75, 192, 192, 128)  # 60 GiB: the weights do not fit the share


def test_verify_labs_reports_a_lab_this_machine_cannot_run_as_skipped(tmp_path, monkeypatch):
    import verify_labs  # scripts/verify_labs.py

    refusing = tmp_path / "refusing.py"
    refusing.write_text(f"raise SystemExit({lab.NOT_THIS_MACHINE})\n", encoding="utf-8")
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit('pre-flight: a wrong setting')\n", encoding="utf-8")
    monkeypatch.setattr(verify_labs, "LABS", tmp_path)
    outs, failed, skipped = verify_labs.run_labs(
        sys.executable, {"refusing": [], "broken": []}, tmp_path / "out"
    )
    assert (outs, failed, skipped) == ([], ["broken"], ["refusing"])


def test_an_80_gb_card_holds_qwen3_30b_a3b_and_its_largest_batch(moe, monkeypatch, capsys):
    _, m = moe.resolve_moe(moe.DEFAULT_MODEL, False, None)
    card = gpu("NVIDIA H100 80GB HBM3", 80 * GiB, 79 * GiB)
    monkeypatch.setattr(moe.lab, "probe_gpu", lambda: card)
    moe.check_gpu_fits(m, 0.92, 192, 192, 128)
    assert "all 128 experts resident, KV cache for batch 128" in capsys.readouterr().out


def test_the_printed_curve_is_the_lessons_function(moe):
    from core.moe import decode_weight_bytes, expected_distinct_experts

    _, m = moe.resolve_moe(moe.DEFAULT_MODEL, False, None)
    for batch in (1, 8, 128):
        assert moe.prediction(m, batch) == (
            expected_distinct_experts(128, 8, batch),
            decode_weight_bytes(m, batch),
        )
    assert moe.prediction(m, 1)[0] == pytest.approx(8)


# ------------------------------------------------------------ the pages quote the labs' defaults


def test_the_tp_page_quotes_floors_for_the_labs_defaults(tp):
    from core.lab_results import model_for
    from tensor_parallelism import values

    assert list(values.LAB_TP) == tp.TP_SIZES and list(values.LAB_BATCHES) == tp.BATCHES
    assert (values.LAB_PROMPT, values.LAB_NEW) == (tp.PROMPT_TOKENS, tp.NEW_TOKENS)
    assert values.LAB_LINK == tp.DEFAULT_LINK
    # the page's model is the one the lab loads by default (labkit's, the AWQ checkpoint)
    run = {"model": {"id": lab.DEFAULT_MODEL, "quantization": "awq"}}
    assert model_for(run)[0].key == values.LAB_MODEL


def test_the_moe_page_quotes_floors_for_the_labs_defaults(moe):
    from moe_expert_parallelism import values
    from moe_expert_parallelism.moe_bytes import MODEL

    assert list(values.LAB_BATCHES) == moe.BATCHES
    assert (values.LAB_PROMPT, values.LAB_NEW) == (moe.PROMPT_TOKENS, moe.NEW_TOKENS)
    assert moe.core_moe_for_repo(moe.DEFAULT_MODEL).key == MODEL == moe.DUMMY_MODEL
    assert set(values.LAB_SHOWN) <= set(values.LAB_BATCHES)
