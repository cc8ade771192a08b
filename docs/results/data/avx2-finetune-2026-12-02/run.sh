#!/usr/bin/env bash
# RULE.md: issue 57.2 on AVX2 with the PyTorch peers on fused AdamW; stage e's commands unchanged.
# From /tmp with this package installed (venv active), DATA the download cache (absolute), QA files
# by ../qa-2026-11-27/make_data.py then ../qa-speed-2026-11-27/make_subset.py into $QA.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
echo "$(date -u +%FT%TZ) start" > "$HERE/when.log"
OUT="$HERE" bash "$HERE/../avx2-finetune-2026-12-01b/run.sh"
echo "$(date -u +%FT%TZ) end" >> "$HERE/when.log"
