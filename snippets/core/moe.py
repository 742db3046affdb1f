"""Mixture-of-experts decoders: their shape from config.json, total and active parameters, the
bytes a decode step reads as the batch grows, and what expert parallelism moves.

A model file in core/moe_models/<key>.json holds the Hugging Face config.json under "config" and
where it came from. They live apart from core/models/ because core.models.ModelSpec describes a
dense decoder (one MLP of intermediate_size per layer): an MoE config read as dense would count
the wrong MLP. Attention, embedding and KV cache are the dense ones, so an MoESpec carries the
fields core.models.kv_bytes_per_token reads (num_layers, num_kv_heads, head_dim).

Layer layout (Qwen3-MoE, transformers models/qwen3_moe/modeling_qwen3_moe.py and vLLM 0.26.0
model_executor/models/qwen3_moe.py): q/k/v/o projections without bias, an RMSNorm of head_dim on
each query and key head, a router ("gate") of hidden x experts, E experts that are gated MLPs of
moe_intermediate_size, an optional shared expert every token passes through.
"""

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from core.forward import require_count
from core.gpus import GPU
from core.models import kv_bytes_per_token
from core.roofline import Bound, bound

MOE_MODELS_DIR = Path(__file__).resolve().parent / "moe_models"
SIXTEEN_BIT = 2


@dataclass(frozen=True)
class MoESpec:
    key: str
    name: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    tie_word_embeddings: bool
    num_experts: int  # E: routed experts per MoE layer
    experts_per_token: int  # k: the router's top-k
    expert_intermediate_size: int  # f: each routed expert is a gated MLP of this width
    shared_expert_intermediate_size: int = 0  # 0: no shared expert
    dense_intermediate_size: int = 0  # the MLP of a layer without experts
    dense_layers: int = 0  # layers with a dense MLP instead of experts
    qk_norm: bool = True
    source: str = ""
    hf_repo: str | None = None
    model_card: dict | None = field(default=None, hash=False)

    @classmethod
    def from_config(cls, config: dict, key: str = "", **extra) -> "MoESpec":
        layers = config["num_hidden_layers"]
        step = config.get("decoder_sparse_step", 1)
        dense = sum(
            1
            for i in range(layers)
            if i in config.get("mlp_only_layers", []) or (i + 1) % step != 0
        )
        heads = config["num_attention_heads"]
        return cls(
            key=key,
            name=extra.pop("name", key),
            hidden_size=config["hidden_size"],
            num_layers=layers,
            num_heads=heads,
            num_kv_heads=config.get("num_key_value_heads", heads),
            head_dim=config.get("head_dim") or config["hidden_size"] // heads,
            vocab_size=config["vocab_size"],
            tie_word_embeddings=config.get("tie_word_embeddings", False),
            num_experts=config["num_experts"],
            experts_per_token=config["num_experts_per_tok"],
            expert_intermediate_size=config["moe_intermediate_size"],
            shared_expert_intermediate_size=config.get("shared_expert_intermediate_size", 0),
            dense_intermediate_size=config["intermediate_size"] if dense else 0,
            dense_layers=dense,
            qk_norm=config.get("model_type") == "qwen3_moe",
            **extra,
        )

    @property
    def moe_layers(self) -> int:
        return self.num_layers - self.dense_layers


def attention_params_per_layer(m: MoESpec) -> int:
    """q, k, v, o (no bias), the per-head q and k norms, and the layer's two RMSNorms."""
    q, kv, d = m.num_heads * m.head_dim, m.num_kv_heads * m.head_dim, m.hidden_size
    norms = 2 * d + (2 * m.head_dim if m.qk_norm else 0)
    return d * q + 2 * d * kv + q * d + norms


def expert_params(m: MoESpec) -> int:
    """One routed expert: gate, up and down of a gated MLP, 3 * d * f."""
    return 3 * m.hidden_size * m.expert_intermediate_size


