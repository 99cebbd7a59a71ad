"""The dream service: the memory (`memory/`) and dream runs (`runs/`)."""
