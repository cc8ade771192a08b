#!/usr/bin/env bash
# RULE.md: ../avx2-finetune-2026-12-01b/run.sh with the PyTorch timers mended, then the import probe.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE" bash "$HERE/../avx2-finetune-2026-12-01b/run.sh"
bash "$HERE/import_probe.sh" > "$HERE/import_probe.jsonl"
