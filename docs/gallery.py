"""Draw one figure of each kind into docs/figures/ from the shipped datasets, for docs/FIGURES.md.

Run from the repository root: ``python docs/gallery.py`` (about two minutes on two cores). The figures are
analyses of recorded data replayed (no timing is taken here); the commands are the ones a user types, with
small budgets, so the page shows what ``bat analyze``, ``bat compare`` and ``bat hypertune`` draw.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bat.cli import main

DOCS = Path(__file__).resolve().parent
#: command -> (figure in its output folder -> name in docs/figures/)
COMMANDS: list[tuple[list[str], dict[str, str]]] = [
    (["analyze", "-b", "convolution_milo", "--iterations", "100", "--repeats", "3", "-o", "{out}"], {
        "figures/convolution_milo_distribution.png": "analyze_distribution.png",
        "figures/speedup.png": "analyze_speedup.png",
        "figures/convolution_milo_convergence_A100.png": "analyze_convergence.png",
        "figures/convolution_milo_centrality.png": "analyze_centrality.png",
        "figures/convolution_milo_importance.png": "analyze_importance.png",
        "figures/convolution_milo_portability.png": "analyze_portability.png",
        "figures/convolution_milo_tuning_impact.png": "analyze_tuning_impact.png"}),
    (["compare", "-t", "reference:random,optuna,reference:genetic", "-b", "pnpoly,gemm",
      "--gpus", "RTX_3090,RTX_3060_laptop", "--budgets", "20,100", "-r", "10", "-o", "{out}"], {
        "plots/overlay.png": "compare_overlay.png",
        "plots/convergence_optuna.png": "compare_convergence_one_tuner.png",
        "plots/score_time.png": "compare_score_time.png",
        "plots/ecdf_evaluations.png": "compare_ecdf_evaluations.png"}),
    (["compare", "--study", "transfer", "-t", "transfer:best,reference:random", "-b", "convolution_milo",
      "--budgets", "20", "-r", "5", "-o", "{out}"], {
        "plots/transfer_matrix.png": "transfer_matrix.png"}),
    (["hypertune", "-t", "reference:genetic", "--params", "population,mutation_rate", "--budget", "40", "-r", "3",
      "--final-repeats", "5", "--settings", "10", "--train", "pnpoly_RTX_3090,pnpoly_RTX_2080_Ti",
      "--heldout", "pnpoly_RTX_Titan", "-o", "{out}"], {
        "figures/settings.png": "hypertune_settings.png",
        "figures/best_vs_defaults.png": "hypertune_best_vs_defaults.png",
        "figures/per_dataset.png": "hypertune_per_dataset.png"}),
]


def draw(target: Path = DOCS / "figures") -> list[Path]:
    """Run every command into a temporary folder and copy its chosen figures to ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (args, figures) in enumerate(COMMANDS):
            out = Path(tmp) / f"run{k}"
            code = main(["--quiet", *(a.replace("{out}", str(out)) for a in args)])
            if code != 0:
                raise SystemExit(f"bat {' '.join(args)}: exit {code}")
            for source, name in figures.items():
                written.append(Path(shutil.copyfile(out / source, target / name)))
    return written


if __name__ == "__main__":
    for path in draw():
        print(path.relative_to(DOCS.parent))
