"""The Prefill/Decode lesson: phase intensity estimator, KV growth, the lab results table."""
