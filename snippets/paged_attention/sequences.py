"""How many sequences share one KV pool: reserve max_model_len each, or allocate blocks on demand.

The pool is the KV-cache lesson's: AWQ Qwen2.5-7B-Instruct on one RTX 4090 (its assumptions).
Every request here holds n = prompt + output tokens at its peak; max_model_len is the model's
native context. Run it: python snippets/paged_attention/sequences.py
"""

from dataclasses import dataclass, replace

from core.engine import MAX_NUM_SEQS
from core.models import kv_bytes_per_token, load_model
from kv_cache.fit_4090 import rtx_4090, scenarios

REQUEST_LENGTHS = (512, 1300, 4096, 16384, 32768)
EXAMPLE_PROMPT, EXAMPLE_OUTPUT = 1000, 300


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Pool:
    tokens: int  # whole blocks of KV cache, in tokens (the KV-cache lesson's figure)
    block_size: int
    max_model_len: int
    max_num_seqs: int = MAX_NUM_SEQS

    def __post_init__(self) -> None:
        if min(self.tokens, self.block_size, self.max_model_len, self.max_num_seqs) <= 0:
            raise ValueError("tokens, block size, max_model_len and max_num_seqs must be positive")
        if self.tokens % self.block_size:
            raise ValueError(f"{self.tokens} tokens is not whole {self.block_size}-token blocks")

    @property
    def usable_blocks(self) -> int:
        """vLLM keeps block 0 as a null block (v1/core/block_pool.py): requests get the rest."""
        return self.tokens // self.block_size - 1

    def check(self, n: int) -> None:
        if not 0 < n <= self.max_model_len:
            raise ValueError(
                f"a request of {n} tokens must be in 1..max_model_len={self.max_model_len}"
            )

    def reserved(self, n: int) -> int:
        """Contiguous slabs of max_model_len tokens, whatever the request really uses."""
        self.check(n)
        return self.tokens // self.max_model_len

    def blocks(self, n: int) -> int:
        self.check(n)
        return ceil_div(n, self.block_size)

    def paged(self, n: int) -> int:
        """Blocks on demand: each request holds ceil(n / block_size) blocks at its peak."""
        return self.usable_blocks // self.blocks(n)

    def running(self, n: int) -> int:
        """What the scheduler runs at once: the pool's limit or max_num_seqs, whichever is lower."""
        return min(self.paged(n), self.max_num_seqs)

    def last_block_waste(self, n: int) -> int:
        """Internal fragmentation of paging: empty slots in the request's last block."""
        return self.blocks(n) * self.block_size - n

    def max_num_seqs_limits_up_to(self) -> int:
        """Longest request (whole blocks) for which the pool holds max_num_seqs sequences."""
        return self.usable_blocks // self.max_num_seqs * self.block_size


def rtx_4090_awq_pool(cuda_shortfall_bytes: float = 0) -> Pool:
    """The KV-cache lesson's pool; with a shortfall, as if CUDA reported that much less memory
    than nvidia-smi's total (vLLM budgets utilization x CUDA's total, request_memory)."""
    model = load_model("qwen2.5-7b-instruct")
    budget = rtx_4090()
    budget = replace(budget, capacity_bytes=budget.capacity_bytes - cuda_shortfall_bytes)
    _, (_, awq_weights, _), _ = scenarios()
    tokens = budget.tokens(awq_weights, kv_bytes_per_token(model))
    return Pool(tokens, budget.block_size, model.max_position_embeddings)


def main() -> None:
    pool = rtx_4090_awq_pool()
    print(
        f"pool: {pool.tokens:,} tokens = {pool.usable_blocks + 1:,} blocks of {pool.block_size} "
        f"(1 null block), max_model_len {pool.max_model_len:,}, max_num_seqs {pool.max_num_seqs}"
    )
    print(
        f"{'tokens/request':>14} {'reserve max':>12} {'blocks/req':>11} {'last-block waste':>17} "
        f"{'paged':>7} {'running':>8}  limit"
    )
    for n in REQUEST_LENGTHS:
        limit = "max_num_seqs" if pool.paged(n) >= pool.max_num_seqs else "KV cache"
        print(
            f"{n:>14,} {pool.reserved(n):>12,} {pool.blocks(n):>11,} "
            f"{pool.last_block_waste(n):>17} "
            f"{pool.paged(n):>7,} {pool.running(n):>8,}  {limit}"
        )
    print(
        f"max_num_seqs is the limit for requests up to {pool.max_num_seqs_limits_up_to():,} tokens"
    )


if __name__ == "__main__":
    main()
