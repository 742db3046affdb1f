"""Structured outputs and two LoRA adapters in one batch, timed against the plain run: one engine.

One engine (enable_lora=True, max_loras=2, max_lora_rank=8) serves four scenes, each one
llm.generate() call of --requests requests on the same token-ID prompts:

  plain       no constraint, no adapter: the reference (exactly --new-tokens tokens each)
  json        StructuredOutputsParams(json=SCHEMA), no free whitespace (the engine's
              StructuredOutputsConfig), up to --structured-max-tokens tokens, stopping when the
              grammar is complete
  regex       StructuredOutputsParams(regex=REGEX), the same
  lora_mixed  the plain requests, alternating two random rank-8 q/v adapters (LoRARequest 1 and
              2) in the same batch (exactly --new-tokens tokens each)

Structured outputs need a tokenizer. With --dummy (random weights, no download) the lab builds a
small byte-level BPE tokenizer offline (the `tokenizers` library), saves it beside a copy of the
config in a temporary folder, and the engine loads it from there; its vocabulary fits the
config's vocab_size. The adapters are written by the lab too (safetensors + adapter_config.json,
random A and B for q_proj and v_proj of every layer) into a temporary folder. The lab prints each
constrained output, whether it parses and matches, the backend vLLM recorded on each constraint
(xgrammar, named: `auto` would try it first, but the engine accepts disable_any_whitespace only
with a named backend), and every scene's wall time and time per output token.

  python labs/structured_outputs_lora/structured_lora.py                  # Qwen2.5-7B-Instruct-AWQ
  .venv-labs/bin/python labs/structured_outputs_lora/structured_lora.py --config tiny   # CPU smoke
"""

import argparse
import importlib.util
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import labkit as lab

# A schema whose every field is finite (an enum, a boolean, a bounded pattern), so that even
# random weights finish the object well inside --structured-max-tokens.
SCHEMA = {
    "type": "object",
    "properties": {
        "color": {"type": "string", "enum": ["red", "green", "blue"]},
        "ok": {"type": "boolean"},
        "code": {"type": "string", "pattern": "^[a-z]{3}$"},
    },
    "required": ["color", "ok", "code"],
    "additionalProperties": False,
}
REGEX = r"[0-9]{3}-[a-z]{2}"
BACKEND = "xgrammar"  # what `auto` tries first; named, so that whitespace can be turned off
LORA_RANK, LORA_ALPHA = 8, 16
LORA_MODULES = ("q_proj", "v_proj")
ADAPTERS = ("adapter_a", "adapter_b")  # LoRARequest ids 1 and 2, alternating in one batch
TOKENIZER_VOCAB = 400  # the byte-level tokenizer's size for --dummy: 256 bytes, merges, specials
SPECIAL_TOKENS = ("<|pad|>", "<|bos|>", "<|endoftext|>")  # ids 0, 1, 2: the tiny config's bos/eos
CORPUS = (  # what the tokenizer's merges learn from: JSON and digits, as the constraints emit
    '{"color":"red","ok":true,"code":"abc"} {"color":"green","ok":false,"code":"xyz"} '
    '{"color":"blue","ok":true,"code":"qrs"} 123-ab 456-cd 789-ef 000-zz the quick brown fox '
)


def needed_modules(dummy: bool) -> list[str]:
    """Libraries the lab uses besides vLLM: safetensors for the adapters, tokenizers to build
    the tokenizer in dummy mode (vLLM's own requirements pull in both)."""
    return ["safetensors", "torch"] + (["tokenizers"] if dummy else [])


def check_modules(dummy: bool) -> None:
    missing = [m for m in needed_modules(dummy) if importlib.util.find_spec(m) is None]
    if missing:
        raise lab.PreflightError(
            f"{', '.join(missing)} not importable",
            "install the labs' environment (make labs-env, or labs/requirements-*.txt)",
        )


