"""KnowHub side by side with its peers: see __main__.py."""
