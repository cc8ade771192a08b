"""The PyTorch loops' timers of `bench finetune` and `bench qa` start after every import, as
ours' do: no TensorFlow module is first imported between a PyTorch loop's first and last
clock reading (both loops run in one fresh interpreter, started as the bench's children
are, where nothing is imported yet: the finetune loop first, then QA's, whose preprocessor
imports more than that loop's batching), and Python's collector is on at every reading.
And each loop steps with the fused AdamW that transformers' Trainer uses by default."""

import json
import subprocess
import sys

WORDS = "ada lovelace wrote the first program in london who where did paris went to".split()

CHILD = r"""
import gc, json, sys, time
from electra_tf.startup import start_process

start_process()  # as the bench's children start (`python -m electra_tf.bench`: `command`)
from electra_tf.bench import finetune, question_answering as qa

readings, collector = [], []

class Clock:  # time, whose perf_counter also notes the modules imported and the collector
    def __getattr__(self, name):
        return getattr(time, name)

    def perf_counter(self):
        readings.append(set(sys.modules))
        collector.append(gc.isenabled())
        return time.perf_counter()

encoder, train = sys.argv[1:3]
assert "tensorflow" not in sys.modules, "a bench module imported TensorFlow itself"
import torch

fused = []  # each AdamW a loop makes: whether it runs the fused kernel

class Noted(torch.optim.AdamW):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        fused.append(bool(self.defaults.get("fused")))

torch.optim.AdamW = Noted
late = {}
finetune.time = Clock()  # the finetune loop first: its TensorFlow import is the earlier one
rows = [(" ".join(sys.argv[3:][n % 5 :][:6]), n % 2) for n in range(12)]
options = finetune.FinetuneBenchOptions(impl="pytorch", batch=4, epochs=1, seq=16, batches="ours")
finetune._train_pytorch(options, encoder, {"train": rows, "dev": rows[:4], "test": []},
                        ["neg", "pos"])
assert len(readings) >= 2, "the finetune loop's timer was not read through the clock"
late["finetune"], readings[:] = sorted(readings[-1] - readings[0]), []
qa.time = Clock()  # then QA's: what its preprocessor imports beyond that
options = qa.QaBenchOptions(impl="pytorch", init=encoder, train=train, dev=train, batch=4,
                            epochs=1, seq=32, doc_stride=8, max_query_length=6)
qa._train_pytorch(options)
assert len(readings) >= 2, "the QA loop's timer was not read through the clock"
late["qa"] = sorted(readings[-1] - readings[0])
print(json.dumps({"late": late, "fused": fused, "collector": collector}))
"""


def test_the_pytorch_loops_import_nothing_of_tensorflow_inside_their_timers(encoder, tmp_path):
    context = " ".join(WORDS * 2)
    data = [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": f"q{n}", "question": f"who {w}?", "is_impossible": False,
         "answers": [{"text": w, "answer_start": context.index(w)}]}
        for n, w in enumerate(WORDS)]}]}]  # fmt: skip
    train = tmp_path / "train.json"
    train.write_text(json.dumps({"version": "v2.0", "data": data}))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, encoder, str(train), *WORDS],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    late = printed["late"]
    assert sorted(late) == ["finetune", "qa"]
    # Each loop's optimizer is transformers' Trainer default, torch's fused AdamW.
    assert printed["fused"] == [True, True]
    # Python's collector runs in the timed loops, as in ours: the start-up pause
    # (electra_tf.startup) ended when the frameworks' import did, before any timer.
    assert len(printed["collector"]) >= 4 and all(printed["collector"])
    ours = ("tensorflow", "tensorflow_text", "keras", "keras_hub", "electra_tf")
    for arm, modules in late.items():
        assert [m for m in modules if m.split(".")[0] in ours] == [], arm
