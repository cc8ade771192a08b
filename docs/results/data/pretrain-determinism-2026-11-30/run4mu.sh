#!/bin/bash
# run4m.sh with untied embeddings (model.weight_tying=none); $1 = name
sed "s/weight_tying=embeddings/weight_tying=none/" "$(dirname "$0")/run4m.sh" | bash -s "$@"
