"""Build a leaderboard site from result folders, and verify one: digests, signature and every number shown.

``build`` reads and checks every source and derives the standings before it
writes anything; the site is written into a temporary folder beside the
destination and renamed into place when whole, so a site folder either does
not exist or is complete and sealed. A destination that exists is refused.

``verify`` checks, in order: the seal is there (all three files: else the
site is unsigned or partly signed, ``UnsealedSiteError``); the signature of
the manifest holds for the site's public key (and equals ``expect_key`` when
given); the manifest names only plain paths inside the site and the site holds
no symbolic link; every file of the site is in the manifest (else partly signed) and
every file the manifest lists has its digest; each stored results file is
the one the manifest names (and holds, when sealed, the digests of every
run as ``bat.leaderboard.sealed`` re-derives them: the trace hashes; a
transfer study's rows count its stored runs, ``bat.leaderboard.transfer``);
the manifest's sealed runs and transfer runs are those the stored results
record; and the standings, the figure inputs and the pages derived again
from the stored results (and the stored facts of their datasets,
``data/targets.json``) are the site's, byte for byte.
The first failure raises ``TamperedSiteError`` naming the file. The SVG
figures are checked by their digests (they are drawn from the figure inputs,
which are derived again), and so is Plotly's bundle (copied from the plotly
package that built the site; the pages that draw with it are derived again).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bat.core.atomic import check_output_folder
from bat.core.errors import BatError, OutputError
from bat.core.limits import MAX_DATA_BYTES, check_kind, loads, read_bytes, regular_file
from bat.leaderboard import figures, interactive, pages, seal
from bat.leaderboard.provenance import dataset_facts
from bat.leaderboard.sources import (
    RESULTS,
    Source,
    SourceError,
    check_schema,
    read_source,
    sealed_runs,
    transfer_runs,
)
from bat.leaderboard.standings import derive


class UnsealedSiteError(BatError, ValueError):
    """A folder that is not a whole signed leaderboard site (no seal, part of one, files outside the manifest)."""


class TamperedSiteError(BatError, ValueError):
    """A signed site whose bytes or numbers are not those it was sealed with: ``path`` names the file."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path


@dataclass(frozen=True)
class Built:
    """What ``build`` wrote: the site, the key that signed it (and whether it was made now), the counts."""

    site: Path
    key: Path
    key_created: bool
    public_key: str
    files: int
    tuners: int
    targets: int
    transfer_studies: int


#: the facts of each target's dataset (bat.leaderboard.provenance), an input of the pages like the results
DATASETS = "data/targets.json"


def _stored(k: int) -> str:
    return f"data/{k}/{RESULTS}"


