"""KV cache of Qwen2.5-7B-Instruct for a batch of sequences: kappa * context * batch.

Run it: python snippets/kv_cache/cache_size.py
"""

import sys
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kv_cache.kappa import kappa
from specs.models import load_model

CONTEXTS = (1024, 4096, 8192, 32768)
BATCHES = (1, 8, 32, 64)


def cache_bytes(kappa_bytes: float, context: int, batch: int = 1) -> float:
    """Bytes of KV for `batch` sequences of `context` tokens each."""
    if context <= 0 or batch <= 0:
        raise ValueError(
            f"context and batch must be positive, got context={context}, batch={batch}"
        )
    return kappa_bytes * context * batch


def main() -> None:
    spec = load_model("qwen2.5-7b-instruct")
    k = kappa(spec)
    print(f"{spec.name}: kappa = {k:,.0f} bytes/token, KV cache in GiB\n")
    print(f"{'context':>9} " + "".join(f"{f'batch {b}':>10}" for b in BATCHES))
    for s in CONTEXTS:
        print(f"{s:>9,} " + "".join(f"{cache_bytes(k, s, b) / 2**30:>10.2f}" for b in BATCHES))


if __name__ == "__main__":
    main()
