"""How long handing one request's KV cache from a prefill GPU to a decode GPU takes, per link.

The prefill GPU writes kappa bytes per prompt token (core.models.kv_bytes_per_token); all of it must
reach the decode GPU before the first decode step. Compared with the prefill floor (core ttft_bound)
and with the stall one prefill adds to a step of running decodes on a shared GPU (core step_bound).
Stdlib + the core only: it also runs in the browser.
"""

from dataclasses import dataclass

from core.gpus import GPU, load_gpu
from core.links import Link, load_links, transfer_seconds
from core.models import ModelSpec, kv_bytes_per_token, load_model
from core.roofline import step_bound, ttft_bound

MODEL, GPU_KEY = "qwen2.5-7b-instruct", "h100_sxm"
PROMPT = 2000  # tokens in the prompt handed over
DECODE_BATCH, DECODE_CONTEXT = 32, 2000  # decodes running on a shared GPU when the prompt arrives


@dataclass(frozen=True)
class Handoff:
    link: Link
    kv_bytes: float  # kappa * P
    transfer_s: float  # lower bound: kv_bytes / link bandwidth
    prefill_s: float  # lower bound: ttft_bound(P)

    @property
    def ratio(self) -> float:
        """Transfer time over prefill time; below 1, a layer-by-layer send can hide it."""
        return self.transfer_s / self.prefill_s


def handoff(gpu: GPU, model: ModelSpec, prompt: int, link: Link) -> Handoff:
    kv = kv_bytes_per_token(model) * prompt
    return Handoff(link, kv, transfer_seconds(link, kv), ttft_bound(gpu, model, prompt).seconds)


def break_even_bandwidth(gpu: GPU, model: ModelSpec, prompt: int) -> float:
    """Link bytes/s at which moving the KV takes as long as computing it (the prefill floor)."""
    return kv_bytes_per_token(model) * prompt / ttft_bound(gpu, model, prompt).seconds


@dataclass(frozen=True)
class Interference:
    decode_step_s: float  # a step of the running decodes alone
    mixed_step_s: float  # the same step with the whole prompt prefilled in it
    stall_s: float  # what every running decode waits extra, once per arriving prompt


def interference(gpu: GPU, model: ModelSpec, prompt: int, batch: int, context: int) -> Interference:
    alone = step_bound(gpu, model, decode_batch=batch, decode_context=context).seconds
    mixed = step_bound(
        gpu, model, prefill_tokens=prompt, decode_batch=batch, decode_context=context
    ).seconds
    return Interference(alone, mixed, mixed - alone)


def main() -> None:
    gpu, model = load_gpu(GPU_KEY), load_model(MODEL)
    kappa = kv_bytes_per_token(model)
    print(f"{model.name} on {gpu.name}, prompt {PROMPT:,} tokens")
    print(f"kappa = {kappa:,.0f} B/token -> KV to move = {kappa * PROMPT / 1e6:,.1f} MB")
    print(f"prefill floor (ttft_bound) = {ttft_bound(gpu, model, PROMPT).seconds * 1e3:.1f} ms\n")
    print(f"{'link':<28} {'GB/s':>7} {'transfer ms':>12} {'/ prefill':>10}")
    for link in load_links().values():
        h = handoff(gpu, model, PROMPT, link)
        ms = h.transfer_s * 1e3
        print(f"{link.name:<28} {link.bandwidth_gbs:>7.1f} {ms:>12.2f} {h.ratio:>10.2f}")
    even = break_even_bandwidth(gpu, model, PROMPT)
    print(f"\nbreak-even link bandwidth: {even / 1e9:.1f} GB/s")
    i = interference(gpu, model, PROMPT, DECODE_BATCH, DECODE_CONTEXT)
    print(
        f"shared GPU, {DECODE_BATCH} decodes at context {DECODE_CONTEXT:,}: step "
        f"{i.decode_step_s * 1e3:.1f} ms alone, {i.mixed_step_s * 1e3:.1f} ms with the prompt "
        f"-> each running decode stalls {i.stall_s * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
