"""Reading the course's recorded lab runs: labs/results/<gpu>/*.json, and what each names.

Every lesson with a lab tables its own runs; this module only finds them and resolves the GPU and
the model (with the weight format the run loaded) to the core's records. Files are written by the
labs on a GPU and checked by scripts/verify_labs.py; reading them needs no GPU.
"""

import json
from pathlib import Path

import core
from core.formats import BF16, WeightFormat, checkpoint_format
from core.gpus import GPU, load_gpus
from core.models import ModelSpec, load_models, model_for_repo

# snippets/core/ -> the repository root (markdown-exec runs the lessons without __file__)
RESULTS = Path(core.__file__).resolve().parents[2] / "labs" / "results"
# labs/results/<folder> -> core/gpus.toml key, where the two names differ
# (folders are the driver's device name, e.g. "NVIDIA A100-SXM4-80GB" -> a100_sxm4_80gb).
GPU_KEYS = {"a100_sxm4_80gb": "a100_80gb_sxm", "h100_80gb_hbm3": "h100_sxm", "h200": "h200_sxm"}


def recorded_runs(
    results_dir: Path = RESULTS, labs: set[str] | None = None
) -> list[tuple[Path, dict]]:
    """(file, run) for every recorded run of `labs` (every lab if None), by GPU, lab and date."""
    runs = [(p, json.loads(p.read_text(encoding="utf-8"))) for p in results_dir.glob("*/*.json")]
    runs = [(p, run) for p, run in runs if labs is None or run["lab"] in labs]
    return sorted(runs, key=lambda r: (r[0].parent.name, r[1]["lab"], r[1]["date"]))


def gpu_for(run: dict, gpus: dict[str, GPU]) -> GPU | None:
    slug = run["device"]["slug"]
    return gpus.get(GPU_KEYS.get(slug, slug))


def runs_with_gpus(
    results_dir: Path = RESULTS, labs: set[str] | None = None
) -> list[tuple[Path, dict, GPU | None]]:
    """(file, run, the core's GPU or None when the course has no specs for it) per recorded run."""
    gpus = load_gpus()
    return [(path, run, gpu_for(run, gpus)) for path, run in recorded_runs(results_dir, labs)]


def model_for(run: dict) -> tuple[ModelSpec, WeightFormat] | None:
    """The course's model file for the run and the weight format the run loaded, if known.

    A real run names its Hugging Face repo; a dummy run names its config folder, which has the
    same name as the course's model file. AWQ runs get the checkpoint's own AWQ layout.
    """
    model = run["model"]
    spec = model_for_repo(model["id"]) or load_models().get(model["id"])
    if spec is None:
        return None
    quantized = "awq" in (model["quantization"] or "")
    if quantized and spec.quantization is None:
        return None  # an AWQ run of a model the course only has in BF16
    return spec, checkpoint_format(spec) if quantized else BF16


def gpu_and_model(run: dict) -> tuple[GPU, tuple[ModelSpec, WeightFormat]] | None:
    """A run's GPU and its model with the weight format it loaded, both from the course's core;
    None when either is not there (a lab's floor claims are then skipped)."""
    gpu = gpu_for(run, load_gpus())
    resolved = model_for(run) if gpu else None
    return (gpu, resolved) if resolved else None


def results_file(path: Path, results_dir: Path = RESULTS) -> str:
    """Where a run's file sits, as a reader of the repository finds it (labs/results/...)."""
    root = results_dir.parents[1]
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name


def provenance(
    template: str, path: Path, run: dict, gpu: GPU | None, results_dir: Path = RESULTS
) -> str:
    """A recorded run's label, from a page's `template` with the fields gpu, device, vllm, model,
    quant, date and file: where and with what the run was made, and the file that holds it."""
    return template.format(
        gpu=gpu.name if gpu else run["device"]["name"],
        device=run["device"]["name"],
        vllm=run["software"]["vllm"],
        model=run["model"]["id"],
        quant=run["model"]["quantization"] or "—",
        date=run["date"][:10],
        file=results_file(path, results_dir),
    )


def markdown_row(cells: list[str]) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(cells) + " |"


def markdown_head(header: list[str], label_column: bool = True) -> list[str]:
    """A Markdown table's header and rule: numbers right-aligned, the first column left-aligned
    when it holds labels (`label_column`), else right-aligned too."""
    first = "|---|" if label_column else "|---:|"
    return [markdown_row(header), first + "---:|" * (len(header) - 1)]


def print_recorded_runs(text: dict, runs: list, table, results_dir: Path = RESULTS) -> None:
    """Each recorded run under its label (text["run"], see provenance), then its table
    (`table(run, gpu, text["header"])`, lines of Markdown); then the page's text["notes"]."""
    for path, run, gpu in runs:
        print(f"{provenance(text['run'], path, run, gpu, results_dir)}\n")
        print("\n".join(table(run, gpu, text["header"])))
        print()
    print(text["notes"])
