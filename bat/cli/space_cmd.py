"""``bat space``: the sizes of one benchmark's search space, or of all of them."""

from __future__ import annotations

import typer
from rich.table import Table

from bat.cli.output import cell, document, markup, say


def space(
    name: str = typer.Argument(None, help="Benchmark name, a space file (ours or T1) by path, or the name of "
                                          "imported datasets; all registered ones when omitted."),
    benchmark: str = typer.Option(None, "--benchmark", "-b", help="The same as NAME."),
    variant: str = typer.Option(None, "--variant",
                                help="Count under another rule set of the space file (published.variants), "
                                     "e.g. hotspot's kernel_tuner."),
) -> None:
    """Show parameters, cardinality and constrained size of search spaces."""
    from bat.cli.console import console
    from bat.core.benchmark import benchmark_names
    from bat.core.errors import SpaceSpecError
    from bat.core.spacefile import variant_space

    if benchmark is not None and name is not None and benchmark != name:
        raise SpaceSpecError(f"give the benchmark once: NAME {name!r} and --benchmark {benchmark!r}")
    name = name or benchmark
    if variant is not None:
        if not name:
            raise SpaceSpecError("--variant needs a benchmark name")
        b = _benchmark(name)
        other = variant_space(b.raw, variant, str(b.path))
        info = b.published["variants"][variant]
        say("{}: {:,} valid configurations under its own constraints, {:,} under the {} rules ({}); published "
            "constrained count {}", b.name, b.space.count_valid(), other.count_valid(), variant, info["note"],
            _count(b.published.get("constrained")))
        for c in other.constraints:
            say("{} constraint: {}", variant, c.expr)
        document({"benchmark": b.name, "variant": variant, "valid": b.space.count_valid(),
                  "valid_under_variant": other.count_valid(), "note": info["note"],
                  "constraints": [c.expr for c in other.constraints]})
        return

    names = [name] if name else benchmark_names()
    t = Table(title="search spaces")
    for col in ("benchmark", "parameters", "cardinality", "constrained", "published constrained"):
        t.add_column(col, justify="right" if col != "benchmark" else "left")
    spaces = []
    loaded = [_benchmark(n) for n in names]  # each space built once, for the table and the parameters
    for b in loaded:
        pub = (b.published or {}).get("constrained")
        spaces.append({"benchmark": b.name, "parameters": len(b.space.names), "cardinality": b.space.cardinality,
                       "constrained": b.space.count_valid(), "published_constrained": pub
                       if isinstance(pub, int) else None})
        t.add_row(cell(b.name), str(len(b.space.names)), f"{b.space.cardinality:,}", f"{b.space.count_valid():,}",
                  _count(pub))
    console.print(t)
    doc: dict = {"spaces": spaces}
    if name:
        b = loaded[0]
        p = Table(title=markup("{} parameters", b.name))
        p.add_column("parameter")
        p.add_column("values")
        for par in b.space.parameters:
            p.add_row(cell(par.name), cell(", ".join(str(v) for v in par.values)))
        console.print(p)
        for c in b.space.constraints:
            say("constraint: {}", c.expr)
        note = b.published.get("note")
        if note:
            say("published count: {}", note)
        for v in b.published.get("variants", {}):
            say("other rules: bat space {} --variant {}", b.name, v)
        doc.update(parameters=[{"name": par.name, "values": [_plain(v) for v in par.values]}
                               for par in b.space.parameters],
                   constraints=[c.expr for c in b.space.constraints], variants=list(b.published.get("variants", {})))
    document(doc)


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def _plain(value: object) -> object:
    """A parameter value as JSON: numpy scalars as Python numbers."""
    return value.item() if hasattr(value, "item") else value


def _benchmark(name: str):
    """A registered benchmark or a space file; else the stored space of imported datasets of that name."""
    from bat.core.benchmark import load_benchmark
    from bat.core.errors import UnknownNameError

    try:
        return load_benchmark(name)
    except UnknownNameError:
        from bat.registry import resolve_benchmark  # reads the datasets' metadata: only when needed

        return resolve_benchmark(name)


def register(app: typer.Typer) -> None:
    app.command("space")(space)
