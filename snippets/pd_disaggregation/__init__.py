"""Prefill/decode disaggregation: KV bytes to move, link time, when it pays, goodput under SLOs."""
