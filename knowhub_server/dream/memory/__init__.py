"""The memory: remember, the historian queue and workers, events and profiles."""
