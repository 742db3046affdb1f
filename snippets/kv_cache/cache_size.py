"""KV cache of Qwen2.5-7B-Instruct for a batch of sequences: kappa * context * batch.

Run it: python snippets/kv_cache/cache_size.py
"""

from core.forward import kv_cache_bytes
from core.models import kv_bytes_per_token, load_model

CONTEXTS = (1024, 4096, 8192, 32768)
BATCHES = (1, 8, 32, 64)


def main() -> None:
    spec = load_model("qwen2.5-7b-instruct")
    print(f"{spec.name}: kappa = {kv_bytes_per_token(spec):,.0f} bytes/token, KV cache in GiB\n")
    print(f"{'context':>9} " + "".join(f"{f'batch {b}':>10}" for b in BATCHES))
    for s in CONTEXTS:
        cells = (kv_cache_bytes(spec, s, b) / 2**30 for b in BATCHES)
        print(f"{s:>9,} " + "".join(f"{gib:>10.2f}" for gib in cells))


if __name__ == "__main__":
    main()
