"""The knowledge service: structured experience agents save, search, rate and evolve."""
