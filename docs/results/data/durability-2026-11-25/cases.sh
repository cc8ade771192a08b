#!/bin/bash
# Needs root for its two tmpfs mounts (a full and a read-only folder); the tests need none.
# Data: /tmp/dur/data is `electra-tf prepare --input corpus.txt --output-dir /tmp/dur/data
# --vocab-size 2000 --sequence-length 32`, corpus.txt the first 5,000 movie-review snippets
# (cut -f3 movieReviewSnippets_GroundTruth.txt | head -5000). old: `git archive 4dad0fa`.
# Usage: cases.sh old|new   (old: the tree at 4dad0fa, new: /work/main)
TREE=$1
. /work/main/.venv/bin/activate
if [ "$TREE" = old ]; then export PYTHONPATH=/tmp/dur/old; else export PYTHONPATH=/work/main; fi
W=/tmp/dur/demo/$TREE; rm -rf $W; mkdir -p $W; cd $W
DATA=/tmp/dur/data
E="python -m electra_tf.cli"
S="--set model.num_layers=1 --set model.hidden_dim=32 --set model.embedding_dim=16 --set model.intermediate_dim=64 --set train.warmup_steps=0 --batch-size 8 --verbose 0 --set train.log_every=1"
last() { grep -v "cuInit\|^WARNING\|^I0000\|^W0000\|oneDNN custom\|cpu_feature_guard\|To enable the following" "$1" | tail -${2:-1}; }
say() { echo; echo "=== $*"; }

say "1. skip mode: resume a good run (checkpoints 10/20/30) with lr 1e6, checkpoint_every 2"
$E pretrain --data $DATA --output-dir run1 --steps 30 --set train.checkpoint_every=10 $S >/dev/null 2>e1a.txt; echo "first run exit $?"
$E pretrain --data $DATA --output-dir run1 --steps 60 --set train.learning_rate=1e6 --set train.on_nonfinite=skip --set train.checkpoint_every=2 $S >/dev/null 2>e1b.txt; echo "exit $?"; last e1b.txt
echo "checkpoints: $(ls run1/checkpoints | tr '\n' ' ')"
python -c "
from electra_tf.pretraining.checkpoint import find_checkpoint, load_pretrainer
import numpy as np
m = load_pretrainer('run1'); print('resume/export read', find_checkpoint('run1').name, 'max |weight|', max(float(np.abs(w.numpy()).max()) for w in m.weights))" 2>/dev/null
echo "oneDNN DT_INT64 lines in these two runs: $(cat e1a.txt e1b.txt | grep -c 'DT_INT64')"

say "1b. fresh run, lr 1e6, skip, checkpoint_every 1"
$E pretrain --data $DATA --output-dir run1f --steps 40 --set train.learning_rate=1e6 --set train.on_nonfinite=skip --set train.checkpoint_every=1 $S >/dev/null 2>e1f.txt; echo "exit $?"; last e1f.txt
echo "checkpoints: $(ls run1f/checkpoints | tr '\n' ' ')"

say "2. checkpoints without record.json: truncated data, then resume"
$E pretrain --data $DATA --output-dir run2 --steps 20 --set train.checkpoint_every=10 $S >/dev/null 2>/dev/null
rm run2/checkpoints/*/record.json
D=$(ls run2/checkpoints/step-00000020/ckpt.data-*); python -c "import sys; p=sys.argv[1]; b=open(p,'rb').read(); open(p,'wb').write(b[:len(b)-100])" $D
$E pretrain --data $DATA --output-dir run2 --steps 30 --set train.checkpoint_every=10 $S >o2.txt 2>e2.txt; echo "exit $?"; last e2.txt 2
say "2b. checkpoint without record.json, state.json edited to step 12"
$E pretrain --data $DATA --output-dir run2b --steps 20 --set train.checkpoint_every=10 $S >/dev/null 2>/dev/null
rm run2b/checkpoints/*/record.json; echo '{"step": 12}' > run2b/checkpoints/step-00000020/state.json
$E pretrain --data $DATA --output-dir run2b --steps 30 --set train.checkpoint_every=10 $S >o2b.txt 2>e2b.txt; echo "exit $?"; last e2b.txt 2; grep resumed_from o2b.txt

