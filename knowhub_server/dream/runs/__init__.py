"""Dream runs: per-trace reflection, cross-trace integration, schedules, and the
server-side evaluator of cognition triggers."""
