"""CPU-seconds of `export_hub` of the tiny pretrainer (tests/helpers.tiny_config, seed 0) in
a fresh process, from the electra_tf on PYTHONPATH; prints one JSON line. argv: label,
tests folder."""

import json
import os
import pathlib
import sys
import tempfile
import time

sys.path[:0] = [sys.argv[2]]
import keras  # noqa: E402
from helpers import VOCAB, tiny_config  # noqa: E402

from electra_tf.pretraining.pretrainer import ElectraPretrainer  # noqa: E402
from electra_tf.serving.hub import export_hub  # noqa: E402

keras.utils.set_random_seed(0)
model = ElectraPretrainer(tiny_config())
folder = pathlib.Path(tempfile.mkdtemp())
words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(5, VOCAB)]
(folder / "vocab.txt").write_text("\n".join(words) + "\n")
start = time.process_time()
export_hub(model, folder / "hub", vocab_file=str(folder / "vocab.txt"))
print(json.dumps({"what": "export_hub", "label": sys.argv[1],
                  "cpu_s": round(time.process_time() - start, 2),
                  "electra_tf": os.environ["PYTHONPATH"]}))
