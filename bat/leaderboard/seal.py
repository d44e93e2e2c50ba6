"""The seal of a leaderboard site: a manifest of sha256 digests, signed with Ed25519 (``cryptography``).

``manifest.json`` lists every file of the site (the stored results
included) with its sha256, each source's name and digest, what every
sealed run recorded (dataset sha256, the tuner's code digest, BAT's
version, options, seed, trace sha256) and every transfer study's run (id,
tuner, target, prior, seed, sha256 of its stored record).
``manifest.sig`` holds the Ed25519 signature of the manifest's bytes (hex),
``manifest.key`` the signer's public key (raw 32 bytes, hex). The private
key is a PEM file (PKCS #8, unencrypted, mode 0600) that ``load_or_create_key``
makes when absent: by default in the user's data folder (``bat.core.userdata``),
never in the site.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bat.core.errors import BatError
from bat.core.limits import read_bytes
from bat.core.userdata import data_dir

MANIFEST, SIGNATURE, PUBLIC_KEY = "manifest.json", "manifest.sig", "manifest.key"
SEAL_FILES = (MANIFEST, SIGNATURE, PUBLIC_KEY)
FORMAT = "bat-leaderboard-manifest/1"


class KeyFileError(BatError, ValueError):
    """A signing key file that cannot be read as an Ed25519 private key."""


#: a PEM private key file (an Ed25519 key takes 119 bytes), and the seal's signature and public key files
MAX_KEY_BYTES = 64 * 1024


def default_key() -> Path:
    """Where the signing key lives unless ``--key`` says otherwise: ``<data folder>/keys/leaderboard.pem``."""
    return data_dir() / "keys" / "leaderboard.pem"


def read_key(path: Path) -> Ed25519PrivateKey | None:
    """The private key in ``path``; None when there is no such file (KeyFileError when it is not one)."""
    if not path.exists():
        return None
    pem = read_bytes(path, MAX_KEY_BYTES)
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"--key {path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"--key {path}: a {type(key).__name__}, not an Ed25519 private key")
    return key


def create_key(path: Path) -> Ed25519PrivateKey:
    """A new private key, written to ``path`` readable by its owner only."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    return key


def public_hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def site_files(site: Path) -> list[str]:
    """Every file of ``site`` but the seal, as sorted POSIX paths relative to it."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*")
                  if p.is_file() and p.relative_to(site).as_posix() not in SEAL_FILES)


def manifest(site: Path, sources: list[dict[str, Any]], version: str, sealed_runs: list[dict[str, Any]],
             transfer_runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest of ``site``: every file's digest, the sources, the digests each sealed run recorded
    (``bat compare --sealed``), each transfer study's runs (identity, prior, sha256 of the record) and the BAT
    version that built it."""
    return {"format": FORMAT, "bat_version": version, "sources": sources, "sealed_runs": sealed_runs,
            "transfer_runs": transfer_runs, "files": {name: digest(site / name) for name in site_files(site)}}


def sign(data: bytes, key: Ed25519PrivateKey) -> str:
    return key.sign(data).hex()


def signature_holds(data: bytes, signature_hex: str, public_key_hex: str) -> bool:
    """Whether ``signature_hex`` is the signature of ``data`` by the key ``public_key_hex``."""
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify(bytes.fromhex(signature_hex), data)
    except (InvalidSignature, ValueError):
        return False
    return True
