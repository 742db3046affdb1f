"""What prefix caching reuses for one request, and the prefill work that saves (stdlib + core).

vLLM 0.26.0 hashes full blocks only (v1/core/kv_cache_utils.py, get_request_block_hasher), each
hash chained to the previous block's, and caps a hit at prompt_len - 1 tokens so the last prompt
token is always computed (v1/core/kv_cache_manager.py, get_computed_blocks): its logits give the
first output token. Run it: python snippets/prefix_caching/reuse.py
"""

from dataclasses import dataclass

from core.forward import prefill_attention_flops, prefill_flops
from core.gpus import load_gpu
from core.models import ModelSpec, load_model
from core.roofline import ttft_bound

SYSTEM_PROMPT, QUESTION, BLOCK_SIZE = 1500, 100, 16


def cached_tokens(shared: int, prompt_len: int, block_size: int) -> int:
    """Tokens reused when the first `shared` tokens are cached: whole blocks, < prompt_len."""
    if not 0 <= shared <= prompt_len or prompt_len < 1 or block_size < 1:
        raise ValueError(
            f"need 0 <= shared ({shared}) <= prompt_len ({prompt_len}), prompt_len and "
            f"block_size ({block_size}) >= 1"
        )
    return min(shared, prompt_len - 1) // block_size * block_size


@dataclass(frozen=True)
class Saving:
    prompt_len: int
    cached: int
    weight_flops_saved: int  # 2 x matmul weights x cached tokens (the lm_head runs either way)
    attention_flops_saved: int  # the cached tokens' causal attention among themselves
    weight_flops_full: int
    attention_flops_full: int

    @property
    def computed(self) -> int:
        return self.prompt_len - self.cached


def saving(model: ModelSpec, prompt_len: int, cached: int) -> Saving:
    """Prefill FLOPs with and without `cached` tokens reused (core.forward's conventions).

    The uncached tokens still attend to the cached ones, so only the cached tokens' attention
    among themselves, prefill_attention_flops(cached), is saved.
    """
    if not 0 <= cached < prompt_len:
        raise ValueError(f"cached tokens must be in 0..prompt_len-1, got {cached} of {prompt_len}")
    full = prefill_flops(model, prompt_len)
    rest = prefill_flops(model, prompt_len - cached)
    attention = prefill_attention_flops(model, cached) if cached else 0
    return Saving(
        prompt_len=prompt_len,
        cached=cached,
        weight_flops_saved=full - rest,
        attention_flops_saved=attention,
        weight_flops_full=full,
        attention_flops_full=prefill_attention_flops(model, prompt_len),
    )


def main() -> None:
    model = load_model("qwen2.5-7b-instruct")
    gpu = load_gpu("rtx_4090")
    prompt = SYSTEM_PROMPT + QUESTION
    hit = cached_tokens(SYSTEM_PROMPT, prompt, BLOCK_SIZE)
    s = saving(model, prompt, hit)
    print(
        f"{model.name}: system prompt {SYSTEM_PROMPT:,} + question {QUESTION} tokens, blocks of "
        f"{BLOCK_SIZE}"
    )
    print(f"  cached: {hit:,} tokens ({hit // BLOCK_SIZE} full blocks); computed: {s.computed:,}")
    print(
        f"  same prompt again: {cached_tokens(prompt, prompt, BLOCK_SIZE):,} cached "
        f"(never the last token)"
    )
    print(f"{'':<24} {'no cache':>12} {'cache hit':>12} {'saved':>8}")
    weights_left = s.weight_flops_full - s.weight_flops_saved
    attention_left = s.attention_flops_full - s.attention_flops_saved
    rows = [
        ("weight GFLOPs", s.weight_flops_full, weights_left),
        ("attention GFLOPs", s.attention_flops_full, attention_left),
    ]
    for label, full, left in rows:
        print(f"{label:<24} {full / 1e9:>12,.0f} {left / 1e9:>12,.0f} {1 - left / full:>8.1%}")
    no_cache = ttft_bound(gpu, model, prompt).seconds
    with_cache = ttft_bound(gpu, model, s.computed).seconds
    print(
        f"{'TTFT lower bound, ms':<24} {no_cache * 1e3:>12.1f} {with_cache * 1e3:>12.1f}   "
        f"({gpu.name}, BF16)"
    )


if __name__ == "__main__":
    main()
