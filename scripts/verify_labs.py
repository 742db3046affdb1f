"""Check the lessons' claims against lab results; run the labs first with --run.

  python scripts/verify_labs.py FILE...          check results files written by the labs
  python scripts/verify_labs.py --run [--lab-args="--dummy"] [--sweep-args="--repeats 5"]
                                     run every lab first (this Python): labs/<slug>/*.py of each
                                     lesson in docs/lessons.yml, in reading order
Write --lab-args=VALUE with "=": a separate value that starts with "-" is taken for an option.

Labs are found by convention (labs/README.md, "Adding a lab"): each lesson of docs/lessons.yml
with a folder labs/<slug>/ holding a claims.py. Its CLAIMS maps the lab names its scripts write
(the results' "lab") to what is checked: on every run the lab's completeness and deterministic
claims, on a GPU run (device.kind "cuda") also its timing claims and, for labs that ask for it,
agreement within --tolerance with a recorded run in labs/results/<gpu>/ of the same lab, GPU,
model, weight format, vLLM version and driver major (TPOT medians, TTFT at long prompts). A CPU
run's timings say nothing about a GPU, so they are skipped and the report says so. Every file
must be valid against the results schema: labs/results/schema.json (the common part) composed
with each lab folder's schema.json.
With --run a failing lab does not stop the others: every results file that exists is checked,
and the summary names the labs that failed. Exit status 1 when any lab or check failed.
"""

import argparse
import copy
import importlib.util
import json
import shlex
import statistics
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from types import ModuleType

import jsonschema

import labkit  # the labs' toolkit (labs/labkit.py, installed editable): no vLLM import at load
from labkit import NOT_THIS_MACHINE, Check, Claims

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs"
RESULTS = LABS / "results"
COMMON_SCHEMA = RESULTS / "schema.json"  # what every lab's results share
MANIFEST = ROOT / "docs" / "lessons.yml"
DEFAULT_TOLERANCE = 0.30  # against a recorded run: each compared median within +-30 %
# TTFT is compared at prompts this long or longer only: below, a few ms of host-CPU work (which
# varies from machine to machine) is a large share of it; phases.py's long prompt is 2000 tokens.
LONG_PROMPT = 2000


# ---------------------------------------------------------------- the labs, by convention


def lesson_slugs(manifest: Path | None = None) -> list[str]:
    """The lessons' slugs in reading order (docs/lessons.yml)."""
    from coursesite.manifest import read_course  # the one reader of the manifest

    return [lesson.slug for lesson in read_course(manifest or MANIFEST).lessons]


# Labs that run without vLLM: PyTorch only, with their own results schema, pre-flight and tests.
# labs/calibration: the reference decode loop and the machine's roofline (tests/
# test_labs_smoke_calibration.py; its schema is labs/calibration/schema.json, read there).
ENGINE_FREE_LABS = ("calibration",)
# their results' lab name -> the schema they are recorded against (a CPU run may be recorded)
ENGINE_FREE_RESULTS = {"reference_loop": LABS / "calibration" / "schema.json"}


def lab_folders(manifest: Path | None = None) -> list[Path]:
    """labs/<slug>/ of every lesson that has a lab (a claims.py there), in reading order."""
    return [LABS / slug for slug in lesson_slugs(manifest) if (LABS / slug / "claims.py").is_file()]


def claims_module(slug: str) -> ModuleType:
    """labs/<slug>/claims.py, loaded by path (its folder name may also be a lesson package)."""
    return _load_claims(LABS / slug / "claims.py")