def model_folder_with_tokenizer(config_folder: Path, vocab_size: int, out: Path) -> Path:
    """A copy of config.json and a byte-level BPE tokenizer trained offline on CORPUS."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    size = min(TOKENIZER_VOCAB, vocab_size)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([CORPUS] * 4, trainer)
    if tokenizer.get_vocab_size() > vocab_size:
        raise RuntimeError(f"tokenizer of {tokenizer.get_vocab_size()} > vocab {vocab_size}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(config_folder / "config.json", out / "config.json")
    tokenizer.save(str(out / "tokenizer.json"))
    pad, bos, eos = SPECIAL_TOKENS
    settings = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": bos,
                "eos_token": eos, "pad_token": pad, "model_max_length": 1 << 20}  # fmt: skip
    (out / "tokenizer_config.json").write_text(json.dumps(settings), encoding="utf-8")
    return out


def write_adapter(folder: Path, shape, seed: int, base_model: str) -> Path:
    """A random rank-8 LoRA adapter for q_proj and v_proj of every layer, as PEFT saves one."""
    import torch
    from safetensors.torch import save_file

    gen = torch.Generator().manual_seed(seed)
    outputs = {"q_proj": shape.q_dim, "v_proj": shape.kv_dim}
    tensors = {}
    for layer in range(shape.num_layers):
        for module in LORA_MODULES:
            key = f"base_model.model.model.layers.{layer}.self_attn.{module}"
            a = torch.randn(LORA_RANK, shape.hidden_size, generator=gen) / shape.hidden_size**0.5
            b = torch.randn(outputs[module], LORA_RANK, generator=gen) / LORA_RANK**0.5
            tensors[f"{key}.lora_A.weight"] = a.to(torch.bfloat16).contiguous()
            tensors[f"{key}.lora_B.weight"] = b.to(torch.bfloat16).contiguous()
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / "adapter_model.safetensors"))
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "r": LORA_RANK,
        "lora_alpha": LORA_ALPHA,
        "lora_dropout": 0.0,
        "bias": "none",
        "target_modules": list(LORA_MODULES),
        "base_model_name_or_path": base_model,
    }
    (folder / "adapter_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument("--requests", type=int, default=8, help="requests per scene (one batch)")
    parser.add_argument("--prompt", type=int, default=64, help="prompt tokens per request")
    parser.add_argument("--new-tokens", type=int, default=64, help="tokens per plain/LoRA request")
    parser.add_argument(
        "--structured-max-tokens", type=int, default=64, help="max_tokens of a constrained request"
    )
    opts = parser.parse_args()
    for name in ("requests", "prompt", "new_tokens", "structured_max_tokens"):
        if getattr(opts, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if opts.requests < len(ADAPTERS):
        parser.error(f"--requests must be at least {len(ADAPTERS)}: one per adapter")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    longest = opts.prompt + max(opts.new_tokens, opts.structured_max_tokens)
    max_model_len = opts.max_model_len or longest
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    check_modules(spec.dummy)
    if spec.spec is None:
        raise lab.PreflightError(
            f"the lab writes adapters for a known shape, and {spec.model} is not one",
            "use the default model, --dummy, or --config tiny",
        )
    lab.setup_environment(spec.dummy)

    from claims import valid_output  # the same check verify_labs makes (this folder)
    from vllm import SamplingParams
    from vllm.lora.request import LoRARequest
    from vllm.sampling_params import StructuredOutputsParams

    with tempfile.TemporaryDirectory(prefix="structured-lora-") as tmp:
        model = spec
        if spec.dummy:  # random weights come with no tokenizer: build one beside the config
            folder = model_folder_with_tokenizer(
                Path(spec.model), spec.spec.vocab_size, Path(tmp) / "model"
            )
            model = lab.LabModel(str(folder), spec.load_format, spec.spec, spec.fmt)
        adapters = [
            LoRARequest(
                lora_name=name,
                lora_int_id=i + 1,
                lora_path=str(
                    write_adapter(Path(tmp) / name, spec.spec, opts.seed + i, spec.model)
                ),
            )
            for i, name in enumerate(ADAPTERS)
        ]
        t_start = time.perf_counter()
        llm = lab.start_engine(
            model,
            backend,
            max_model_len,
            opts,
            kv_tokens=opts.requests * longest,
            skip_tokenizer_init=False,  # structured outputs need the tokenizer
            enable_lora=True,
            max_loras=len(ADAPTERS),
            max_lora_rank=LORA_RANK,
            max_num_seqs=max(opts.requests, 8),
            # xgrammar reads disable_any_whitespace from the engine's config (the request's own
            # field is not consulted), and the config accepts it only with a named backend
            structured_outputs_config={"backend": BACKEND, "disable_any_whitespace": True},
        )
        start_s = time.perf_counter() - t_start
        tokens = llm.get_tokenizer()
        vocab = min(llm.model_config.get_vocab_size(), len(tokens))
        prompts = [
            {"prompt_token_ids": lab.prompt_ids(opts.prompt, vocab, opts.seed + 100 + r)}
            for r in range(opts.requests)
        ]
        for p in prompts:
            lab.validate_token_ids(p["prompt_token_ids"], vocab)

        def plain() -> SamplingParams:
            return SamplingParams(
                max_tokens=opts.new_tokens, temperature=0, ignore_eos=True, detokenize=False
            )

        def constrained(kind: str) -> SamplingParams:
            so = (
                StructuredOutputsParams(json=SCHEMA)
                if kind == "json"
                else StructuredOutputsParams(regex=REGEX)
            )
            return SamplingParams(
                max_tokens=opts.structured_max_tokens, temperature=0, structured_outputs=so
            )

        def scene(series: str, params: list, lora=None) -> tuple[list, float]:
            t0 = time.perf_counter()
            outs = llm.generate(prompts, params, use_tqdm=False, lora_request=lora)
            wall = time.perf_counter() - t0
            return [
                lab.measurement(series, f"request {i}", 0, o, wall) for i, o in enumerate(outs)
            ], outs

        scene("warm-up", [plain()] * opts.requests)  # not recorded
        rows, outputs, backends = [], {}, {}
        plan = [
            ("plain", [plain() for _ in prompts], None),
            ("json", [constrained("json") for _ in prompts], None),
            ("regex", [constrained("regex") for _ in prompts], None),
            ("lora_mixed", [plain() for _ in prompts],
             [adapters[i % len(adapters)] for i in range(opts.requests)]),
        ]  # fmt: skip
        for series, params, lora in plan:
            measured, outs = scene(series, params, lora)
            rows += measured
            outputs[series] = outs
            if series in ("json", "regex"):
                # set by SamplingParams._validate_structured_outputs as the request was added
                backends[series] = sorted({str(p.structured_outputs._backend) for p in params})

        print(f"\nengine start {start_s:.1f} s; backends chosen: {backends}")
        structured = []
        for kind in ("json", "regex"):
            for i, out in enumerate(outputs[kind]):
                # the generated ids alone: the engine's incremental text may begin with bytes of
                # the prompt's last token when random prompt ids end inside a UTF-8 character
                text = tokens.decode(out.outputs[0].token_ids, skip_special_tokens=True)
                ok = valid_output(kind, text, SCHEMA, REGEX)
                structured.append({"series": kind, "label": f"request {i}", "text": text,
                                   "finish_reason": out.outputs[0].finish_reason,
                                   "valid": ok})  # fmt: skip
                if i < 2:
                    print(f"{kind:<6} request {i}: {text!r} -> {'valid' if ok else 'INVALID'}")
        lora_rows = []
        for i, out in enumerate(outputs["lora_mixed"]):
            base = outputs["plain"][i].outputs[0].token_ids
            got = out.outputs[0].token_ids
            lora_rows.append({"label": f"request {i}", "adapter": out.lora_request.lora_name,
                              "new_tokens": len(got),
                              "differs_from_plain": list(got) != list(base)})  # fmt: skip
        print(
            "lora_mixed: "
            + ", ".join(f"{r['adapter']} {r['new_tokens']} tokens" for r in lora_rows[:4])
        )
        print(
            f"\n{'scene':<11} {'requests':>8} {'tokens':>7} {'wall s':>8} {'median ms/token':>16}"
        )
        for series, *_ in plan:
            ms = [m for m in rows if m.series == series]
            tpot = [m.tpot_s for m in ms if m.tpot_s is not None]
            median = f"{statistics.median(tpot) * 1e3:16.2f}" if tpot else f"{'-':>16}"
            print(
                f"{series:<11} {len(ms):>8} {sum(m.new_tokens for m in ms):>7} "
                f"{ms[0].wall_s:8.3f} {median}"
            )

        parameters = lab.common_parameters(
            llm,
            opts,
            warmup=1,
            requests=opts.requests,
            prompt_tokens=opts.prompt,
            new_tokens=opts.new_tokens,
            structured_max_tokens=opts.structured_max_tokens,
            json_schema=SCHEMA,
            regex=REGEX,
            structured_outputs_backend=BACKEND,
            disable_any_whitespace=True,
            lora_rank=LORA_RANK,
            lora_modules=list(LORA_MODULES),
            max_loras=len(ADAPTERS),
            adapters=list(ADAPTERS),
            engine_start_s=start_s,
        )
        doc = lab.results_document("structured_lora", backend, spec, llm, parameters, rows)
        doc["structured_outputs"] = {"backends": backends, "outputs": structured}
        doc["lora"] = lora_rows
        print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
