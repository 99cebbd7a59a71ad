"""Runtime shared by every KnowHub service: settings, identity, errors, stores, LLM, server."""
