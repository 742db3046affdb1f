"""The course's inference-arithmetic core: every model and GPU quantity is computed here, once.

- core.models: shape from config.json, exact parameter counts, kappa (KV bytes per token)
- core.formats: weight formats (BF16, FP8, AWQ from the checkpoint's quantization config), bytes
- core.forward: FLOPs and bytes of a prefill pass and of a decode step, attention FLOPs apart
- core.gpus: GPU specifications (gpus.toml)
- core.roofline: lower bounds on TTFT, TPOT and E2E; crossover and critical batch; MBU and MFU
- core.memory: what a GPU's memory holds of KV cache next to the weights
- core.parallel: tensor parallelism: bytes exchanged, ring all-reduce time, per-GPU floor
- core.moe: mixture-of-experts models (core/moe_models/): total and active parameters, decode
  bytes against batch, expert-parallel traffic
- core.reference: the course's reference model and formats, prompt lengths, published measurements
- core.display: how a time is printed (ms), the same on every page
- core.svgchart: every chart's frame as inline SVG: axes, grid, legend, dark-mode colours
- core.speculative: speculative decoding's verification bound, expected tokens and speed-up
- core.kernels: attention's HBM traffic, KV blocks, kernel launches, CUDA graph capture sizes
- core.lab_results: the recorded lab runs in labs/results/ and the GPU and model each one names

Lessons import from here and show the formula they teach; nothing here imports a lesson.
"""
