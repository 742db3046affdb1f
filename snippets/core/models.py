"""A decoder-only model's shape, read from its config.json, and what follows from it exactly.

Every parameter count in the course comes from here, matrix by matrix, never from a model card.
Model files live in core/models/<key>.json: the Hugging Face config.json under "config", plus
where it came from and, for a quantized checkpoint, its quantization config.
"""

import json
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent / "models"


@dataclass(frozen=True)
class ModelSpec:
    key: str
    name: str
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    attention_qkv_bias: bool  # Qwen2: q, k and v carry a bias vector, o does not
    source: str = ""
    hf_repo: str | None = None
    # dicts cannot be hashed: left out of the hash (not of ==), so a ModelSpec can key a cache
    quantization: dict | None = field(default=None, hash=False)  # None for a 16-bit checkpoint
    model_card: dict | None = field(default=None, hash=False)  # as the card prints it: "7.61B"

    @classmethod
    def from_config(cls, config: dict, key: str = "", **extra) -> "ModelSpec":
        """From a Hugging Face config.json (a missing head_dim is hidden / heads, as in Qwen2)."""
        heads = config["num_attention_heads"]
        return cls(
            key=key,
            name=extra.pop("name", key),
            hidden_size=config["hidden_size"],
            intermediate_size=config["intermediate_size"],
            num_layers=config["num_hidden_layers"],
            num_heads=heads,
            num_kv_heads=config.get("num_key_value_heads", heads),
            head_dim=config.get("head_dim") or config["hidden_size"] // heads,
            vocab_size=config["vocab_size"],
            max_position_embeddings=config["max_position_embeddings"],
            tie_word_embeddings=config.get("tie_word_embeddings", False),
            attention_qkv_bias=extra.pop("attention_qkv_bias", _qwen2(config)),
            **extra,
        )

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    def as_mha(self) -> "ModelSpec":
        """The same model with one KV head per query head (multi-head attention, no GQA)."""
        return replace(self, name=f"{self.name} as MHA", num_kv_heads=self.num_heads)


def _qwen2(config: dict) -> bool:
    """Qwen2 puts a bias on q, k and v (transformers models/qwen2/modeling_qwen2.py)."""
    arch = " ".join(config.get("architectures", []))
    return config.get("model_type") == "qwen2" or arch.startswith("Qwen2")


# --8<-- [start:kappa]
def kv_bytes_per_token(model: ModelSpec, bytes_per_value: float = 2) -> float:
    """kappa: K and V (2) for every layer, every KV head and every dimension of a head."""
    if bytes_per_value <= 0:
        raise ValueError(f"bytes_per_value must be positive, got {bytes_per_value}")
    return 2 * model.num_layers * model.num_kv_heads * model.head_dim * bytes_per_value


# --8<-- [end:kappa]


def layer_linear_shapes(model: ModelSpec) -> list[tuple[str, int, int]]:
    """(name, in_features, out_features) of the seven weight matrices of ONE decoder layer;
    d is the hidden size, as in the lessons."""
    d, q, kv, ff = model.hidden_size, model.q_dim, model.kv_dim, model.intermediate_size
    return [
        ("q_proj", d, q),
        ("k_proj", d, kv),
        ("v_proj", d, kv),
        ("o_proj", q, d),
        ("gate_proj", d, ff),  # gated MLP: down(silu(gate(x)) * up(x))
        ("up_proj", d, ff),
        ("down_proj", ff, d),
    ]


def layer_parameters(model: ModelSpec) -> list[tuple[str, int]]:
    """(name, parameters) of one decoder layer, in the order a token passes through them."""
    d, bias = model.hidden_size, int(model.attention_qkv_bias)
    shapes = {name: (i, o) for name, i, o in layer_linear_shapes(model)}
    rows = [("input_layernorm", d)]  # RMSNorm: one scale per hidden dimension
    for name in ("q_proj", "k_proj", "v_proj"):
        i, o = shapes[name]
        rows.append((name + " + bias" * bias, i * o + bias * o))
    i, o = shapes["o_proj"]
    rows += [("o_proj", i * o), ("post_attention_layernorm", d)]
    rows += [(name, i * o) for name, i, o in layer_linear_shapes(model)[4:]]
    return rows


def embedding_params(model: ModelSpec) -> int:
    """The input embedding table, vocab x hidden: a row lookup per token, no arithmetic."""
    return model.vocab_size * model.hidden_size


def lm_head_params(model: ModelSpec) -> int:
    """The output projection, vocab x hidden (the embedding table itself when the two are tied)."""
    return model.vocab_size * model.hidden_size


@cache  # simulations ask at every step; the answer depends on the model alone
def layer_matmul_params(model: ModelSpec) -> int:
    """Weights that do a multiply-add for every token in all decoder layers (no biases, norms)."""
    return model.num_layers * sum(i * o for _, i, o in layer_linear_shapes(model))


def param_breakdown(model: ModelSpec) -> dict[str, int]:
    """Exact parameter count per component; the lm_head counts 0 when tied to the embedding."""
    return dict(_param_breakdown(model))  # a copy: the caller may change it


@cache
def _param_breakdown(model: ModelSpec) -> dict[str, int]:
    per_layer = dict(layer_parameters(model))
    norms = per_layer.pop("input_layernorm") + per_layer.pop("post_attention_layernorm")
    mlp = sum(per_layer.pop(name) for name in ("gate_proj", "up_proj", "down_proj"))
    attention = sum(per_layer.values())
    return {
        "embedding": embedding_params(model),
        "attention": model.num_layers * attention,
        "mlp": model.num_layers * mlp,
        "norms": model.num_layers * norms + model.hidden_size,  # + the final norm
        "lm_head": 0 if model.tie_word_embeddings else lm_head_params(model),
    }


def params(model: ModelSpec) -> int:
    """N: every parameter of the model, exactly."""
    return sum(param_breakdown(model).values())


def non_embedding_params(model: ModelSpec) -> int:
    """N without the input embedding and the (untied) lm_head, as model cards count it."""
    parts = param_breakdown(model)
    return params(model) - parts["embedding"] - parts["lm_head"]


def load_model(key: str) -> ModelSpec:
    path = MODELS_DIR / f"{key}.json"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in MODELS_DIR.glob("*.json")))
        raise KeyError(f"no model '{key}' in {MODELS_DIR} (known: {known})")
    data = json.loads(path.read_text(encoding="utf-8"))
    return ModelSpec.from_config(
        data["config"],
        key=key,
        name=data["name"],
        attention_qkv_bias=data["attention_qkv_bias"],
        source=data["source"],
        hf_repo=data.get("hf_repo"),
        quantization=data.get("quantization"),
        model_card=data.get("model_card"),
    )


def load_models() -> dict[str, ModelSpec]:
    return {p.stem: load_model(p.stem) for p in sorted(MODELS_DIR.glob("*.json"))}


def model_for_repo(hf_repo: str) -> ModelSpec | None:
    """The course's model file for a Hugging Face repo id, or None if the course has none."""
    return next((m for m in load_models().values() if m.hf_repo == hf_repo), None)