@cache
def _load_claims(path: Path) -> ModuleType:
    slug = path.parent.name
    spec = importlib.util.spec_from_file_location(f"lab_claims_{slug}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lab_claims() -> dict[str, Claims]:
    """Every lab name any lab folder declares -> its claims."""
    found: dict[str, Claims] = {}
    for folder in lab_folders():
        for lab, claims in claims_module(folder.name).CLAIMS.items():
            if lab in found:
                raise ValueError(f"lab {lab!r} declared twice (again in {folder}/claims.py)")
            found[lab] = claims
    return found


def lab_scripts(manifest: Path | None = None) -> list[str]:
    """Every lab script, as "<slug>/<name>": labs/<slug>/*.py of each lesson, in order."""
    return [
        f"{folder.name}/{script.stem}"
        for folder in lab_folders(manifest)
        for script in sorted(folder.glob("*.py"))
        if script.name != "claims.py"
    ]


# ---------------------------------------------------------------- structure


def results_schema() -> dict:
    """The common schema with every lab folder's schema.json composed in: each lab's name, its
    parameters, its measurement rows and its own top-level sections (forbidden to other labs)."""
    return _compose_schema(tuple(lab_folders()))


@cache
def _compose_schema(folders: tuple[Path, ...]) -> dict:
    schema = json.loads(COMMON_SCHEMA.read_text(encoding="utf-8"))
    names, blocks, series = [], [], []
    for folder in folders:
        fragment = json.loads((folder / "schema.json").read_text(encoding="utf-8"))
        for key, definition in fragment.get("$defs", {}).items():
            if key in schema["$defs"]:
                raise ValueError(f"{folder}/schema.json: $defs/{key} is defined twice")
            schema["$defs"][key] = definition
        for lab, part in fragment["labs"].items():
            names.append(lab)
            own = part.get("sections", {})
            for key, definition in own.items():
                schema["properties"][key] = definition
            then = {
                "required": sorted(own),
                "properties": {
                    "parameters": part["parameters"],
                    "measurements": {"items": part["measurement"]},
                },
            }
            block = {"if": {"properties": {"lab": {"const": lab}}}, "then": then}
            if own:
                block["else"] = {"not": {"anyOf": [{"required": [key]} for key in sorted(own)]}}
            blocks.append(block)
            series += [s for s in part.get("series", []) if s not in series]
    schema["properties"]["lab"] = {"enum": names}
    schema["$defs"]["measurement"]["properties"]["series"] = {"enum": series}
    schema["allOf"] = blocks
    return schema


def schema_errors(doc: object) -> list[str]:
    """'field.path: message' for every violation of the composed results schema."""
    validator = jsonschema.Draft202012Validator(copy.deepcopy(results_schema()))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [f"{_path(e.absolute_path)}: {e.message}" for e in errors]


def _path(parts) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
    return text.lstrip(".") or "(top level)"


def recorded_run_errors(doc: dict, path: Path) -> list[str]:
    """'field: message' for what a file in labs/results/<gpu>/ breaks: the schema, and more."""
    if isinstance(doc, dict) and doc.get("lab") in ENGINE_FREE_RESULTS:
        return engine_free_errors(doc, path)
    errors = schema_errors(doc)
    if errors:
        return errors
    if doc["device"]["kind"] != "cuda":
        errors.append(f"device.kind: {doc['device']['kind']!r}, a recorded run must be a GPU run")
    if path.parent.name != doc["device"]["slug"]:
        errors.append(f"device.slug: {doc['device']['slug']!r}, but the file is in {path.parent}")
    return errors


# ---------------------------------------------------------------- against a recorded run


KEY_FIELDS = ("lab", "GPU", "model", "weight format", "vLLM version", "driver major")
MATCHED_ON = ", ".join(KEY_FIELDS[:-1]) + " and " + KEY_FIELDS[-1]


def run_key(doc: dict) -> tuple:
    """What two runs must share for their timings to be compared (KEY_FIELDS)."""
    model, driver = doc["model"], doc["device"]["driver"] or ""
    return (
        doc["lab"],
        doc["device"]["name"],
        model["id"],
        labkit.weight_format(model["quantization"]) or model["quantization"],
        doc["software"]["vllm"],
        driver.split(".")[0],
    )


def differences(doc: dict, other: dict) -> str:
    """'vLLM version 0.27.0 vs 0.26.0': how another run's key differs from this one's."""
    pairs = zip(KEY_FIELDS, run_key(doc), run_key(other), strict=True)
    return ", ".join(f"{field} {a} vs {b}" for field, a, b in pairs if a != b)


def engine_free_errors(doc: dict, path: Path) -> list[str]:
    """A recorded run of an engine-free lab: its own schema, and filed under its device's slug."""
    schema = json.loads(ENGINE_FREE_RESULTS[doc["lab"]].read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = [f"{_path(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    if not errors and path.parent.name != doc["device"]["slug"]:
        errors.append(f"device.slug: {doc['device']['slug']!r}, but the file is in {path.parent}")
    return errors


def recorded_runs(results_dir: Path) -> list[tuple[Path, dict]]:
    """Valid recorded runs; tests/test_lab_results.py names the invalid ones."""
    runs = []
    for path in sorted(results_dir.glob("*/*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if doc.get("lab") not in ENGINE_FREE_RESULTS and not recorded_run_errors(doc, path):
            runs.append((path, doc))  # the vLLM labs' runs: what a new run is compared with
    return runs


def claimed_medians(doc: dict) -> dict[tuple[str, str, str, int, int], float]:
    """Medians of what the lesson claims, per point: TPOT everywhere, TTFT at long prompts."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for m in doc["measurements"]:
        if m["tpot_s"] is not None:
            key = ("TPOT", m["series"], m["label"], m["prompt_tokens"], m["new_tokens"])
            groups[key].append(m["tpot_s"])
        if m["prompt_tokens"] >= LONG_PROMPT:
            key = ("TTFT", m["series"], m["label"], m["prompt_tokens"], m["new_tokens"])
            groups[key].append(m["ttft_s"])
    return {k: statistics.median(v) for k, v in groups.items()}


def describe_compared(keys: list[tuple[str, str, str, int, int]]) -> str:
    """'TPOT at 4 points (phases 3, ...), TTFT at prompts 2,000': which medians were compared."""
    parts = []
    for quantity in ("TPOT", "TTFT"):
        series = [k[1] for k in keys if k[0] == quantity]
        if quantity == "TTFT" and series:
            prompts = sorted({k[3] for k in keys if k[0] == quantity})
            parts.append(f"TTFT at prompts of {', '.join(f'{p:,}' for p in prompts)} tokens")
        elif series:
            counts = ", ".join(f"{s} {series.count(s)}" for s in dict.fromkeys(series))
            parts.append(f"TPOT at {len(series)} points ({counts})")
    return " and ".join(parts)


def against_recorded(doc: dict, runs: list[tuple[Path, dict]], tolerance: float) -> Check:
    name = f"within {tolerance:.0%} of the recorded run"
    same = [(p, d) for p, d in runs if run_key(d) == run_key(doc) and d is not doc]
    if not same:
        near = [(p, d) for p, d in runs if run_key(d)[:2] == run_key(doc)[:2] and d is not doc]
        shown = "; ".join(f"{p.name}: {differences(doc, d)}" for p, d in near[-3:])
        return Check(
            "SKIP",
            name,
            f"no recorded run with the same {MATCHED_ON}" + (f" ({shown})" if shown else ""),
        )
    path, recorded = max(same, key=lambda r: r[1]["date"])
    new, old = claimed_medians(doc), claimed_medians(recorded)
    keys = sorted(set(new) & set(old))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not keys:
        return Check("SKIP", name, f"no TPOT or long-prompt TTFT point in common with {where}")
    off = []
    # the label (e.g. "batch 4") names a point only where lengths alone do not tell points apart
    ambiguous = {k for k in keys if sum(k[:2] + k[3:] == j[:2] + j[3:] for j in keys) > 1}
    for key in keys:
        ratio = new[key] / old[key]
        if abs(ratio - 1) > tolerance:
            quantity, series, label, prompt, new_tokens = key
            point = f"{quantity} {series}" + (f" {label}" if key in ambiguous else "")
            off.append(f"{point} prompt {prompt} new {new_tokens}: x{ratio:.2f}")
    compared = f"compared {describe_compared(keys)} vs {where} (same {MATCHED_ON})"
    if off:
        return Check("FAIL", name, f"{compared}; off: " + "; ".join(off))
    return Check("PASS", name, compared)


# ---------------------------------------------------------------- report


def checks_for(doc: object, runs: list[tuple[Path, dict]], tolerance: float) -> list[Check]:
    errors = schema_errors(doc)
    if errors:
        return [Check("FAIL", "structure", "; ".join(errors[:5]))]
    checks = [Check("PASS", "structure", "valid against the results schema (labs/*/schema.json)")]
    claims = lab_claims()[doc["lab"]]
    checks += claims.any_device(doc)
    if claims.gpu is None:
        return checks
    if doc["device"]["kind"] != "cuda":
        return [*checks, Check("SKIP", "timing claims", claims.cpu_reason)]
    checks += claims.gpu(doc)
    if claims.against_recorded:
        checks.append(against_recorded(doc, runs, tolerance))
    return checks


def check_file(path: Path, runs: list[tuple[Path, dict]], tolerance: float) -> list[Check]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        return [Check("FAIL", "structure", f"cannot read: {error}")]
    return checks_for(doc, runs, tolerance)


def describe(path: Path) -> str:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return (
            f"{d['lab']} · {d['device']['kind']} {d['device']['name']} · vLLM "
            f"{d['software']['vllm']} · {d['model']['id']} ({d['model']['load_format']})"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "unreadable"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="results JSON files to check")
    parser.add_argument("--run", action="store_true", help="run every lab first")
    parser.add_argument(
        "--lab-args", default="", help='extra arguments for every lab (--run): --lab-args="--dummy"'
    )
    parser.add_argument(
        "--sweep-args", default="", help='extra arguments for sweep.py: --sweep-args="--repeats 5"'
    )
    parser.add_argument("--out-dir", type=Path, default=None, help="where --run writes results")
    parser.add_argument("--results-dir", type=Path, default=RESULTS, help="recorded runs")
    parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE)
    opts = parser.parse_args(argv)
    if not opts.files and not opts.run:
        parser.error("give results files, or --run")
    return opts


def lab_arguments(opts: argparse.Namespace) -> dict[str, list[str]]:
    """Each lab's extra command-line arguments under --run ("<slug>/<name>" -> arguments)."""
    common = shlex.split(opts.lab_args)
    sweep = shlex.split(opts.sweep_args)
    return {lab: common + (sweep if lab == "prefill_decode/sweep" else []) for lab in lab_scripts()}


def run_labs(
    python: str, lab_args: dict[str, list[str]], out_dir: Path
) -> tuple[list[Path], list[str], list[str]]:
    """Runs every lab, each after the last whatever its exit status: (results files that were
    written, labs that failed, labs whose pre-flight found this machine lacks what they need)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outs, failed, skipped = [], [], []
    for lab, args in lab_args.items():
        out = out_dir / f"{lab.replace('/', '-')}.json"
        cmd = [python, str(LABS / f"{lab}.py"), *args, "--out", str(out)]
        print("$", shlex.join(cmd), flush=True)
        status = subprocess.run(cmd, cwd=ROOT).returncode
        if status == NOT_THIS_MACHINE:  # e.g. 4 GPUs or an 80 GB card on a one-GPU runner
            print(f"verify_labs: labs/{lab}.py needs hardware this machine lacks; skipped")
            skipped.append(lab)
        elif status != 0:
            print(f"verify_labs: labs/{lab}.py failed (see its output above); going on", flush=True)
            failed.append(lab)
        if out.is_file():
            outs.append(out)
    return outs, failed, skipped


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    files, failed_labs, skipped_labs = list(opts.files), [], []
    if opts.run:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        out_dir = opts.out_dir or ROOT / ".cache" / "lab-results" / f"verify-{stamp}"
        written, failed_labs, skipped_labs = run_labs(sys.executable, lab_arguments(opts), out_dir)
        files += written

    runs = recorded_runs(opts.results_dir)
    print(
        f"verify_labs: {len(files)} results file(s), {len(runs)} recorded run(s) in "
        f"{opts.results_dir}; timing claims are checked on GPU runs only"
    )
    failed = 0
    for path in files:
        print(f"\n== {path}\n   {describe(path)}")
        for check in check_file(path, runs, opts.tolerance):
            failed += check.status == "FAIL"
            print(f"   {check.status:<4}  {check.name}: {check.detail}")
    bad = failed or failed_labs
    summary = f"{failed} failed check(s)"
    if opts.run:
        ran = len(lab_arguments(opts))
        summary += f"; {ran - len(failed_labs) - len(skipped_labs)} of {ran} labs ran"
        summary += f", failed: {', '.join(failed_labs)}" if failed_labs else ""
        summary += f", skipped (hardware): {', '.join(skipped_labs)}" if skipped_labs else ""
    print(f"\nresult: {'FAIL' if bad else 'PASS'} ({summary})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
