"""Part 8 capstone: a capacity plan built from the whole course."""
