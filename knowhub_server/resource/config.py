"""Resource service settings (`KNOWHUB_RESOURCE_*`, `KNOWHUB_MASTER_KEY*`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr

from knowhub_server.common.base.config import HubSettings


class ResourceSettings(HubSettings):
    resource_versions_keep: int = Field(
        10, ge=1, le=1000, description="Versions kept per resource; older ones are erased."
    )
    master_key: SecretStr | None = Field(
        None,
        description="The active master key (32 bytes, base64). When unset, a key file "
        "is used (created on first start with mode 0600).",
    )
    master_key_retired: SecretStr | None = Field(
        None,
        description="Earlier master keys (comma-separated, base64) still needed to "
        "read data keys wrapped before a rotation; with KNOWHUB_MASTER_KEY only.",
    )
    master_key_file: Path | None = Field(
        None, description="The key file; <data_dir>/keys/master-keys.json when unset."
    )
