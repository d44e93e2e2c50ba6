"""``bat space``: the sizes of one benchmark's search space, or of all of them."""

from __future__ import annotations

import typer
from rich.table import Table


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
        console.print(f"{b.name}: {b.space.count_valid():,} valid configurations under its own constraints, "
                      f"{other.count_valid():,} under the {variant} rules ({info['note']}); published "
                      f"constrained count {b.published.get('constrained', '-'):,}", highlight=False)
        for c in other.constraints:
            console.print(f"{variant} constraint: {c.expr}", highlight=False)
        return

    names = [name] if name else benchmark_names()
    t = Table(title="search spaces")
    for col in ("benchmark", "parameters", "cardinality", "constrained", "published constrained"):
        t.add_column(col, justify="right" if col != "benchmark" else "left")
    for n in names:
        b = _benchmark(n)
        pub = (b.published or {}).get("constrained")
        t.add_row(b.name, str(len(b.space.names)), f"{b.space.cardinality:,}", f"{b.space.count_valid():,}",
                  f"{pub:,}" if isinstance(pub, int) else "-")
    console.print(t)
    if name:
        b = _benchmark(name)
        p = Table(title=f"{b.name} parameters")
        p.add_column("parameter")
        p.add_column("values")
        for par in b.space.parameters:
            p.add_row(par.name, ", ".join(str(v) for v in par.values))
        console.print(p)
        for c in b.space.constraints:
            console.print(f"constraint: {c.expr}", highlight=False)
        note = b.published.get("note")
        if note:
            console.print(f"published count: {note}", highlight=False)
        for v in b.published.get("variants", {}):
            console.print(f"other rules: bat space {b.name} --variant {v}", highlight=False)


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
