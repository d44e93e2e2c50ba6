"""Run one configuration of a benchmark once on the GPU, for a profiler (ncu) watching this process.

``python -m bat.run.profile_one --benchmark B --config JSON [--size NAME|JSON] [--seed S]``
compiles the configuration with NVRTC (through CuPy), loads it and makes its
launches once through ``LiveSession.launch_once``: no warm-up and no timing
loop (ncu replays the kernel it profiles itself), no verification. The
command line is built by bat.toolchain.profiler. Exit status 0 when the
launches ran; 1 with the reason on stderr when the configuration did not
compile or launch, or BAT refused (no CuPy, unknown benchmark, bad JSON).
"""

from __future__ import annotations

import sys

import typer

from bat.core.errors import BackendError, BatError
from bat.core.limits import loads


def parse_object(text: str, option: str) -> dict:
    """A JSON object given on the command line (``--config``, ``--size``)."""
    try:
        value = loads(text, option)
    except ValueError as exc:  # malformed, or over a limit of bat.core.limits
        raise BackendError(f"{option} is not JSON within the limits: {exc}") from None
    if not isinstance(value, dict):
        raise BackendError(f"{option} must be a JSON object, got {text!r}")
    return value


def profile_one(
    benchmark: str = typer.Option(..., "--benchmark", help="Benchmark name or space file."),
    config: str = typer.Option(..., "--config", help="The configuration as a JSON object."),
    size: str = typer.Option("published", "--size", help="Problem size: a name or a JSON object."),
    seed: int = typer.Option(0, "--seed", help="Seed of the inputs (bat.backends.live.session.INPUT_SEED)."),
) -> None:
    """Compile one configuration and launch it once, for ncu."""
    try:
        values = parse_object(config, "--config")
        from bat.backends.live.session import LiveSession
        from bat.core.benchmark import load_benchmark
        from bat.toolchain.compiling import cupy_compiler

        bench = load_benchmark(benchmark)
        problem_size = bench.size(parse_object(size, "--size") if size.startswith("{") else size)
        session = LiveSession(bench, problem_size, repeats=1, seed=seed)
        try:
            compiled = cupy_compiler(session.job(0, values))
            if not compiled.ok:
                raise BackendError(f"{benchmark} {values} does not compile: {compiled.first_error()}")
            session.launch_once(values, compiled)
        finally:
            session.close()
    except BatError as exc:
        print(f"bat.run.profile_one: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None


if __name__ == "__main__":
    typer.run(profile_one)
