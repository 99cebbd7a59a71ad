"""The memory (seed 002): remember, the historian queue and workers, events and profiles."""
