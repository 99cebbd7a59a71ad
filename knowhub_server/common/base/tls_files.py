"""The TLS files the settings name (KNOWHUB_TLS_CERT_FILE, KNOWHUB_TLS_KEY_FILE,
KNOWHUB_TLS_CA_FILE), checked as the settings load: a wrong path, a file that holds no PEM
certificate, or a key that does not belong to the certificate stops the process at start
with a message naming the setting."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

_PUBLIC_DER = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _read(path: Path, setting: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{setting}: cannot read {path}: {exc.strerror or exc}") from None


def _certificates(path: Path, setting: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(_read(path, setting))
    except ValueError as exc:
        if str(exc).startswith(setting):
            raise
        raise ValueError(f"{setting}: {path} holds no PEM certificate ({exc})") from None


def check_tls_files(cert_file: Path | None, key_file: Path | None, ca_file: Path | None) -> None:
    """Raises ValueError naming the setting when a TLS file is missing, unreadable, not
    PEM, or when the key is not the certificate's."""
    if (cert_file is None) != (key_file is None):
        raise ValueError(
            "KNOWHUB_TLS_CERT_FILE and KNOWHUB_TLS_KEY_FILE go together: "
            "set both for TLS, or neither"
        )
    if cert_file is not None and key_file is not None:
        leaf = _certificates(cert_file, "KNOWHUB_TLS_CERT_FILE")[0]
        try:
            key = serialization.load_pem_private_key(
                _read(key_file, "KNOWHUB_TLS_KEY_FILE"), password=None
            )
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"KNOWHUB_TLS_KEY_FILE: {key_file} holds no unencrypted PEM private key ({exc})"
            ) from None
        if key.public_key().public_bytes(*_PUBLIC_DER) != leaf.public_key().public_bytes(
            *_PUBLIC_DER
        ):
            raise ValueError(
                f"KNOWHUB_TLS_KEY_FILE: {key_file} is not the private key of "
                f"the certificate in {cert_file}"
            )
    if ca_file is not None:
        _certificates(ca_file, "KNOWHUB_TLS_CA_FILE")
