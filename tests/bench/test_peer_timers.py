"""The PyTorch loops' timers of `bench finetune` and `bench qa` start after every import, as
ours' do: no TensorFlow module is first imported between a PyTorch loop's first and last
clock reading (each loop runs in a fresh interpreter, where nothing is imported yet)."""

import json
import subprocess
import sys

import pytest

WORDS = "ada lovelace wrote the first program in london who where did paris went to".split()

CHILD = r"""
import json, sys, time
from electra_tf.bench import finetune, question_answering as qa

readings = []

class Clock:  # time, whose perf_counter also notes which modules are imported by then
    def __getattr__(self, name):
        return getattr(time, name)

    def perf_counter(self):
        readings.append(set(sys.modules))
        return time.perf_counter()

arm, encoder, train = sys.argv[1:4]
assert "tensorflow" not in sys.modules, "a bench module imported TensorFlow itself"
if arm == "finetune":
    finetune.time = Clock()
    rows = [(" ".join(sys.argv[4:][n % 5 :][:6]), n % 2) for n in range(12)]
    options = finetune.FinetuneBenchOptions(impl="pytorch", batch=4, epochs=1, seq=16,
                                            batches="ours")
    finetune._train_pytorch(options, encoder, {"train": rows, "dev": rows[:4], "test": []},
                            ["neg", "pos"])
else:
    qa.time = Clock()
    options = qa.QaBenchOptions(impl="pytorch", init=encoder, train=train, dev=train, batch=4,
                                epochs=1, seq=32, doc_stride=8, max_query_length=6)
    qa._train_pytorch(options)
late = sorted(readings[-1] - readings[0])
print(json.dumps({"readings": len(readings), "late": late}))
"""


@pytest.fixture()
def encoder(tmp_path):
    """A tiny random BERT both loops read (config.json, weights, vocab.txt)."""
    hf = pytest.importorskip("transformers")
    import torch

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "?", "."]
    config = hf.BertConfig(
        vocab_size=len(vocabulary), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    torch.manual_seed(0)
    folder = tmp_path / "encoder"
    hf.BertModel(config).save_pretrained(str(folder))
    (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in vocabulary))
    return str(folder)


@pytest.mark.parametrize("arm", ["finetune", "qa"])
def test_the_pytorch_loop_imports_nothing_of_tensorflow_inside_its_timer(arm, encoder, tmp_path):
    context = " ".join(WORDS * 2)
    data = [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": f"q{n}", "question": f"who {w}?", "is_impossible": False,
         "answers": [{"text": w, "answer_start": context.index(w)}]}
        for n, w in enumerate(WORDS)]}]}]  # fmt: skip
    train = tmp_path / "train.json"
    train.write_text(json.dumps({"version": "v2.0", "data": data}))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, arm, encoder, str(train), *WORDS],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["readings"] >= 2  # the timer's start and end were read through the clock
    late = [m for m in report["late"] if m.split(".")[0] in ("tensorflow", "tensorflow_text",
                                                               "keras", "electra_tf")]  # fmt: skip
    assert late == []
