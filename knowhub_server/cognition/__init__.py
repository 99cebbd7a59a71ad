"""The cognition service: per-trace cognition logs, evaluations and extraction review."""
