#!/usr/bin/env bash
# RULE.md: stage e's three workloads with the fixed-cost cuts; run from /tmp, DATA set.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE" bash "$HERE/../avx2-finetune-2026-12-01b/run.sh"
