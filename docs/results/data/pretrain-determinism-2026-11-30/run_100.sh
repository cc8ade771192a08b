#!/bin/bash
# run_long.sh stopped at step 100 (--max-steps 100); $1 = name
sed "s/--max-steps 150/--max-steps 100/" "$(dirname "$0")/run_long.sh" | bash -s "$@"
