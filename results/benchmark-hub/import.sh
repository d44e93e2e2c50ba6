#!/usr/bin/env bash
# Re-create the ten datasets of this folder from the FAIR Benchmark Hub's caches, one `bat import`
# per kernel folder (hub layout <kernel>/<GPU>.json.gz: the GPU comes from each file name).
# Usage: results/benchmark-hub/import.sh [DIR holding convolution_milo/ and dedispersion_milo/]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-$here/../../../shared/datasets/benchmark-hub}"
for kernel in convolution_milo dedispersion_milo; do
  python3 -m uv run --frozen bat import "$src/$kernel" --benchmark "$kernel" --out "$here" --force \
    --source "FAIR Benchmark Hub for Auto-Tuning, AutoTuningAssociation/benchmark_hub@8eeb99e7179e6838af95d392ac6c60cebfd8c434 (DOI 10.5281/zenodo.15364124), data of Lurati et al., Euro-Par 2024" \
    --licence "MIT, Copyright (c) 2025 AutoTuningAssociation"
done
