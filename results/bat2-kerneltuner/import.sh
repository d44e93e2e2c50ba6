#!/usr/bin/env bash
# Re-create the twelve datasets of this folder from the published caches.
# Usage: results/bat2-kerneltuner/import.sh [DIR with the .json.gz caches]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-$here/../../../shared/datasets/bat2-kerneltuner}"
for f in "$src"/*.json.gz; do
  stem="$(basename "$f" .json.gz)"          # e.g. gemm_RTX_3090
  gpu="${stem#*_}"                          # RTX_3090
  notes=""
  if [ "$stem" = gemm_RTX_3060_laptop ]; then
    notes="a 10,000-configuration sample of the 17,956 valid ones, as published"
  fi
  python3 -m uv run --frozen bat import "$f" --gpu "$gpu" --out "$here/$stem.parquet" \
    --source "BAT 2.0 brute-force data, AutoTuningAssociation/benchmark_hub@0489a95d5984a3cd5013ec65a0ae5542ae202019 cachefiles/KernelTuner data/$stem.json (DOI 10.5281/zenodo.15364124)" \
    --licence "MIT, Copyright (c) 2025 AutoTuningAssociation" --notes "$notes"
done
