"""The dream service: cognitive memory (seed 002), later dream runs (seed 000)."""
