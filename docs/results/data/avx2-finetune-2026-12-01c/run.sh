#!/usr/bin/env bash
# RULE.md: ../avx2-finetune-2026-12-01b/run.sh again, its records written here.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE" bash "$HERE/../avx2-finetune-2026-12-01b/run.sh"
