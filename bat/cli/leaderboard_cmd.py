"""``bat leaderboard``: build a signed static site ranking tuners from ``bat compare`` results, or verify one.

``bat leaderboard RESULTS... --out SITE`` writes the site (``bat.leaderboard``)
from ``bat compare`` folders and transfer studies (``--study transfer``);
``bat leaderboard --verify SITE`` checks its signature, every digest and every
number shown. Exit status: 0 built or verified; 3 a verified site was changed
(one line naming the file); 2 bad input (a folder of another schema,
conflicting runs, an unsigned or partly signed site, a site folder that
exists), nothing written.
"""

from __future__ import annotations

from pathlib import Path

import typer

from bat.cli.output import EXIT_FOUND, document, say


def leaderboard(
    results: list[Path] = typer.Argument(None, metavar="RESULTS...",
                                         help="bat compare output folders (each with its results.json), "
                                              "transfer studies (bat compare --study transfer) among them."),
    out: Path = typer.Option(None, "--out", "-o", help="The site folder to write (it must not exist)."),
    key: Path = typer.Option(None, "--key", help="Ed25519 private key (PEM) that signs the site; made when absent "
                                                 "(default: <data folder>/keys/leaderboard.pem)."),
    check: Path = typer.Option(None, "--verify", help="Verify this site instead of building one."),
    expect_key: str = typer.Option(None, "--expect-key", help="With --verify: the public key (hex, as in the "
                                                              "site's manifest.key) the site must be signed by."),
) -> None:
    """Rank tuners on a static, signed site from bat compare results; --verify checks one."""
    from bat.leaderboard import TamperedSiteError, build, verify
    from bat.leaderboard.seal import default_key

    if check is not None:
        if results or out is not None or key is not None:
            raise typer.BadParameter("--verify SITE takes no RESULTS, --out or --key", param_hint="--verify")
        try:
            done = verify(check, expect_key)
        except TamperedSiteError as exc:
            say("refused: {}", str(exc))
            document({"verified": False, "file": exc.path, "reason": str(exc)})
            raise typer.Exit(EXIT_FOUND) from None
        say("verified: {} files, signature of key {}; {} tuners on {} targets and {} transfer studies derived "
            "again from {} stored results", done["files"], done["public_key"], done["tuners"], done["targets"],
            done["transfer_studies"], done["sources"])
        document({"verified": True, **done})
        return
    if expect_key is not None:
        raise typer.BadParameter("only with --verify", param_hint="--expect-key")
    if not results:
        raise typer.BadParameter("give one or more bat compare output folders (or --verify SITE)",
                                 param_hint="RESULTS")
    if out is None:
        raise typer.BadParameter("give the site folder to write", param_hint="--out")
    import bat

    built = build(list(results), out, key if key is not None else default_key(), bat.__version__)
    say("site: {} ({} files, {} tuners on {} targets, {} transfer studies); open {}", built.site, built.files,
        built.tuners, built.targets, built.transfer_studies, built.site / "index.html")
    say("signed with {} ({}); public key {}", built.key, "made now" if built.key_created else "existing",
        built.public_key)
    document({"site": str(built.site), "files": built.files, "tuners": built.tuners, "targets": built.targets,
              "transfer_studies": built.transfer_studies, "key": str(built.key), "key_created": built.key_created,
              "public_key": built.public_key})


def register(app: typer.Typer) -> None:
    app.command("leaderboard")(leaderboard)
