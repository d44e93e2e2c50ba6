"""``bat inspect``: static resource use (registers, shared memory, spills) of one configuration."""

from __future__ import annotations

import json
from typing import Any

import typer

from bat.cli.options import MAX_SEED
from bat.cli.output import cell, document, markup, one_line, say


def parse_config(text: str) -> dict[str, object]:
    """A configuration from JSON (``{"MWG": 64, ...}``) or ``NAME=VALUE,NAME=VALUE``, read within the limits of
    every JSON reader (bat.core.limits: depth, digits, finite numbers, no name twice); each value a number, a
    text or a boolean."""
    from bat.core.errors import InputLimitError
    from bat.core.limits import loads

    def value_of(raw: str, where: str) -> object:
        try:
            return loads(raw, where)
        except json.JSONDecodeError:
            return None
        except InputLimitError as exc:
            raise typer.BadParameter(str(exc)) from None

    text = text.strip()
    if text.startswith("{"):
        parsed = value_of(text, "--config")
        if not isinstance(parsed, dict):
            raise typer.BadParameter(f"--config is not a JSON object: {one_line(text)[:80]!r}")
        config: dict[str, object] = parsed
    else:
        config = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, raw = part.partition("=")
            if not sep:
                raise typer.BadParameter(f"--config: {one_line(part)[:80]!r} is not NAME=VALUE")
            name = name.strip()
            if name in config:
                raise typer.BadParameter(f"--config: {one_line(name)[:80]!r} is given twice")
            parsed = value_of(raw, f"--config {one_line(name)[:80]}")
            config[name] = raw.strip() if parsed is None and raw.strip() != "null" else parsed
    for name, value in config.items():
        if value is None or isinstance(value, list | dict):
            raise typer.BadParameter(f"--config: the value of {one_line(name)[:80]!r} is "
                                     f"{'null' if value is None else 'a ' + type(value).__name__}; a value is a "
                                     "number, a text or a boolean")
    return config


def inspect(
    benchmark: str = typer.Option(..., "--benchmark", "-b", help="Benchmark with a CUDA kernel."),
    config: str = typer.Option(None, "--config", "-c", help='JSON object or NAME=VALUE,... (every parameter).'),
    random: bool = typer.Option(False, "--random", help="Inspect a random valid configuration instead."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Seed for --random."),
    arch: str = typer.Option("sm_90", "--arch", help="GPU architecture to compile for."),
    small: bool = typer.Option(False, "--small", help="Use the small problem size."),
) -> None:
    """Compile one configuration with NVRTC (no GPU needed) and show its resource use."""
    import numpy as np
    from rich.table import Table

    from bat.cli.console import console
    from bat.core.benchmark import load_benchmark
    from bat.core.errors import TunerError
    from bat.core.kernel import load_runner
    from bat.toolchain.nvrtc import inspect_config

    if random and config:  # one would be ignored: say so rather than inspect the other
        raise typer.BadParameter("give --config or --random, not both")
    bench = load_benchmark(benchmark)
    space = bench.space
    cfg: dict[str, Any]
    if random:
        cfg = space.config(space.sample_valid(1, np.random.default_rng(seed))[0])
    elif config:
        cfg = parse_config(config)
        missing = [n for n in space.names if n not in cfg]
        unknown = [n for n in cfg if n not in space.names]
        if missing or unknown:
            raise TunerError(f"--config for {bench.name}: missing {missing}, unknown {unknown}")
        idx = space.index(cfg)
        if not space.is_valid(idx[None, :])[0]:
            raise TunerError(f"--config violates a constraint of {bench.name}")
    else:
        raise typer.BadParameter("give --config or --random")
    usage = inspect_config(load_runner(bench), cfg, arch=arch, size=bench.size("small" if small else None).values)
    say("{} {}", bench.name, cfg)
    t = Table(title=markup("{} on {}", usage.kernel, usage.arch))
    t.add_column("resource")
    t.add_column("value", justify="right")
    for name, value in usage.as_columns().items():
        t.add_row(cell(name), cell(value))
    console.print(t)
    document({"benchmark": bench.name, "config": cfg, "kernel": usage.kernel, "arch": usage.arch,
              "resources": usage.as_columns()})


def register(app: typer.Typer) -> None:
    app.command("inspect")(inspect)
