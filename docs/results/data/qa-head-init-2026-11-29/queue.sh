#!/bin/bash
# ./queue.sh "h:1 hn:1 hn:2 ..." : one run at a time, skipping finished ones.
cd /tmp/qa-hn
for job in $1; do
  arm=${job%%:*}; s=${job##*:}
  [ -f out/${arm}_s$s/results.json ] && continue
  echo "$(date -u +%H:%M:%S) start $arm s$s" >> queue.log
  ./run.sh $arm $s || echo "$(date -u +%H:%M:%S) FAILED $arm s$s" >> queue.log
  echo "$(date -u +%H:%M:%S) end $arm s$s $(tail -1 out/${arm}_s$s.log)" >> queue.log
done
