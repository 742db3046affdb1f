"""How far the lab's GPU timings may sit from the plain batch's (labs/structured_outputs_lora).

Section 3 says the bitmask costs the GPU under one percent of a decode step, so a constrained
batch of the lab's size runs at about the plain batch's pace; LoRA's batched kernels add
launches and bytes, but do not double a step. The lab's claims check these ratios; the page
quotes them.
"""

CONSTRAINED_TPOT_RATIO = 1.5  # at most this x the plain batch's time per output token
LORA_TPOT_RATIO = 2.0  # the mixed-adapter batch, likewise

if __name__ == "__main__":
    print(f"constrained batches: at most {CONSTRAINED_TPOT_RATIO:g}x the plain batch's TPOT")
    print(f"mixed-adapter batch: at most {LORA_TPOT_RATIO:g}x the plain batch's TPOT")
