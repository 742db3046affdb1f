"""Model configurations (snippets/specs/models/*.json) and what follows from them exactly.

Parameter counts are derived from the config, component by component, never taken from a model card.
"""

import json
from dataclasses import dataclass
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
    vocab_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    attention_qkv_bias: bool
    source: str
    quantization: dict | None = None
    model_card: dict | None = None  # figures as the model card prints them, e.g. "7.61B"

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    def kv_bytes_per_token(self, bytes_per_value: float = 2) -> float:
        """kappa = 2 (K and V) * L * n_kv * d_h * b."""
        return 2 * self.num_layers * self.num_kv_heads * self.head_dim * bytes_per_value

    def param_breakdown(self) -> dict[str, int]:
        """Exact parameter count per component (a gated MLP, RMSNorm, optional q/k/v biases)."""
        h, kv, layers = self.hidden_size, self.kv_dim, self.num_layers
        bias = self.attention_qkv_bias
        attention = (h * h + h * bias) + 2 * (h * kv + kv * bias) + h * h  # q, k, v, o
        mlp = 3 * h * self.intermediate_size  # gate, up, down
        norms = 2 * h  # input and post-attention RMSNorm
        return {
            "embedding": self.vocab_size * h,
            "attention": layers * attention,
            "mlp": layers * mlp,
            "norms": layers * norms + h,  # + the final norm
            "lm_head": 0 if self.tie_word_embeddings else self.vocab_size * h,
        }

    @property
    def params(self) -> int:
        return sum(self.param_breakdown().values())

    @property
    def non_embedding_params(self) -> int:
        parts = self.param_breakdown()
        return self.params - parts["embedding"] - parts["lm_head"]


def load_model(key: str) -> ModelSpec:
    path = MODELS_DIR / f"{key}.json"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in MODELS_DIR.glob("*.json")))
        raise KeyError(f"no model '{key}' in {MODELS_DIR} (known: {known})")
    data = json.loads(path.read_text(encoding="utf-8"))
    c = data["config"]
    return ModelSpec(
        key=key,
        name=data["name"],
        hidden_size=c["hidden_size"],
        intermediate_size=c["intermediate_size"],
        num_layers=c["num_hidden_layers"],
        num_heads=c["num_attention_heads"],
        num_kv_heads=c["num_key_value_heads"],
        vocab_size=c["vocab_size"],
        max_position_embeddings=c["max_position_embeddings"],
        tie_word_embeddings=c["tie_word_embeddings"],
        attention_qkv_bias=data["attention_qkv_bias"],
        source=data["source"],
        quantization=data.get("quantization"),
        model_card=data.get("model_card"),
    )


def load_models() -> dict[str, ModelSpec]:
    return {p.stem: load_model(p.stem) for p in sorted(MODELS_DIR.glob("*.json"))}
