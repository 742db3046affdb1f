"""The batched-decode lesson: decode bound against batch size, critical batch, the chart."""
