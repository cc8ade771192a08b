#!/bin/bash
# run2.sh's fine-tune, killed (SIGKILL) once epoch 1's checkpoint is published, then rerun to resume; $1 = name
rm -rf /tmp/ftdet/$1
cmd="electra-tf finetune --init /tmp/democlone/data/models/all-MiniLM-L6-v2 --task movie_reviews \
  --data /tmp/democlone/data/corpora/movieReviewSnippets_GroundTruth.txt \
  --max-train-examples 2048 --epochs 2 --seed 7 --output-dir /tmp/ftdet/$1"
$cmd > /tmp/ftdet/$1.log 2>&1 &
pid=$!
until ls -d /tmp/ftdet/$1/seeds/seed-7/epoch-0001 >/dev/null 2>&1; do sleep 0.5; done
sleep 5; kill -9 $pid; wait $pid; echo "killed rc=$?"
ls /tmp/ftdet/$1/seeds/seed-7
$cmd > /tmp/ftdet/$1.resume.log 2>&1; echo "$1 resumed rc=$?"
grep -i resum /tmp/ftdet/$1.resume.log
