"""The weight-quantization lesson: formats as vLLM runs them, their bytes and bounds, the chart."""