say "3. power cut right after a run: files whose content was never fsynced (TensorBoard logs aside)"
python - <<'PY' 2>/dev/null
import sys; sys.path.insert(0, "/work/main/tests")
import pytest
from power_cut import PowerCut
from electra_tf.cli import main
mp = pytest.MonkeyPatch()
power = PowerCut(mp, "run3")
S = "--set model.num_layers=1 --set model.hidden_dim=32 --set model.embedding_dim=16 --set model.intermediate_dim=64 --set train.warmup_steps=0 --batch-size 8 --verbose 0".split()
main(["pretrain", "--data", "/tmp/dur/data", "--output-dir", "run3", "--steps", "4", "--set", "train.checkpoint_every=2", *S])
lost = [str(p) for p in power.unsynced_files() if "logs" not in p.parts]
print(len(lost), "unsynced:", ", ".join(p.split("run3/")[1] for p in lost[:6]))
print(len(power.unsynced_renames()), "renames not synced into their folder")
PY

say "5. full output folder at start-up (a 1 MB tmpfs, filled)"
mkdir -p small; mount -t tmpfs -o size=1m tmpfs small; dd if=/dev/zero of=small/fill bs=64k count=100 2>/dev/null
$E pretrain --data $DATA --output-dir small/run --steps 4 $S >/dev/null 2>e5.txt; echo "exit $?"; last e5.txt; echo "left: $(cd small && find . -path ./fill -prune -o -type f -printf '%p (%s bytes) ')"
say "5b. read-only output folder at start-up"
rm -f small/fill; mkdir -p small/ro; mount -o remount,ro small
$E pretrain --data $DATA --output-dir small/ro/run --steps 4 $S >/dev/null 2>e5b.txt; echo "exit $?"; last e5b.txt
say "5c. export into a read-only folder"
$E export --checkpoint run1 --out small/ro/exp --format serving >/dev/null 2>e5c.txt; echo "exit $?"; last e5c.txt
say "5d. export into a full folder"
mount -o remount,rw small; dd if=/dev/zero of=small/fill bs=64k count=100 2>/dev/null
$E export --checkpoint run1 --out small/exp --format serving >/dev/null 2>e5d.txt; echo "exit $?"; last e5d.txt; echo "left: $(cd small && find . -path ./fill -prune -o -print | tr '\n' ' ')"
umount small

say "6. shards of two preparations (vocabulary 64 and 80)"
python -c "
import sys; sys.path.insert(0, '/work/main/tests')
from helpers import write_packed
write_packed('p64', n=32, seq=16, vocab=64); write_packed('p80', n=32, seq=16, vocab=80)
open('v.txt','w').write('\n'.join(['[PAD]','[UNK]','[CLS]','[SEP]','[MASK]'] + [f'w{i}' for i in range(59)]) + '\n')" 2>/dev/null
$E pretrain --data p64/shard-000.tfrecord,p80/shard-000.tfrecord --output-dir run6 --steps 2 $S >/dev/null 2>e6.txt; echo "exit $?"; last e6.txt
$E pretrain --data p64/shard-000.tfrecord,p80/shard-000.tfrecord --vocab-file v.txt --set data.sequence_length=16 --output-dir run6b --steps 2 $S >/dev/null 2>e6b.txt; echo "exit $?"; last e6b.txt

say "7. mixed_float16 with lr 1e6"
$E pretrain --data $DATA --output-dir run7 --steps 40 --precision mixed_float16 --set train.learning_rate=1e6 --set train.checkpoint_every=10 $S >o7.txt 2>e7.txt; echo "exit $?"; last e7.txt; python -c "import json; s=json.load(open('run7/last_run.json')); print('status', s['status'], 'skipped', s['nonfinite_steps_skipped'], 'loss', s['logs'].get('loss'))"