def router_params(m: MoESpec) -> int:
    """The router: one score per expert from the hidden vector, d * E."""
    return m.hidden_size * m.num_experts


def _shared_expert_params(m: MoESpec) -> int:
    """A shared expert (a gated MLP every token uses) and its sigmoid gate (d x 1), as vLLM's
    Qwen3MoeSparseMoeBlock builds it when the config names shared_expert_intermediate_size."""
    f = m.shared_expert_intermediate_size
    return 3 * m.hidden_size * f + m.hidden_size if f else 0


def moe_param_breakdown(m: MoESpec) -> dict[str, int]:
    """Exact parameters per component; the lm_head counts 0 when tied to the embedding."""
    d = m.hidden_size
    return {
        "embedding": m.vocab_size * d,
        "attention + norms": m.num_layers * attention_params_per_layer(m) + d,  # + final norm
        "router": m.moe_layers * router_params(m),
        "routed experts": m.moe_layers * m.num_experts * expert_params(m),
        "shared experts": m.moe_layers * _shared_expert_params(m),
        "dense MLPs": m.dense_layers * 3 * d * m.dense_intermediate_size,
        "lm_head": 0 if m.tie_word_embeddings else m.vocab_size * d,
    }


def total_params(m: MoESpec) -> int:
    """Every parameter: what must sit in GPU memory."""
    return sum(moe_param_breakdown(m).values())


def active_params(m: MoESpec) -> int:
    """Parameters one token uses: all but the experts the router did not pick (k of E)."""
    parts = moe_param_breakdown(m)
    unused = m.moe_layers * (m.num_experts - m.experts_per_token) * expert_params(m)
    return sum(parts.values()) - unused


def active_matmul_params(m: MoESpec) -> int:
    """Weights that multiply each decoded token (2 FLOPs each): active minus the embedding
    lookup and the norms."""
    norms = m.num_layers * (2 * m.hidden_size + (2 * m.head_dim if m.qk_norm else 0))
    embedding = m.vocab_size * m.hidden_size
    return active_params(m) - embedding - norms - m.hidden_size


def expected_distinct_experts(num_experts: int, k: int, tokens: int) -> float:
    """Experts a layer reads for `tokens` tokens that each pick k of E uniformly at random:
    each expert is missed by one token with probability 1 - k/E, so E * (1 - (1 - k/E)^B)."""
    require_count("tokens", tokens, 0)
    if not 0 < k <= num_experts:
        raise ValueError(f"need 0 < k <= E, got k={k}, E={num_experts}")
    return num_experts * (1 - (1 - k / num_experts) ** tokens)


def always_read_bytes(m: MoESpec, value_bytes: float = SIXTEEN_BIT) -> float:
    """Weights every decode step reads whatever the batch: attention, norms, routers, shared and
    dense MLPs, the lm_head, and one embedding row (a lookup)."""
    parts = moe_param_breakdown(m)
    fixed = sum(parts.values()) - parts["routed experts"] - parts["embedding"] + m.hidden_size
    if m.tie_word_embeddings:  # the lm_head is the embedding table: read it whole
        fixed += parts["embedding"] - m.hidden_size
    return fixed * value_bytes


def decode_weight_bytes(m: MoESpec, batch: int, value_bytes: float = SIXTEEN_BIT) -> float:
    """Weight bytes of one decode step for `batch` tokens under uniform routing: the fixed part
    plus, in every MoE layer, the experts at least one token picked (expected count)."""
    require_count("batch", batch, 1)
    touched = expected_distinct_experts(m.num_experts, m.experts_per_token, batch)
    return always_read_bytes(m, value_bytes) + (
        m.moe_layers * touched * expert_params(m) * value_bytes
    )


