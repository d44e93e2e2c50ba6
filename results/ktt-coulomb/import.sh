#!/usr/bin/env bash
# Re-create coulomb_RTX_2080_Ti.parquet from the published KTT output.
# Usage: results/ktt-coulomb/import.sh [DIR holding coulomb_RTX_2080_Ti.ktt.json.gz]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-$here/../../../shared/datasets/ktt-coulomb}"
python3 -m uv run --frozen bat import "$src/coulomb_RTX_2080_Ti.ktt.json.gz" --benchmark coulomb --gpu RTX_2080_Ti \
  --out "$here/coulomb_RTX_2080_Ti.parquet" \
  --source "KTT 2.1.0 output, HiPerCoRe/KTT commit 38d7ce5b502df92dbcccacc34f9aed26775ebd52, Examples/CoulombSum3d/coulomb_2080_full_search_space.json" \
  --licence "MIT, Copyright (c) 2017-2025 Filip Petrovič, Jiří Filipovič, Jana Hozzová" \
  --notes "every run was timed with profiling on (Nsight Compute counters) and without output validation; compile_ms is NaN (KTT reports compilation only inside its overheads, kept as ktt_*_ms columns)"
