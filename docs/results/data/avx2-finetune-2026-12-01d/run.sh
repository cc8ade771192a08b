#!/usr/bin/env bash
# RULE.md: ../avx2-finetune-2026-12-01b/run.sh again (after the last epoch's checkpoint went), its records here.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE" bash "$HERE/../avx2-finetune-2026-12-01b/run.sh"
