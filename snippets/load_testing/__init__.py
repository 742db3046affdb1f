"""The load-testing lesson: Little's law, seeded arrivals, latency against rate, goodput, cost."""
