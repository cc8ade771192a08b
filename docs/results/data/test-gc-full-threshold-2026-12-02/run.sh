#!/bin/bash
# A/B of the full-collection threshold 100 in tests/conftest.py (RULE.md): the same five files,
# order and measures as ../test-gc-freeze-2026-12-02/run.sh, with B = /work/expA at e61160d and
# OUT=/work/logs/gcthreshold. It ran (committed in 93c0a65) as a copy of that script with those
# two names changed, from docs/results/data/test-gc-threshold-2026-12-02/, a folder an earlier
# probe of the same day had used; moved here after the runs and that probe's run.sh restored.
# Check out e61160d in /work/expA first.
OUT=${OUT:-/work/logs/gcthreshold} exec bash "$(dirname "$0")/../test-gc-freeze-2026-12-02/run.sh"
