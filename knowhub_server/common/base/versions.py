"""The installed versions of KnowHub and of the libraries a backup names."""

from __future__ import annotations


def installed_version(distribution: str = "knowhub") -> str:
    """The installed version of a distribution; "unknown" when running from a source tree
    that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"
