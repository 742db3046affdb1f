"""Prefix-caching lesson: block-granular reuse, prefill saved, hit rate of a request stream."""
