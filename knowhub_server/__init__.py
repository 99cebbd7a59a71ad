"""KnowHub's gRPC services: one package per subsystem, plus the shared runtime in `common`."""
