"""The KV-quantization and long-context lesson: kv_cache_dtype, capacity, YaRN, offloading."""
