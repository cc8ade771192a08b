#!/bin/bash
# Issue 39's cases, before and after. Needs root for the tmpfs mounts (a real full and a
# real read-only folder); the tests mount one where they can, else simulate it.
# Setup (once): /tmp/dur39/corpus.txt = `cut -f3 movieReviewSnippets_GroundTruth.txt | head -5000`;
#   electra-tf prepare --input corpus.txt --output-dir /tmp/dur39/data --vocab-size 2000 --sequence-length 32
#   old tree: git archive 10e518c (main when issue 39 was filed) into /tmp/dur39/old
# Usage: cases.sh old|new
TREE=$1
. /work/main/.venv/bin/activate
export TF_CPP_MIN_LOG_LEVEL=3 CUDA_VISIBLE_DEVICES=
if [ "$TREE" = old ]; then export PYTHONPATH=/tmp/dur39/old; else export PYTHONPATH=/work/main; fi
W=/tmp/dur39/demo/$TREE; rm -rf $W; mkdir -p $W; cd $W
DATA=/tmp/dur39/data
E="python -m electra_tf.cli"
S="--set model.num_layers=1 --set model.hidden_dim=32 --set model.embedding_dim=16 --set model.intermediate_dim=64 --batch-size 8 --verbose 0 --set train.log_every=1"
last() { grep -v "cuInit\|^WARNING\|^I0000\|^W0000\|oneDNN\|cpu_feature_guard\|To enable the following\|^\s*$" "$1" | tail -${2:-1} | cut -c1-600; }
say() { echo; echo "=== $*"; }
full() { mkdir -p $1; mount -t tmpfs -o size=${2:-1m} tmpfs $1; dd if=/dev/zero of=$1/fill bs=64k count=1000 2>/dev/null; }
left() { (cd $1 && find . -path ./fill -prune -o -printf '%p ' ); }
python - <<'PY'
import random
rows = [l.rstrip("\n").split("\t") for l in open("/work/main/data/corpora/movieReviewSnippets_GroundTruth.txt")][:400]
with open("train.tsv", "w") as f:
    f.write("text\tlabel\n")
    for _, r, t in rows[:300]: f.write(f"{t}\t{int(float(r) > 0.5)}\n")
with open("dev.tsv", "w") as f:
    f.write("text\tlabel\n")
    for _, r, t in rows[300:]: f.write(f"{t}\t{int(float(r) > 0.5)}\n")
with open("gappy.tsv", "w") as f:
    f.write("text\tlabel\n")
    for i, (_, r, t) in enumerate(rows[:21]): f.write(("" if i == 7 else t) + f"\t{int(float(r) > 0.5)}\n")
open("long.tsv", "w").write("text\n" + " ".join(t for _, _, t in rows) + "\n")
PY

say "0. a good 10-step run to fine-tune and resume from"
$E pretrain --data $DATA --output-dir good --steps 10 --set train.warmup_steps=0 --set train.checkpoint_every=5 $S >/dev/null 2>e0.txt; echo "exit $?"

say "1. skip mode, fresh, lr 1e6, checkpoint_every 2, keep 3"
$E pretrain --data $DATA --output-dir run1 --steps 40 --set train.warmup_steps=0 --set train.learning_rate=1e6 --set train.on_nonfinite=skip --set train.checkpoint_every=2 $S >/dev/null 2>e1.txt; echo "exit $?"; last e1.txt
echo "checkpoints: $(ls run1/checkpoints | tr '\n' ' ')"
$E export --checkpoint run1 --format hub --out x1 >/dev/null 2>e1x.txt; echo "export exit $?"; last e1x.txt

