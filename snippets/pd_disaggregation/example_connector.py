"""What vLLM 0.26.0's ExampleConnector stores and loads for one prompt, as pure arithmetic.

Read from vllm/distributed/kv_transfer/kv_connector/v1/example_connector.py:
- the producer stores the KV of the first align_to_block_size(P) tokens (ReqMeta.make_meta),
  one safetensors file per attention layer, in a folder named by a hash of those token ids;
- the consumer looks for the folder of the first align_to_block_size(P - 1) tokens
  (get_num_new_matched_tokens) and, if it exists, loads that many tokens instead of computing them;
- align_to_block_size(n, b) = (n - 1) // b * b: whole blocks only, and never the last token.
"""

from core.models import ModelSpec, kv_bytes_per_token


def align_to_block_size(num_tokens: int, block_size: int) -> int:
    """vLLM's helper of the same name (example_connector.py)."""
    if num_tokens < 1 or block_size < 1:
        raise ValueError(
            f"need num_tokens >= 1 and block_size >= 1, got {num_tokens}, {block_size}"
        )
    return (num_tokens - 1) // block_size * block_size


def stored_tokens(prompt_len: int, block_size: int) -> int:
    """Tokens whose KV the producer writes out."""
    return align_to_block_size(prompt_len, block_size)


def loaded_tokens(prompt_len: int, block_size: int) -> int:
    """Tokens the consumer loads for the same prompt; 0 when it looks under another name."""
    if prompt_len < 2:
        return 0
    look = align_to_block_size(prompt_len - 1, block_size)
    return look if look == stored_tokens(prompt_len, block_size) else 0


def stored_bytes(
    model: ModelSpec, prompt_len: int, block_size: int, bytes_per_value: int = 2
) -> int:
    """KV bytes the producer writes for one prompt: kappa x stored tokens (all layers)."""
    return int(kv_bytes_per_token(model, bytes_per_value)) * stored_tokens(prompt_len, block_size)


def main() -> None:
    for prompt, block in ((2000, 16), (2001, 16), (300, 128), (257, 128)):
        print(
            f"prompt {prompt:>5}, block {block:>3}: stored {stored_tokens(prompt, block):>5}, "
            f"loaded {loaded_tokens(prompt, block):>5}"
        )


if __name__ == "__main__":
    main()
