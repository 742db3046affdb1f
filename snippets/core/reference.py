"""The course's reference choices, shared by the lessons: the model in its two formats, the prompt
lengths the lessons revisit, and the published measurements they set beside their bounds.

The model files themselves are core/models/<key>/; these are only the keys every lesson agrees on.
"""

BF16_MODEL = "qwen2.5-7b-instruct"
AWQ_MODEL = "qwen2.5-7b-instruct-awq"  # the checkpoint the labs load by default
PROMPT_LENGTHS = (128, 1024, 8192)  # short, middle and long prompts

# Published measurements, quoted as "what to expect" (this course did not run them).
# Qwen2.5 speed benchmark (QwenLM/Qwen2.5, docs/source/benchmark/speed_benchmark.rst): vLLM 0.6.3,
# one A100 80GB, batch 1, input length 1, 2048 new tokens, Qwen2.5-7B-Instruct.
QWEN_BENCH_GPU = "a100_80gb_sxm"  # core/gpus.toml: the SXM card's bandwidth
QWEN_BENCH_INPUT_LEN = 1
QWEN_BENCH_NEW_TOKENS = 2048
QWEN_BENCH_BF16_TOK_S = 84.28
QWEN_BENCH_AWQ_TOK_S = 148.10
# gpt-fast README (pytorch-labs/gpt-fast): Llama-2-7B BF16, batch 1, A100 80GB limited to 330 W.
GPT_FAST_TOK_S = 104.9
GPT_FAST_BANDWIDTH_GBS = 1397.31
