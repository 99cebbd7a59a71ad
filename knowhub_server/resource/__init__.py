"""The resource service: code, credentials and cookies next to knowledge, secrets encrypted."""
