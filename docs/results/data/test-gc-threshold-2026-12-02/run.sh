#!/bin/bash
cd /work/base && . /work/main/.venv/bin/activate
FILES="tests/finetuning/test_engine.py tests/finetuning/test_task_models.py tests/finetuning/test_keras_api.py tests/serving/test_task_export.py"
for r in 1 2; do for m in default thresh; do
  [ $r = 2 ] && [ $m = default ] && continue
  echo "$(date -u +%T) $r $m start" >> /work/logs/gcprobe/when.log
  GCMODE=$m CPULOG=/work/logs/gcprobe/cpu-$r-$m.tsv PYTHONPATH=/work/base:/work/logs/gcprobe /usr/bin/time -f "%e wall %U user %S sys" -o /work/logs/gcprobe/time-$r-$m.txt pytest -q -n 2 --dist loadfile -p no:cacheprovider -p cpuplugin -p gcplugin $FILES > /work/logs/gcprobe/out-$r-$m.txt 2>&1
done; done
r=2; m=default; echo "$(date -u +%T) $r $m start" >> /work/logs/gcprobe/when.log
GCMODE=$m CPULOG=/work/logs/gcprobe/cpu-$r-$m.tsv PYTHONPATH=/work/base:/work/logs/gcprobe /usr/bin/time -f "%e wall %U user %S sys" -o /work/logs/gcprobe/time-$r-$m.txt pytest -q -n 2 --dist loadfile -p no:cacheprovider -p cpuplugin -p gcplugin $FILES > /work/logs/gcprobe/out-$r-$m.txt 2>&1
echo "$(date -u +%T) done" >> /work/logs/gcprobe/when.log