def moe_decode_bound(
    gpu: GPU, m: MoESpec, batch: int, context: int, value_bytes: float = SIXTEEN_BIT
) -> Bound:
    """TPOT floor of an MoE decode step on one GPU: FLOPs of the active weights for each token,
    bytes of the experts touched plus every sequence's KV."""
    require_count("context", context, 0)
    flops = 2 * active_matmul_params(m) * batch
    kv = kv_bytes_per_token(m) * context * batch  # type: ignore[arg-type]  # same fields
    return bound(gpu, flops, decode_weight_bytes(m, batch, value_bytes) + kv)


def dense_twin_bound(
    gpu: GPU, m: MoESpec, batch: int, context: int, value_bytes: float = SIXTEEN_BIT
) -> Bound:
    """The same step for a dense model as large as the MoE's active part, with the same attention
    and KV: every token uses every weight, so the weight bytes do not grow with the batch."""
    require_count("batch", batch, 1)
    require_count("context", context, 0)
    flops = 2 * active_matmul_params(m) * batch
    kv = kv_bytes_per_token(m) * context * batch  # type: ignore[arg-type]
    return bound(gpu, flops, dense_twin_weight_bytes(m, value_bytes) + kv)


def dense_twin_weight_bytes(m: MoESpec, value_bytes: float = SIXTEEN_BIT) -> float:
    """What the dense twin reads per step: its active weights, one embedding row of the table."""
    return (active_params(m) - m.vocab_size * m.hidden_size + m.hidden_size) * value_bytes


def critical_batch_search(step, limit: int = 1 << 16) -> int | None:
    """Smallest batch at which step(batch) is compute-bound, by doubling then bisection; None if
    none up to `limit`."""
    if step(limit).memory_bound:
        return None
    low, high = 1, 1
    while step(high).memory_bound:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if step(mid).memory_bound else (low, mid)
    return high


def allgather_reducescatter_bytes_per_token(
    m: MoESpec, ep: int, value_bytes: float = SIXTEEN_BIT
) -> float:
    """Bytes that cross links per token with vLLM 0.26.0's default all2all_backend
    ("allgather_reducescatter"): in each MoE layer every other rank receives the token's hidden
    vector, and returns a partial result: 2 * (ep - 1) * d * b."""
    require_count("ep", ep, 1)
    return m.moe_layers * 2 * (ep - 1) * m.hidden_size * value_bytes


def remote_ranks_per_token(m: MoESpec, ep: int) -> float:
    """Expected number of OTHER ranks holding at least one of a token's k experts, the E experts
    spread evenly over ep ranks and the k picked uniformly without replacement: each other rank is
    missed with probability C(E - E/ep, k) / C(E, k)."""
    require_count("ep", ep, 1)
    e, k = m.num_experts, m.experts_per_token
    if e % ep:
        raise ValueError(f"{e} experts do not spread evenly over {ep} ranks")
    missed = math.comb(e - e // ep, k) / math.comb(e, k)
    return (ep - 1) * (1 - missed)


def all_to_all_bytes_per_token(m: MoESpec, ep: int, value_bytes: float = SIXTEEN_BIT) -> float:
    """Bytes per token with a true all-to-all (the DeepEP backends): the hidden vector goes once to
    each other rank that holds one of its experts (dispatch) and one combined result comes back
    (combine): 2 * remote ranks * d * b per MoE layer, expected under uniform routing."""
    return m.moe_layers * 2 * remote_ranks_per_token(m, ep) * m.hidden_size * value_bytes


def load_moe_model(key: str) -> MoESpec:
    path = MOE_MODELS_DIR / f"{key}.json"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in MOE_MODELS_DIR.glob("*.json")))
        raise KeyError(f"no MoE model '{key}' in {MOE_MODELS_DIR} (known: {known})")
    data = json.loads(path.read_text(encoding="utf-8"))
    return MoESpec.from_config(
        data["config"],
        key=key,
        name=data["name"],
        source=data["source"],
        hf_repo=data.get("hf_repo"),
        model_card=data.get("model_card"),
    )