say "2. slow divergence: resume the good run with lr 100 (no non-finite step), checkpoint_every 2"
cp -r good run2
$E pretrain --data $DATA --output-dir run2 --steps 60 --set train.warmup_steps=0 --set train.learning_rate=100 --set train.checkpoint_every=2 $S >/dev/null 2>e2.txt; echo "exit $?"; last e2.txt
echo "checkpoints: $(ls run2/checkpoints | tr '\n' ' ')"
grep -h suspect run2/checkpoints/*/state.json | head -2
$E export --checkpoint run2 --format hub --out x2 >/dev/null 2>e2x.txt; echo "export exit $? (read $(python -c "from electra_tf.pretraining.checkpoint import find_checkpoint; print(find_checkpoint('run2').name)" 2>/dev/null))"; last e2x.txt

say "3. finetune --output-dir on a read-only folder, then on a full one"
mkdir -p ro; mount -t tmpfs -o size=1m,ro tmpfs ro
$E finetune --init good --train train.tsv --dev dev.tsv --epochs 1 --output-dir ro/run >/dev/null 2>e3a.txt; echo "exit $?"; last e3a.txt
full small 3m
$E finetune --init good --train train.tsv --dev dev.tsv --epochs 1 --output-dir small/run >/dev/null 2>e3b.txt; echo "exit $?"; last e3b.txt; echo "left: $(left small)"
rm -f small/fill
$E finetune --init good --train train.tsv --dev dev.tsv --epochs 1 --output-dir ft >/dev/null 2>e3c.txt; echo "a run on a disk with room: exit $?"

say "4. predict --output on a read-only, then a full folder"
$E predict --model ft --input dev.tsv --output ro/p.jsonl >/dev/null 2>e4a.txt; echo "exit $?"; last e4a.txt
dd if=/dev/zero of=small/fill bs=64k count=1000 2>/dev/null
$E predict --model ft --input dev.tsv --output small/p.jsonl >/dev/null 2>e4b.txt; echo "exit $?"; last e4b.txt; echo "left: $(left small)"

say "5. export onto a full disk: hugging-face, keras-hub, serving"
for F in hugging-face keras-hub serving; do
  $E export --checkpoint good --format $F --out small/$F >/dev/null 2>e5$F.txt; echo "$F exit $?"; last e5$F.txt
done
echo "left: $(left small)"
umount small; umount ro

say "5b. a disk with 120 KB left (the run's files start, its weights do not fit): export and finetune"
mkdir -p tight; mount -t tmpfs -o size=1m tmpfs tight; dd if=/dev/zero of=tight/fill bs=1k count=904 2>/dev/null; df -k tight | tail -1 | awk '{print "free KB:", $4}'
for F in keras-hub hugging-face serving; do
  $E export --checkpoint good --format $F --out tight/$F >/dev/null 2>e5b$F.txt; echo "$F exit $?"; last e5b$F.txt
done
$E finetune --init good --train train.tsv --dev dev.tsv --epochs 1 --output-dir tight/run >/dev/null 2>e5bft.txt; echo "finetune exit $?"; last e5bft.txt
echo "left: $(left tight)"
umount tight

say "6. predict --input with an empty text among 21 rows"
$E predict --model ft --input gappy.tsv --output p6.jsonl >/dev/null 2>e6.txt; echo "exit $?; lines out: $(wc -l < p6.jsonl)"; last e6.txt; sed -n 8p p6.jsonl | cut -c1-200

say "7. a run started with relative paths, exported from another directory"
mkdir -p rel elsewhere; cp -r $DATA rel/data; (cd rel && $E pretrain --data data --output-dir run --steps 2 --set train.warmup_steps=0 $S >/dev/null 2>../e7a.txt); echo "run exit $?"
grep -o '"vocab_file": "[^"]*"' rel/run/config.json
(cd elsewhere && $E export --checkpoint ../rel/run --format hub --out x >/dev/null 2>../e7b.txt); echo "export from elsewhere exit $?"; last e7b.txt

say "8. --init an empty folder; a 5 MB text predicted"
mkdir -p empty; $E finetune --init empty --train train.tsv --dev dev.tsv --output-dir r8 >/dev/null 2>e8a.txt; echo "exit $?"; last e8a.txt
$E predict --model ft --input long.tsv >o8b.txt 2>e8b.txt; echo "exit $?"; last e8b.txt; tail -1 o8b.txt | cut -c1-300

say "9. the kept model folder and the export"
du -sh ft/model | cut -f1; ls -la ft/model | awk '{print $5, $9}' | grep -v "^ *$" | tail -4
