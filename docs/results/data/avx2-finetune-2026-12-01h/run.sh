#!/usr/bin/env bash
# RULE.md: stage e's three workloads with 43a7f51's cuts; run from /tmp, DATA set, main installed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE" bash "$HERE/../avx2-finetune-2026-12-01b/run.sh"
