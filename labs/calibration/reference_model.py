"""A Qwen2-architecture decoder in plain PyTorch, built from the core's shapes, with random weights.

Small on purpose (read it top to bottom): RMSNorm, rotary positions, grouped-query attention with
q/k/v biases, a SwiGLU MLP, and a static KV cache allocated once for the longest context. No vLLM,
no tokenizer, no checkpoint: the weights are random, which changes nothing about the time a step
takes (the same bytes are read and the same FLOPs done) and everything about the text it would
write, which the reference loop never looks at.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from core.models import ModelSpec

ROPE_THETA = 1_000_000.0  # Qwen2.5's rope_theta (config.json); sets only which angles are used
RMS_EPS = 1e-6


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # computed in float32 as transformers' Qwen2RMSNorm does, then back to the model's dtype
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + RMS_EPS)
        return self.weight * x32.to(x.dtype)


def rotary_tables(head_dim: int, max_len: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """cos and sin for every position up to max_len, shape [max_len, head_dim]."""
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, head_dim, 2, device=device) / head_dim))
    angles = torch.outer(torch.arange(max_len, device=device, dtype=torch.float32), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x: [batch, heads, tokens, head_dim]; cos/sin: [tokens, head_dim] for those tokens."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return (x * cos + rotated * sin).to(x.dtype)


@dataclass
class KVCache:
    """K and V for every layer, allocated once: [layers, batch, kv_heads, max_len, head_dim]."""

    k: torch.Tensor
    v: torch.Tensor

    @classmethod
    def allocate(
        cls, model: ModelSpec, batch: int, max_len: int, dtype: torch.dtype, device: torch.device
    ) -> KVCache:
        shape = (model.num_layers, batch, model.num_kv_heads, max_len, model.head_dim)
        return cls(
            torch.zeros(shape, dtype=dtype, device=device),
            torch.zeros(shape, dtype=dtype, device=device),
        )


class Attention(nn.Module):
    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.spec = spec
        d = spec.hidden_size
        self.q_proj = nn.Linear(d, spec.q_dim, bias=spec.attention_qkv_bias)
        self.k_proj = nn.Linear(d, spec.kv_dim, bias=spec.attention_qkv_bias)
        self.v_proj = nn.Linear(d, spec.kv_dim, bias=spec.attention_qkv_bias)
        self.o_proj = nn.Linear(spec.q_dim, d, bias=False)

    def forward(
        self,
        x: torch.Tensor,
        layer: int,
        cache: KVCache,
        start: int,
        cos: torch.Tensor,
        sin: torch.Tensor,
    ) -> torch.Tensor:
        s = self.spec
        batch, tokens, _ = x.shape
        q = self.q_proj(x).view(batch, tokens, s.num_heads, s.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, tokens, s.num_kv_heads, s.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, tokens, s.num_kv_heads, s.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        end = start + tokens
        cache.k[layer, :, :, start:end] = k
        cache.v[layer, :, :, start:end] = v
        # attend to every cached position so far: the whole context is read once per step
        keys, values = cache.k[layer, :, :, :end], cache.v[layer, :, :, :end]
        out = F.scaled_dot_product_attention(
            q, keys, values, is_causal=tokens > 1, enable_gqa=s.num_kv_heads != s.num_heads
        )
        return self.o_proj(out.transpose(1, 2).reshape(batch, tokens, s.q_dim))


class MLP(nn.Module):
    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        d, i = spec.hidden_size, spec.intermediate_size
        self.gate_proj = nn.Linear(d, i, bias=False)
        self.up_proj = nn.Linear(d, i, bias=False)
        self.down_proj = nn.Linear(i, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(spec.hidden_size)
        self.self_attn = Attention(spec)
        self.post_attention_layernorm = RMSNorm(spec.hidden_size)
        self.mlp = MLP(spec)

    def forward(self, x, layer, cache, start, cos, sin) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), layer, cache, start, cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class ReferenceModel(nn.Module):
    """Qwen2ForCausalLM's layout: embed -> layers -> norm -> lm_head (tied to the embedding if the
    config says so). forward() returns the logits of the last position only, as an engine does in
    prefill and decode."""

    def __init__(self, spec: ModelSpec, max_len: int) -> None:
        super().__init__()
        self.spec = spec
        self.embed_tokens = nn.Embedding(spec.vocab_size, spec.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(spec) for _ in range(spec.num_layers))
        self.norm = RMSNorm(spec.hidden_size)
        self.lm_head = nn.Linear(spec.hidden_size, spec.vocab_size, bias=False)
        if spec.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        cos, sin = rotary_tables(spec.head_dim, max_len, torch.device("cpu"))
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    @torch.inference_mode()
    def forward(self, tokens: torch.Tensor, cache: KVCache, start: int) -> torch.Tensor:
        """tokens: [batch, n] at positions start .. start + n - 1 of every sequence."""
        n = tokens.shape[1]
        cos = self.cos[start : start + n].to(self.embed_tokens.weight.dtype)
        sin = self.sin[start : start + n].to(self.embed_tokens.weight.dtype)
        x = self.embed_tokens(tokens)
        for i, layer in enumerate(self.layers):
            x = layer(x, i, cache, start, cos, sin)
        return self.lm_head(self.norm(x[:, -1:, :]))


def parameter_count(model: nn.Module) -> int:
    """Distinct parameters (a tied lm_head is the embedding, counted once)."""
    return sum(p.numel() for p in model.parameters())


def build(
    spec: ModelSpec, max_len: int, dtype: torch.dtype, device: torch.device, seed: int = 0
) -> ReferenceModel:
    """Random weights (N(0, 0.02), as Qwen2's initializer_range), made directly on the device."""
    torch.manual_seed(seed)
    with torch.device(device):
        model = ReferenceModel(spec, max_len)
    if device.type != "meta":
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith("bias") or "norm" in name:
                    continue
                p.normal_(0.0, 0.02)
    return model.to(dtype).eval()
