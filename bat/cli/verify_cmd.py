"""``bat verify``: run configurations of a kernel on the CPU under sanitizers and check them.

The first line says what every line after it is: correctness only, never a timing. Each
configuration gets its status, its largest error as a fraction of the tolerance and the
seconds this machine spent (NVRTC gate, host build, emulated run); at the emulation size, the
problem size each configuration ran at (bat.backends.emulated.edges: grown to two blocks with
a partial last tile in every dimension the kernel tiles) and, where that cannot be, why. The
exit status is 3 when any configuration a GPU would run is not ok (those a GPU refuses are
counted apart).
``--source`` checks another file in the kernel's place: a broken variant, or the HIP twin
(bat.backends.emulated.hip; a HIP name the layer lacks is an error before anything runs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bat.cli.options import MAX_SECONDS, MAX_SEED, MAX_VERIFY_RANDOM, positive_finite

if TYPE_CHECKING:
    from bat.backends.emulated.edges import EdgeSessions
    from bat.backends.emulated.selection import Selected
from bat.cli.output import EXIT_FOUND, block, document, progress, say


def verify(
    benchmark: str = typer.Option(..., "--benchmark", "-b", help="Benchmark with a CUDA kernel (name or space file)."),
    config: str = typer.Option(None, "--config", "-c", help="JSON object or NAME=VALUE,... (every parameter)."),
    first: bool = typer.Option(False, "--first", help="The first valid configuration."),
    random: int = typer.Option(0, "--random", min=0, max=MAX_VERIFY_RANDOM,
                        help="This many valid configurations drawn uniformly (all of them when the space has fewer)."),
    ci: bool = typer.Option(False, "--ci", help="The configurations CI checks: first, extremes, every code path."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Seed for --random."),
    size: str = typer.Option("emulation", "--size",
                             help="Problem size: emulation, small, published, or a JSON object."),
    sanitizer: str = typer.Option("address", "--sanitizer",
                                  help="address (AddressSanitizer + UBSan), thread (ThreadSanitizer) or none."),
    source: Path = typer.Option(None, "--source", exists=True, dir_okay=False,
                                help="A kernel source to check instead of the benchmark's own (CUDA, or HIP: "
                                     "a .hip file or one including hip/hip_runtime.h)."),
    gate: bool = typer.Option(True, "--gate/--no-gate", help="Run only what NVRTC accepts for sm_90."),
    edges: bool = typer.Option(True, "--edges/--no-edges",
                               help="At the emulation size, grow the size per configuration to two blocks with a "
                                    "partial last tile in every dimension the kernel tiles."),
    block_timeout: float = typer.Option(60.0, "--block-timeout", min=1.0, max=MAX_SECONDS, callback=positive_finite,
                                        help="Seconds a block may take before it counts as a deadlock."),
) -> None:
    """Check configurations of a kernel on the CPU (no GPU needed): correctness only, never timings."""

    from bat.backends.emulated import CORRECTNESS_ONLY
    from bat.backends.emulated.edges import EdgeSessions
    from bat.backends.emulated.selection import Selected, ci_selection, wider
    from bat.cli.inspect_cmd import parse_config
    from bat.core.benchmark import load_benchmark
    from bat.core.errors import TunerError
    from bat.core.limits import MAX_SOURCE_BYTES, read_text
    from bat.run.profile_one import parse_object

    text = read_text(source, MAX_SOURCE_BYTES) if source else None  # a FIFO or /dev/zero: refused from its stat
    bench = load_benchmark(benchmark)
    problem_size = bench.size(parse_object(size, "--size") if size.strip().startswith("{") else size)
    chosen: list[Selected] = []
    if config:
        cfg = parse_config(config)
        if missing := [n for n in bench.space.names if n not in cfg]:
            raise TunerError(f"--config for {bench.name}: missing {missing}")
        if unknown := [n for n in cfg if n not in bench.space.names]:
            raise TunerError(f"--config for {bench.name}: unknown {unknown}")
        if not bench.space.is_valid(bench.space.index(cfg)[None, :])[0]:
            raise TunerError(f"--config violates a constraint of {bench.name}")
        chosen.append(Selected(cfg, "--config"))
    if first:
        chosen.append(Selected(bench.space.config(bench.space.unrank_valid([0])[0]), "first valid configuration"))
    session = EdgeSessions(bench, problem_size, grow=edges and problem_size.name == "emulation", sanitizer=sanitizer,
                           use_gate=gate, block_timeout_s=block_timeout)
    if ci:
        chosen += ci_selection(bench, problem_size, accept=session.gpu_accepts)
    if random:
        chosen += wider(bench, random, seed)
    if not chosen:
        raise typer.BadParameter("give --config, --first, --random N or --ci")
    # a HIP name the layer lacks: exit 2
    is_hip = session.check_source(text, source.name) if source and text is not None else False
    described = session.describe()
    say("[bold]{}[/]: {}", CORRECTNESS_ONLY, described)
    if source:
        say("source: {}{}", source.name, " (HIP, run through the emulated HIP layer; gated by NVRTC for sm_90 "
            "through the same layer: what an Nvidia GPU would accept for this code)" if is_hip else "")
    failed, refused, checked_list = _check_all(session, bench.name, chosen, text, source)
    session.close()
    say("{} of {} configurations ok{}", len(chosen) - failed - refused, len(chosen),
        f"; {refused} not run: a GPU would refuse them" if refused else "")
    document({"correctness_only": True, "session": described, "configurations": checked_list,
              "passed": len(chosen) - failed - refused, "failed": failed, "refused": refused})
    if failed:
        raise typer.Exit(EXIT_FOUND)


def _check_all(session: EdgeSessions, name: str, chosen: list[Selected], text: str | None,
               source: Path | None) -> tuple[int, int, list[dict]]:
    """Verify each chosen configuration, printing as it goes; (failed, refused, their records)."""
    failed = refused = 0
    checked_list = []
    with progress(f"verify {name}", len(chosen)) as moved:
        for n, item in enumerate(chosen, 1):
            say("[{}/{}] {}: {}", n, len(chosen), item.why, json.dumps(item.config))
            edge, checked = session.verify(item.config, source=text, source_name=source.name if source else None)
            status = checked.result.status.value
            refused += checked.refused
            failed += not checked.ok and not checked.refused
            ratio = "" if checked.error_ratio is None else f"; largest error {checked.error_ratio:.3g} of the tolerance"
            if session.grow:
                say("    {}", edge.describe())
            say("    [" + ("green" if checked.ok else "red") + "]{}[/]{}; this machine spent {:.1f} s in NVRTC, "
                "{:.1f} s building, {:.1f} s emulating", status, ratio, checked.gate_s, checked.build_s, checked.run_s)
            if checked.result.message:
                block(checked.result.message)
            checked_list.append({"why": item.why, "config": item.config, "status": status, "ok": bool(checked.ok),
                                 "refused": bool(checked.refused), "error_ratio": checked.error_ratio,
                                 "message": checked.result.message or None})
            moved(n, len(chosen))
    return failed, refused, checked_list


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