say "8. evaluate --probe on an empty, a one-class, a 30-row file and NaN ratings"
: > empty.txt; python -c "
open('one.txt','w').write(''.join(f'{i}\t1.5\tthe movie was good\n' for i in range(40)))
open('tiny.txt','w').write(''.join(f'{i}\t{1 if i % 2 else -1}\tthe movie was {\"good\" if i % 2 else \"bad\"}\n' for i in range(30)) + ''.join(f'n{i}\tnan\tthe movie was bad\n' for i in range(6)))"
for f in empty one tiny; do $E evaluate --probe movie_reviews --checkpoint scratch:tiny --vocab-file $DATA/vocab.txt --movie-file $f.txt --random-seeds 1 >o8$f.txt 2>e8$f.txt; echo "$f: exit $?"; last e8$f.txt 4; grep -m3 '"dev_accuracy"\|rows_skipped' o8$f.txt; done

say "8b. import --hugging-face / pretrain --init with a cut-short config.json and model.safetensors, and a folder without vocab.txt"
PYTHONPATH=/work/main python -c "
import sys; sys.path.insert(0, '/work/main/tests')
from helpers import tiny_config
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving.hugging_face import export_hugging_face
for name in ('hfc', 'hfw', 'hfv'): export_hugging_face(ElectraPretrainer(tiny_config()), name)" 2>/dev/null
python -c "
for p in ('hfc/discriminator/config.json', 'hfw/discriminator/model.safetensors'):
    b = open(p, 'rb').read(); open(p, 'wb').write(b[: len(b) // 2])"
for f in hfc hfw hfv; do $E import --hugging-face $f/discriminator --out imp$f >/dev/null 2>e8i$f.txt; echo "$f import: exit $?"; last e8i$f.txt; done
python -c "import json; print('hfv recorded vocab_file:', repr(json.load(open('imphfv/config.json'))['data']['vocab_file']))" 2>/dev/null
$E pretrain --init hfc/discriminator --data p64 --output-dir run8 --steps 1 --verbose 0 >/dev/null 2>e8p.txt; echo "pretrain --init hfc: exit $?"; last e8p.txt

say "8c. the serving id signature: mask value 2, an all-zero mask, a 2-D text tensor"
python - <<'PY' 2>/dev/null
import sys; sys.path.insert(0, "/work/main/tests")
import tensorflow as tf, tensorflow_text
from helpers import tiny_config
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving.saved_model import export_for_serving
open("v64.txt", "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(59)]) + "\n")
loaded = tf.saved_model.load(str(export_for_serving(ElectraPretrainer(tiny_config()), "exp8", vocab_file="v64.txt", warmup=False)))
ids = tf.constant([[2, 5, 6, 3]], tf.int32)
for what, mask in (("mask value 2", [[1, 2, 1, 1]]), ("all-zero mask", [[0, 0, 0, 0]])):
    try:
        loaded.signatures["serving_default"](input_word_ids=ids, input_mask=tf.constant(mask), input_type_ids=tf.zeros_like(ids)); print(what, "-> accepted")
    except tf.errors.InvalidArgumentError as e: print(what, "-> refused:", [l for l in e.message.splitlines() if "input_mask" in l][0].strip()[:110])
try:
    out = loaded.signatures["serve_text"](text=tf.constant([["w1 w2"], ["w3"]])); print("2-D text -> accepted, output", out["input_word_ids"].shape)
except tf.errors.InvalidArgumentError as e: print("2-D text -> refused:", [l for l in e.message.splitlines() if "1-D" in l][0].strip()[:110])
PY

say "numerics: cross-entropy of 97 logits at -1e30 (ln 97 = 4.5747), and tokenizing '9 ½ Weeks' with MiniLM's vocabulary"
python - <<'PY' 2>/dev/null
import tensorflow as tf
from electra_tf.ops.losses import sparse_softmax_cross_entropy
from electra_tf.data.tokenizer import ElectraTokenizer
print("loss", float(sparse_softmax_cross_entropy(tf.fill([1, 97], -1e30), tf.constant([0]))[0]))
t = ElectraTokenizer("/work/main/data/models/all-MiniLM-L6-v2/vocab.txt")
print("tokens", t.detokenize(t.tokenize(["9 \u00bd Weeks, co\u00adop"])).numpy()[0].decode())
PY
