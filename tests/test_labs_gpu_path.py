"""The labs' CUDA-only paths, on CPU with fakes: what a clean CUDA machine needs from them.

Each test stands for one behaviour of vLLM 0.26.0's GPU wheel that the CPU smoke runs cannot
reach: FlashInfer's sampler at start-up, a 24 GB card under --dummy, non-bit-identical kernels in
the KV handoff, asynchronous scheduling, CUDA's memory total, `vllm serve`'s batch defaults, a
refused prefix-cache reset, an engine restarted before its predecessor's memory is free, and the
workflow's time budget.
"""

import ast
import asyncio
import enum
import importlib.util
import json
import math
import re
import sys
import types
from types import SimpleNamespace

import pytest
import yaml

import labkit as lab
import verify_labs  # scripts/verify_labs.py
from conftest import ROOT
from core.memory import MemoryBudget
from core.models import kv_bytes_per_token

GiB = 2**30
RTX_4090_NVML = 25_757_220_864  # NVML's total on an RTX 4090
RTX_4090_CUDA = RTX_4090_NVML - 376 * 2**20  # about 0.35 GiB less, as CUDA reports it


def lab_script(relative: str):
    """A lab script as a module (its vLLM imports are inside functions)."""
    path = ROOT / "labs" / relative
    spec = importlib.util.spec_from_file_location(f"lab_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpu(free: int, total: int = RTX_4090_NVML) -> lab.GpuInfo:
    return lab.GpuInfo("NVIDIA GeForce RTX 4090", total, free, "580.95.05", 13000)


def fake_llm(async_scheduling: bool | None = True, **cache) -> SimpleNamespace:
    """What the labs read from an LLM: llm_engine.vllm_config and model_config."""
    config = SimpleNamespace(
        model_config=SimpleNamespace(max_model_len=4096),
        cache_config=SimpleNamespace(enable_prefix_caching=False, **cache),
        scheduler_config=SimpleNamespace(
            async_scheduling=async_scheduling, max_num_seqs=256, max_num_batched_tokens=2048
        ),
    )
    model = SimpleNamespace(quantization=None, dtype=SimpleNamespace(itemsize=2))
    return SimpleNamespace(llm_engine=SimpleNamespace(vllm_config=config), model_config=model)


# ---------------------------------------------------------------- 1. FlashInfer's sampler


def test_the_labs_environment_selects_vllms_native_sampler(monkeypatch):
    monkeypatch.delenv("VLLM_USE_FLASHINFER_SAMPLER", raising=False)
    for name in ("VLLM_CACHE_ROOT", "XDG_CACHE_HOME", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    lab.setup_environment(dummy=True)
    assert lab.os.environ["VLLM_USE_FLASHINFER_SAMPLER"] == "0"


def test_the_preflight_says_which_sampler_it_chose(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("VLLM_USE_FLASHINFER_SAMPLER", raising=False)
    (tmp_path / "Python.h").touch()
    monkeypatch.setattr(lab, "installed_vllm", lambda: {"vllm": "0.26.0"})
    monkeypatch.setattr(lab.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(lab, "probe_gpu", lambda: gpu(23 * GiB))
    monkeypatch.setattr(lab, "c_compiler", lambda: "/usr/bin/gcc")
    monkeypatch.setattr(lab, "python_header", lambda: tmp_path / "Python.h")
    awq = lab.resolve_model(lab.DEFAULT_MODEL, False, None)
    assert lab.preflight(awq, 4096, 2008, 0.92) == "cuda"
    out = capsys.readouterr().out
    assert "pre-flight: sampler: VLLM_USE_FLASHINFER_SAMPLER=0" in out and "nvcc" in out
    assert lab.os.environ["VLLM_USE_FLASHINFER_SAMPLER"] == "0"


def test_a_sampler_chosen_by_the_user_is_kept_and_named(monkeypatch):
    monkeypatch.setenv("VLLM_USE_FLASHINFER_SAMPLER", "1")
    assert "VLLM_USE_FLASHINFER_SAMPLER=1 as set by you" in lab.use_native_sampler()
    assert lab.os.environ["VLLM_USE_FLASHINFER_SAMPLER"] == "1"


# ---------------------------------------------------------------- 2. --dummy on a 24 GB card


def test_dummy_mode_sweeps_only_the_batches_a_24_gb_card_holds():
    sweep = lab_script("batched_decode/batch_sweep.py")
    bf16 = lab.resolve_model("ignored", True, None)  # --dummy: the BF16 7B config, ~14.2 GiB
    context = sweep.PROMPT_TOKENS + sweep.NEW_TOKENS
    fits = sweep.batches_that_fit(bf16, RTX_4090_NVML, 0.92, context)
    assert 128 <= fits < 256  # the full default sweep (up to 256) would be refused
    batches = sweep.default_batches(fits)
    assert max(batches) <= fits and batches == [b for b in sweep.BATCHES if b <= 128]
    sweep.check_batch_fits(bf16, RTX_4090_NVML, 0.92, max(batches), context)  # no refusal
    with pytest.raises(lab.PreflightError):
        sweep.check_batch_fits(bf16, RTX_4090_NVML, 0.92, 256, context)
    assert sweep.default_batches(None) == sweep.BATCHES  # unknown model: vLLM decides


# ---------------------------------------------------------------- 3. the KV handoff on CUDA


def ranked(*pairs: tuple[int, float]) -> list:
    return [list(pairs)]


def test_identical_greedy_tokens_match():
    connector = lab_script("pd_disaggregation/kv_connector.py")
    got = connector.compare_greedy([5, 6], ranked((5, -0.1), (9, -2.0)) * 2, [5, 6])
    assert got == {
        "tokens_match": True,
        "first_token_match": True,
        "diverged_at": None,
        "top2_gap": None,
        "near_tie": True,
    }


def test_a_token_taken_at_a_near_tie_is_accepted_with_its_gap():
    connector = lab_script("pd_disaggregation/kv_connector.py")
    top = ranked((5, -0.70), (9, -0.72)) + ranked((6, -0.1), (7, -3.0))
    got = connector.compare_greedy([5, 6], top, [9, 4])
    assert (got["tokens_match"], got["first_token_match"], got["diverged_at"]) == (False, False, 0)
    assert got["top2_gap"] == pytest.approx(0.02) and got["near_tie"]


def test_a_real_difference_is_not_a_near_tie():
    connector = lab_script("pd_disaggregation/kv_connector.py")
    top = ranked((5, -0.1), (9, -0.2)) + ranked((6, -0.05), (7, -3.0))
    got = connector.compare_greedy([5, 6], top, [5, 7])  # 7: the runner-up, 2.95 nats behind
    assert got["first_token_match"] and got["diverged_at"] == 1
    assert not got["near_tie"]
    outside = connector.compare_greedy([5, 6], top, [5, 8])  # 8: not even in the top two
    assert not outside["near_tie"]


def connector_doc(**handoff) -> dict:
    h = {"prompt_tokens": 300, "stored_tokens": 299, "stored_bytes": 512 * 299,
         "loaded_tokens": 256, "tokens_match": True, "first_token_match": True,
         "diverged_at": None, "top2_gap": None, "near_tie": True} | handoff  # fmt: skip
    return {
        "parameters": {"block_size": 128, "near_tie_nats": 0.25},
        "model": {"kv_bytes_per_token": 512},
        "measurements": [],
        "handoffs": [h],
        "connector_counters": {"external_prefix_cache_hits": 256},
    }


def same_tokens(doc: dict) -> lab.Check:
    claims = verify_labs.claims_module("pd_disaggregation").connector_claims(doc)
    return next(c for c in claims if c.name.startswith("consumer's tokens equal"))


def test_verify_labs_accepts_a_near_tie_and_reports_it():
    tie = same_tokens(connector_doc(tokens_match=False, diverged_at=3, top2_gap=0.01))
    assert tie.status == "PASS" and "near-ties: prompt 300 at token 3 (gap 0.010)" in tie.detail
    far = same_tokens(
        connector_doc(tokens_match=False, diverged_at=0, top2_gap=2.5, near_tie=False)
    )
    assert far.status == "FAIL" and "differs at new token 0" in far.detail


# ---------------------------------------------------------------- 4. steps in flight


def test_every_lab_records_async_scheduling_from_the_engine():
    opts = SimpleNamespace(gpu_memory_utilization=0.92, seed=0)
    assert lab.common_parameters(fake_llm(True), opts, warmup=1)["async_scheduling"] is True
    assert lab.common_parameters(fake_llm(False), opts)["async_scheduling"] is False
    schema = verify_labs.results_schema()
    assert "async_scheduling" in schema["properties"]["parameters"]["required"]


def test_chunked_prefill_steps_its_engine_one_step_at_a_time(monkeypatch):
    scene = lab_script("chunked_prefill/long_prompt.py")
    seen = {}

    class Started(Exception):
        pass

    def start_engine(*args, **kwargs):
        seen.update(kwargs, env=lab.os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING"))
        raise Started

    monkeypatch.setattr(lab, "start_engine", start_engine)
    monkeypatch.delenv("VLLM_ENABLE_V1_MULTIPROCESSING", raising=False)
    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(SamplingParams=object))
    opts = SimpleNamespace(
        long_prompt=400, long_tokens=4, decodes=4, decode_prompt=32, decode_tokens=24,
        max_model_len=None, gpu_memory_utilization=0.92, enforce_eager=False,
    )  # fmt: skip
    spec = lab.resolve_model("ignored", True, "tiny")
    with pytest.raises(Started):
        scene.serve(opts, spec, "cuda", "128:on")
    assert seen["async_scheduling"] is False  # on by default on CUDA: one step planned ahead
    assert seen["env"] == "0"  # the engine core in this process: no step runs ahead of step()
    assert seen["max_num_batched_tokens"] == 128 and seen["enable_chunked_prefill"] is True


# ---------------------------------------------------------------- 5. CUDA's total


def test_cuda_total_is_measured_in_a_throwaway_process():
    calls = []

    def run(cmd, **kwargs):
        calls.append(cmd)
        return SimpleNamespace(returncode=0, stdout=f"{RTX_4090_CUDA}\n")

    assert lab.cuda_total_bytes(run) == RTX_4090_CUDA
    assert calls[0][0] == sys.executable and "mem_get_info" in calls[0][-1]
    failed = lambda cmd, **kwargs: SimpleNamespace(returncode=1, stdout="")  # noqa: E731
    assert lab.cuda_total_bytes(failed) is None


def test_kv_capacity_budgets_profiled_rows_from_cudas_total(monkeypatch, capsys):
    capacity = lab_script("paged_attention/kv_capacity.py")
    qwen = json.loads((lab.CONFIGS["qwen2.5-7b-instruct"] / "config.json").read_text())
    written = {}

    def start_engine(spec, backend, max_model_len, opts, **kwargs):
        llm = fake_llm(
            block_size=16,
            num_gpu_blocks=1000,
            kv_cache_size_tokens=16_000,
            kv_cache_max_concurrency=3.9,
            cache_dtype="auto",
        )
        llm.model_config.hf_config = SimpleNamespace(to_dict=lambda: qwen)
        return llm

    monkeypatch.setattr(lab, "preflight", lambda *args: "cuda")
    monkeypatch.setattr(lab, "setup_environment", lambda dummy: None)
    monkeypatch.setattr(lab, "cuda_total_bytes", lambda: RTX_4090_CUDA)
    monkeypatch.setattr(lab, "start_engine", start_engine)
    monkeypatch.setattr(lab, "stop_engine", lambda llm: None)
    monkeypatch.setattr(lab, "results_document", lambda *args: {"rows": args[5]})
    monkeypatch.setattr(lab, "write_results", lambda doc, out: written.update(doc) or "-")
    monkeypatch.setattr(sys, "argv", ["kv_capacity.py", "--dummy", "--utilizations", "0.8"])
    capacity.main()
    [profiled] = [r for r in written["rows"] if not r.exact]
    spec = lab.resolve_model("ignored", True, None)
    budget = MemoryBudget(RTX_4090_CUDA, 0.8, block_size=16)
    weights = lab.resident_weight_bytes(spec.spec, spec.fmt)
    assert profiled.estimate_tokens == budget.tokens(weights, kv_bytes_per_token(spec.spec, 2))
    nvml = MemoryBudget(RTX_4090_NVML, 0.8, block_size=16)
    assert profiled.estimate_tokens < nvml.tokens(weights, kv_bytes_per_token(spec.spec, 2))


def test_the_explicit_size_path_is_not_described_as_skipping_profiling():
    text = (ROOT / "labs" / "paged_attention" / "kv_capacity.py").read_text(encoding="utf-8")
    assert "skips memory profiling" not in text
    assert "still runs its" in text and "profiling forward pass" in text


# ---------------------------------------------------------------- 6. configured like vllm serve


class UsageContext(enum.Enum):  # vllm.usage.usage_lib.UsageContext's two members used here
    ENGINE_CONTEXT = "ENGINE_CONTEXT"
    OPENAI_API_SERVER = "OPENAI_API_SERVER"


def test_the_load_test_engine_gets_vllm_serves_batch_defaults(monkeypatch):
    load = lab_script("load_testing/poisson_load.py")
    seen = {}

    class Started(Exception):
        pass

    def from_engine_args(args, usage_context=UsageContext.ENGINE_CONTEXT):
        seen.update(args=args, usage_context=usage_context)
        raise Started

    modules = {
        "vllm.engine.arg_utils": {"AsyncEngineArgs": lambda **kw: kw},
        "vllm.sampling_params": {"RequestOutputKind": None, "SamplingParams": None},
        "vllm.usage.usage_lib": {"UsageContext": UsageContext},
        "vllm.v1.engine.async_llm": {
            "AsyncLLM": SimpleNamespace(from_engine_args=from_engine_args)
        },
    }
    for name, members in modules.items():
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(**members))
    opts = SimpleNamespace(max_model_len=None, prompt_tokens=32, output_tokens=8,
                           gpu_memory_utilization=0.92, enforce_eager=True)  # fmt: skip
    with pytest.raises(Started):
        asyncio.run(load.load_test(opts, lab.resolve_model("x", True, "tiny"), "cuda"))
    assert seen["usage_context"] is UsageContext.OPENAI_API_SERVER
    assert seen["args"]["enable_prefix_caching"] is False and seen["args"]["enforce_eager"]


def test_the_load_test_records_the_batch_limits_it_ran_with():
    schema = json.loads((ROOT / "labs" / "load_testing" / "schema.json").read_text())
    required = schema["$defs"]["load_test_parameters"]["required"]
    assert {"max_num_seqs", "max_num_batched_tokens"} <= set(required)


# ---------------------------------------------------------------- 7. prefix-cache reset


def test_a_refused_prefix_cache_reset_stops_the_lab():
    prefix = lab_script("prefix_caching/prefix_cache.py")
    prefix.reset_cache(SimpleNamespace(reset_prefix_cache=lambda: True))
    with pytest.raises(RuntimeError, match="reset_prefix_cache\\(\\) returned False"):
        prefix.reset_cache(SimpleNamespace(reset_prefix_cache=lambda: False))


# ---------------------------------------------------------------- 8. engines restarted


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_restarted_engine_waits_until_the_memory_is_free():
    clock = Clock()
    frees = iter([2 * GiB, 5 * GiB, 23 * GiB])
    lab.wait_for_gpu_memory(0.8, 60, lambda: gpu(next(frees)), clock.sleep, clock)
    assert clock.now == 2.0  # two polls while the previous engine's memory was held


def test_the_wait_ends_with_a_clear_message():
    clock = Clock()
    with pytest.raises(RuntimeError) as error:
        lab.wait_for_gpu_memory(0.8, 10, lambda: gpu(3 * GiB), clock.sleep, clock)
    message = str(error.value)
    assert "3.0 GiB free after waiting 10 s" in message and "nvidia-smi" in message
    assert clock.now >= 10


def test_start_engine_waits_on_cuda_before_building_the_engine(monkeypatch):
    order = []

    class LLM:
        def __init__(self, **kwargs):
            order.append(("LLM", kwargs))
            self.model_config = SimpleNamespace(quantization=None)

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=LLM))
    monkeypatch.setattr(lab, "wait_for_gpu_memory", lambda u: order.append(("wait", u)))
    spec = lab.resolve_model("ignored", True, "tiny")
    opts = SimpleNamespace(gpu_memory_utilization=0.9, enforce_eager=False)
    lab.start_engine(spec, "cuda", 2048, opts, max_num_seqs=4)
    assert [step for step, _ in order] == ["wait", "LLM"]
    kwargs = order[1][1]
    assert kwargs["max_num_seqs"] == 4 and kwargs["kv_cache_memory_bytes"] is None  # GPU sizes it
    assert kwargs["disable_log_stats"] is False and kwargs["skip_tokenizer_init"] is True
    order.clear()
    lab.start_engine(spec, "cpu", 2048, opts, gpu_memory_utilization=0.5)
    assert [step for step, _ in order] == ["LLM"] and order[0][1]["kv_cache_memory_bytes"] > 0
    assert order[0][1]["gpu_memory_utilization"] == 0.5  # a lab's own value wins


@pytest.mark.parametrize(
    "script", ["paged_attention/kv_capacity.py", "pd_disaggregation/kv_connector.py"]
)
def test_labs_that_restart_engines_go_through_start_engine(script):
    tree = ast.parse((ROOT / "labs" / script).read_text(encoding="utf-8"))
    calls = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert {"stop_engine", "start_engine"} <= calls
    assert "LLM" not in calls  # no engine started around the wait


# ---------------------------------------------------------------- 9. the workflow's budget


def engine_starts() -> dict[str, int]:
    """Engines each lab starts with its defaults on a GPU, from the lab scripts' own constants."""
    batching = lab_script("continuous_batching/max_num_seqs.py")
    capacity = lab_script("paged_attention/kv_capacity.py")
    chunked = lab_script("chunked_prefill/long_prompt.py")
    formats = lab_script("weight_quantization/formats.py")
    kv_fp8 = lab_script("kv_quantization_long_context/kv_fp8.py")
    default_blocks = capacity.block_list("auto,32")  # kv_capacity's --block-sizes default
    from kernels_cuda_graphs import lab_results as graphs  # one engine per configuration
    from speculative_decoding import lab_results as speculation

    return {
        "phases": 1, "sweep": 1, "batch_sweep": 1, "max_num_seqs": len(batching.VALUES),
        "kv_capacity": len(capacity.GPU_KV_BYTES) * len(default_blocks)
        + len(capacity.UTILIZATIONS),
        "prefix_cache": 1, "kv_connector": 2, "chunked_prefill": len(chunked.VALUES) + 1,
        "load_test": 1, "weight_formats": len(formats.LAB_FORMATS),
        "kv_fp8": len(kv_fp8.LAB_DTYPES), "ngram_speculation": len(speculation.CONFIGS),
        "cuda_graphs": len(graphs.CONFIGS), "serve_metrics": 1, "structured_lora": 1,
        # the workflow's one RTX 4090: tp_sweep needs 4 GPUs, moe_decode an 80 GB card; their
        # pre-flights exit NOT_THIS_MACHINE before any engine starts, and verify_labs skips them
        "tp_sweep": 0, "moe_decode": 0,
    }  # fmt: skip


def test_the_workflows_budget_shows_its_arithmetic():
    text = (ROOT / ".github" / "workflows" / "gpu-labs.yml").read_text(encoding="utf-8")
    timeout = yaml.safe_load(text)["jobs"]["verify"]["timeout-minutes"]
    comment = " ".join(line.strip().lstrip("# ") for line in text.splitlines() if "#" in line)
    starts = engine_starts()
    assert set(starts) == set(verify_labs.lab_claims())  # every lab counted
    n = sum(starts.values())
    assert f"start {n} engines" in comment
    for lab_name, count in starts.items():
        assert f"{lab_name} {count}" in comment
    m = re.search(rf"{n} x (\d+)-(\d+) min = (\d+)-(\d+) min; measuring ~(\d+) min;", comment)
    assert m, comment
    low, high, low_total, high_total, measuring = map(int, m.groups())
    assert (low_total, high_total) == (n * low, n * high)
    m = re.search(r"~(\d+) min: (\d+)-(\d+) min\.", comment)
    setup, low_all, high_all = map(int, m.groups())
    assert (low_all, high_all) == (low_total + measuring + setup, high_total + measuring + setup)
    assert high_all < timeout <= 2 * high_all
    assert f"{timeout / high_all:.1f}x the upper estimate" in comment
    assert math.isclose(round(timeout / high_all, 1), timeout / high_all, abs_tol=0.05)
