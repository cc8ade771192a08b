#!/bin/bash
# one short fine-tune of the demo's setting; $1 = name
D=/tmp/democlone/data
rm -rf /tmp/ftdet/$1
electra-tf finetune --init $D/models/all-MiniLM-L6-v2 --task movie_reviews --data $D/corpora/movieReviewSnippets_GroundTruth.txt \
  --max-train-examples 2048 --epochs 2 --seed 7 --output-dir /tmp/ftdet/$1 > /tmp/ftdet/$1.log 2>&1
echo "$1 rc=$?"
