"""The dream service: the memory (`memory/`, seed 002) and dream runs (`runs/`, seed 000)."""
