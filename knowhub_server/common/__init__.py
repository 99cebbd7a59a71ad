"""Runtime shared by every KnowHub service, in layers: `runtime` (the server process) over
`storage`, `security` and `llm` (apart from each other) over `base`."""