def build(folders: list[Path], out: Path, key_path: Path, version: str) -> Built:
    """The site of ``folders`` in ``out`` (which must not exist), sealed with the key in ``key_path``;
    ``version``: BAT's, recorded in the manifest."""
    if out.exists() or out.is_symlink():
        raise OutputError(f"--out {out}: exists; a leaderboard is written to a new folder, never over one")
    check_output_folder(out.parent, what="--out")
    check_kind(key_path)  # read or made: a loop of links, a FIFO or a device is refused before resolve() or a read
    if key_path.resolve().is_relative_to(out.resolve()):
        raise OutputError(f"--key {key_path}: inside the site {out}; the private key never goes into the site")
    sources = [read_source(f) for f in folders]
    datasets = dataset_facts(sources)
    standings = derive(sources, datasets)
    derived = pages.render(standings)
    plotly = interactive.bundle()
    key = seal.read_key(key_path)
    created = key is None
    if key is None:
        key = seal.create_key(key_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        for k, s in enumerate(sources, start=1):
            (tmp / _stored(k)).parent.mkdir(parents=True, exist_ok=True)
            (tmp / _stored(k)).write_bytes(s.raw)
        (tmp / DATASETS).write_text(json.dumps(datasets, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        for rel, text in derived.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text, encoding="utf-8")
        (tmp / interactive.BUNDLE).write_bytes(plotly)
        for rel, text in derived.items():
            if rel.startswith("figures/") and rel.endswith(".json") and json.loads(text)["kind"] == "scores":
                figures.draw(json.loads(text), tmp / rel.replace(".json", ".svg"))
        doc = seal.manifest(tmp, [{"name": s.name, "path": _stored(k), "sha256": s.sha256}
                                  for k, s in enumerate(sources, start=1)], version, sealed_runs(sources),
                            transfer_runs(sources))
        data = (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()
        (tmp / seal.MANIFEST).write_bytes(data)
        (tmp / seal.SIGNATURE).write_text(seal.sign(data, key) + "\n", encoding="ascii")
        (tmp / seal.PUBLIC_KEY).write_text(seal.public_hex(key) + "\n", encoding="ascii")
        os.rename(tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(tmp)
    return Built(out, key_path, created, seal.public_hex(key), len(doc["files"]) + len(seal.SEAL_FILES),
                 len(standings["tuners"]), len(standings["targets"]), len(standings["transfer"]))


def _seal(site: Path) -> tuple[bytes, str, str]:
    """The manifest's bytes, the signature and the public key of ``site`` (UnsealedSiteError if any is missing)."""
    if not site.is_dir():
        raise UnsealedSiteError(f"{site}: not a folder (give the folder bat leaderboard wrote)")
    present = [name for name in seal.SEAL_FILES if (site / name).is_file()]
    if not present:
        raise UnsealedSiteError(f"{site}: unsigned (no {', '.join(seal.SEAL_FILES)}): not a sealed leaderboard site")
    if missing := [name for name in seal.SEAL_FILES if name not in present]:
        raise UnsealedSiteError(f"{site}: partly signed: {', '.join(missing)} missing")
    return (read_bytes(site / seal.MANIFEST, MAX_DATA_BYTES),
            read_bytes(site / seal.SIGNATURE, seal.MAX_KEY_BYTES).decode("ascii", errors="replace").strip(),
            read_bytes(site / seal.PUBLIC_KEY, seal.MAX_KEY_BYTES).decode("ascii", errors="replace").strip())


#: a path inside the site as the manifest may name it: plain names, none starting with a dot (no "..")
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")


def _manifest(site: Path, data: bytes) -> dict[str, Any]:
    """The manifest's document, its paths plain names inside the site (UnsealedSiteError otherwise)."""
    where = str(site / seal.MANIFEST)
    try:
        doc = loads(data, where)
    except json.JSONDecodeError:
        doc = None
    files = doc.get("files") if isinstance(doc, dict) else None
    entries = doc.get("sources") if isinstance(doc, dict) else None
    if not (isinstance(doc, dict) and doc.get("format") == seal.FORMAT and isinstance(files, dict)
            and isinstance(entries, list)
            and all(_PLAIN.fullmatch(k) and isinstance(v, str) for k, v in files.items())
            and all(isinstance(e, dict) and all(isinstance(e.get(f), str) for f in ("name", "path", "sha256"))
                    and e["path"] in files for e in entries)):
        raise UnsealedSiteError(f"{where}: not a manifest of format {seal.FORMAT} (files and sources, every path "
                                "a plain name inside the site)")
    return doc


def _walk(site: Path) -> list[Path]:
    """Every entry below ``site``, not following symbolic links."""
    out = []
    for folder, dirs, names in os.walk(site):
        out += [Path(folder) / n for n in (*dirs, *names)]
    return out


def verify(site: Path, expect_key: str | None = None) -> dict[str, Any]:
    """Check ``site`` as the module says; what was checked, or an error naming the first file at fault."""
    data, signature, public = _seal(site)
    if expect_key is not None and public != expect_key.strip().lower():
        raise TamperedSiteError(seal.PUBLIC_KEY, f"the site is signed by key {public}, not the expected one")
    if not seal.signature_holds(data, signature, public):
        raise TamperedSiteError(seal.MANIFEST, f"its signature ({seal.SIGNATURE}) does not hold for the key in "
                                               f"{seal.PUBLIC_KEY}: the manifest or the signature was changed")
    doc = _manifest(site, data)
    if links := [p for p in _walk(site) if p.is_symlink()]:
        raise TamperedSiteError(links[0].relative_to(site).as_posix(), "a symbolic link: a sealed site holds "
                                                                       "regular files only")
    listed: dict[str, str] = doc["files"]
    if extra := [name for name in seal.site_files(site) if name not in listed]:
        raise UnsealedSiteError(f"{site}: partly signed: {extra[0]} is not in the manifest"
                                + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""))
    for name, sha in listed.items():
        if not (site / name).is_file():
            raise TamperedSiteError(name, "listed in the manifest, missing from the site")
        regular_file(site / name, MAX_DATA_BYTES)
        if seal.digest(site / name) != sha:
            raise TamperedSiteError(name, "its sha256 is not the manifest's: the file was changed")
    sources = []
    for entry in doc.get("sources", []):
        raw = read_bytes(site / entry["path"], MAX_DATA_BYTES)
        try:
            parsed = loads(raw, entry["path"], finite=False)
            check_schema(parsed, entry["path"])
        except (SourceError, ValueError) as exc:
            raise TamperedSiteError(entry["path"], f"stored results unreadable ({exc})") from None
        source = Source(entry["name"], raw, parsed)
        if source.sha256 != entry["sha256"]:
            raise TamperedSiteError(entry["path"], "not the results the manifest names")
        sources.append(source)
    if doc.get("sealed_runs", []) != sealed_runs(sources):
        raise TamperedSiteError(seal.MANIFEST, "its sealed runs' digests are not those the stored results record")
    if doc.get("transfer_runs", []) != transfer_runs(sources):
        raise TamperedSiteError(seal.MANIFEST, "its transfer runs are not those the stored transfer studies hold")
    try:
        datasets = loads(read_bytes(site / DATASETS, MAX_DATA_BYTES), DATASETS)
    except (OSError, ValueError) as exc:
        raise TamperedSiteError(DATASETS, f"the stored dataset facts are unreadable ({exc})") from None
    if not isinstance(datasets, dict) or not all(isinstance(v, dict) for v in datasets.values()):
        raise TamperedSiteError(DATASETS, "not the dataset facts of each target")
    try:
        derived = pages.render(derive(sources, datasets))
    except SourceError as exc:
        raise TamperedSiteError(seal.MANIFEST, f"its stored results cannot be merged ({exc})") from None
    for rel, text in derived.items():
        path = site / rel
        if not path.is_file() or read_bytes(path, MAX_DATA_BYTES) != text.encode("utf-8"):
            raise TamperedSiteError(rel, "differs from what the stored results give: a number shown is not "
                                         "the stored runs'")
    standings = json.loads(derived["standings.json"])
    return {"site": str(site), "files": len(listed) + len(seal.SEAL_FILES), "sources": len(sources),
            "derived": len(derived), "tuners": len(standings["tuners"]), "targets": len(standings["targets"]),
            "transfer_studies": len(standings["transfer"]), "public_key": public}
