"""Part 6's labs on their CUDA-only paths, on CPU with fakes: the speculation lab's counters and
predictions, the CUDA graphs lab's compilation settings and timing claims, as a GPU run would
give them to scripts/verify_labs.py."""

import enum
import importlib.util
from types import SimpleNamespace

import pytest

from conftest import ROOT
from core.kernels import default_capture_sizes
from kernels_cuda_graphs import lab_results as graphs
from speculative_decoding import lab_results as speculation


def module(relative: str):
    """A lab file as a module (its vLLM imports are inside functions)."""
    path = ROOT / "labs" / relative
    spec = importlib.util.spec_from_file_location(f"part6_{path.stem}", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


ngram = module("speculative_decoding/ngram_lookup.py")
spec_claims = module("speculative_decoding/claims.py")
cuda_graphs = module("kernels_cuda_graphs/cuda_graphs.py")
graph_claims = module("kernels_cuda_graphs/claims.py")

RTX_4090_AWQ = {
    "device": {"kind": "cuda", "slug": "rtx_4090", "name": "NVIDIA GeForce RTX 4090"},
    "model": {"id": "Qwen/Qwen2.5-7B-Instruct-AWQ", "quantization": "auto_awq"},
}


# ---------------------------------------------------------------- the speculation lab


def fake_metrics(drafts: int, draft_tokens: int, accepted: int, per_pos: list[int]):
    """What LLM.get_metrics() returns: Counters (no "_total") and the per-position Vector."""
    counter = lambda name, value: SimpleNamespace(name=name, value=value)  # noqa: E731
    return [
        counter("vllm:num_preemptions", 7),
        counter("vllm:spec_decode_num_drafts", drafts),
        counter("vllm:spec_decode_num_draft_tokens", draft_tokens),
        counter("vllm:spec_decode_num_accepted_tokens", accepted),
        SimpleNamespace(name="vllm:spec_decode_num_accepted_tokens_per_pos", values=per_pos),
    ]


def test_the_counters_are_read_from_get_metrics_and_differenced():
    llm = SimpleNamespace(get_metrics=lambda: fake_metrics(12, 34, 30, [11, 10, 9]))
    before = ngram.spec_counters(llm, 3)
    assert before == {
        "num_drafts": 12,
        "num_draft_tokens": 34,
        "num_accepted_tokens": 30,
        "accepted_per_pos": [11, 10, 9],
    }
    llm.get_metrics = lambda: fake_metrics(20, 58, 50, [19, 17, 14])
    assert ngram.delta(ngram.spec_counters(llm, 3), before) == {
        "num_drafts": 8,
        "num_draft_tokens": 24,
        "num_accepted_tokens": 20,
        "accepted_per_pos": [8, 7, 5],
    }


def test_an_engine_without_speculation_has_zero_counters():
    llm = SimpleNamespace(get_metrics=lambda: fake_metrics(0, 0, 0, [0])[:1])
    assert ngram.spec_counters(llm, 4)["accepted_per_pos"] == [0, 0, 0, 0]


def test_a_per_position_vector_of_another_gamma_stops_the_lab():
    llm = SimpleNamespace(get_metrics=lambda: fake_metrics(1, 3, 1, [1, 0, 0]))
    with pytest.raises(RuntimeError, match="3 positions, not 4"):
        ngram.spec_counters(llm, 4)


def test_the_alpha_from_the_counters_reproduces_the_mean_acceptance_length():
    from core.speculative import expected_tokens

    acc = speculation.Acceptance(
        drafts=100, draft_tokens=400, accepted=250, accepted_per_pos=(80, 70, 60, 40)
    )
    assert acc.mean_length == 3.5
    assert expected_tokens(acc.alpha(4), 4) == pytest.approx(3.5, abs=1e-9)
    assert acc.rate_per_pos == (0.8, 0.7, 0.6, 0.4)


def spec_run(tpot_off: dict[int, float], tpot_on: dict[int, float], accepted: int) -> dict:
    """A GPU results document of the speculation lab, as far as the claims read it."""
    calls = []
    for config, tpots in (("off", tpot_off), ("ngram", tpot_on)):
        for b, tpot in tpots.items():
            drafts = 100 * b if config == "ngram" else 0
            got = accepted * b if config == "ngram" else 0
            per_pos = [0] * 4
            for i in range(4):  # the accepted tokens, front-loaded
                per_pos[i] = min(drafts, max(0, got - sum(per_pos)))
            calls.append(
                {
                    "config": config, "phase": "measured", "batch": b, "repeat": 0,
                    "tpot_s": tpot, "output_tokens_per_s": b / tpot, "span_s": 1.0,
                    "num_drafts": drafts, "num_draft_tokens": 4 * drafts,
                    "num_accepted_tokens": got, "accepted_per_pos": per_pos,
                }
            )  # fmt: skip
    parameters = {
        "configs": ["off", "ngram"], "batches": sorted(tpot_off), "gamma": 4, "repeats": 1,
        "prompt_tokens": 1024, "new_tokens": 128,
    }  # fmt: skip
    return RTX_4090_AWQ | {"parameters": parameters, "speculation": calls}


def test_a_speedup_beyond_the_best_case_prediction_fails():
    # 250 accepted per 100 drafts: mean length 3.5, so at batch 1 the prediction is about x3.5
    honest = spec_run({1: 0.010, 32: 0.012}, {1: 0.0040, 32: 0.0100}, 250)
    check = spec_claims.claim_speedup_within_prediction(honest)
    assert check.status == "PASS", check
    too_good = spec_run({1: 0.010, 32: 0.012}, {1: 0.0015, 32: 0.0100}, 250)
    check = spec_claims.claim_speedup_within_prediction(too_good)
    assert check.status == "FAIL" and "B=1" in check.detail, check


def test_a_tpot_below_its_floor_fails_and_speculation_must_pay_at_batch_one():
    below = spec_run({1: 0.010, 32: 0.012}, {1: 0.0005, 32: 0.0100}, 250)
    check = spec_claims.claim_above_floor(below)
    assert check.status == "FAIL" and "ngram B=1" in check.detail, check
    slower = spec_run({1: 0.010, 32: 0.012}, {1: 0.011, 32: 0.0100}, 250)
    assert spec_claims.claim_pays_at_batch_one(slower).status == "FAIL"
    assert spec_claims.claim_pays_at_batch_one(spec_run({1: 0.01}, {1: 0.005}, 250)).status == (
        "PASS"
    )


def test_the_page_shows_floors_and_predictions_but_no_measured_figure(tmp_path, capsys):
    speculation.main("en", results_dir=tmp_path)
    out = capsys.readouterr().out
    assert out.startswith("No run is recorded yet")
    floors = speculation.default_floors()
    assert f"| 1 | {floors['floor_b1_ms']:.2f} |" in out
    assert floors["speedup_b1_a0.8"] > floors["speedup_b32_a0.8"]  # it pays less as B grows


# ---------------------------------------------------------------- the CUDA graphs lab


class Mode(enum.Enum):  # the shape of vLLM's CompilationMode / CUDAGraphMode
    NONE = 0
    VLLM_COMPILE = 3
    FULL_AND_PIECEWISE = 4


def fake_engine(enforce_eager: bool, seqs: int = 256, tokens: int = 8192):
    sizes = [] if enforce_eager else default_capture_sizes(seqs, tokens)
    compilation = SimpleNamespace(
        mode=Mode.NONE if enforce_eager else Mode.VLLM_COMPILE,
        backend="inductor",
        cudagraph_mode=Mode.NONE if enforce_eager else Mode.FULL_AND_PIECEWISE,
        cudagraph_capture_sizes=sizes,
    )
    scheduler = SimpleNamespace(max_num_seqs=seqs, max_num_batched_tokens=tokens)
    config = SimpleNamespace(compilation_config=compilation, scheduler_config=scheduler)
    return SimpleNamespace(llm_engine=SimpleNamespace(vllm_config=config))


def test_a_gpu_default_engine_must_capture_the_lessons_sizes():
    record = cuda_graphs.compilation_record(fake_engine(False), "default", 80.0)
    assert record["cudagraph_mode"] == "FULL_AND_PIECEWISE"
    assert len(record["capture_sizes"]) == len(graphs.lab_capture_sizes())
    assert graph_claims.compilation_problems(record, "cuda", None) == []
    record["capture_sizes"] = record["capture_sizes"][:-1]
    [problem] = graph_claims.compilation_problems(record, "cuda", None)
    assert "default_capture_sizes(256, 8192)" in problem
    eager = cuda_graphs.compilation_record(fake_engine(True), "eager", 20.0)
    assert graph_claims.compilation_problems(eager, "cuda", None) == []


def test_each_child_compiles_from_empty_caches_in_its_own_folder(tmp_path):
    caches = cuda_graphs.cold_caches(tmp_path)
    assert set(caches) == {"VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"}
    assert all(value.startswith(str(tmp_path)) for value in caches.values())
    opts = SimpleNamespace(cpu_inductor=False)
    assert cuda_graphs.cpu_compile_backend("cuda", opts) is None
    assert cuda_graphs.cpu_compile_backend("cpu", opts) == "eager"


def graphs_run(eager: dict[int, float], default: dict[int, float], start=(30.0, 90.0)) -> dict:
    engines = [
        {"config": "eager", "startup_s": start[0]},
        {"config": "default", "startup_s": start[1]},
    ]
    calls = [
        {"config": c, "phase": "measured", "batch": b, "repeat": 0, "tpot_s": t}
        for c, tpots in (("eager", eager), ("default", default))
        for b, t in tpots.items()
    ]
    parameters = {
        "configs": ["eager", "default"], "batches": sorted(eager), "prompt_tokens": 512,
        "new_tokens": 128,
    }  # fmt: skip
    return RTX_4090_AWQ | {"parameters": parameters, "graph_engines": engines, "graph_calls": calls}


def test_the_graphs_timing_claims_fail_when_the_lesson_would_be_wrong():
    good = graphs_run({1: 0.012, 32: 0.016}, {1: 0.008, 32: 0.014})
    assert [c.status for c in graph_claims.graphs_gpu_claims(good)] == ["PASS"] * 4
    no_gain = graphs_run({1: 0.008, 32: 0.016}, {1: 0.009, 32: 0.014})
    assert graph_claims.claim_graphs_lower_small_batch_tpot(no_gain).status == "FAIL"
    gain_grows = graphs_run({1: 0.012, 32: 0.030}, {1: 0.010, 32: 0.010})
    assert graph_claims.claim_gain_shrinks_with_batch(gain_grows).status == "FAIL"
    below = graphs_run({1: 0.012, 32: 0.016}, {1: 0.001, 32: 0.014})
    assert graph_claims.claim_above_floor(below).status == "FAIL"
    fast_start = graphs_run({1: 0.012, 32: 0.016}, {1: 0.008, 32: 0.014}, start=(30.0, 20.0))
    assert graph_claims.claim_startup_costs_more(fast_start).status == "FAIL"
