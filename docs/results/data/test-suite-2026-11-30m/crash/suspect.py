"""Loop: a suspect action, then the multi-label Keras fit on a ragged dataset; malloc_trim each round."""
import ctypes, os, sys, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3"); os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
sys.path[:0] = ["/work/main/tests", "/work/main/tests/finetuning", "/work/main/tests/pretraining"]
import conftest  # the suite's two logical CPUs
import keras, numpy as np, tensorflow as tf
from helpers import write_packed
from test_keras_api import _classifier
from test_resume import SMALL
from electra_tf.cli import main
libc = ctypes.CDLL("libc.so.6")
what, rounds = sys.argv[1], int(sys.argv[2])
work = tempfile.mkdtemp()
data = str(write_packed(os.path.join(work, "data"), n=32, seq=16))

def pretrain(run, precision):
    settings = [*SMALL, "model.hidden_dim=8", "model.intermediate_dim=16", "data.sequence_length=16"]
    flags = [a for s in settings for a in ("--set", s)]
    cmd = ["pretrain", "--recipe", "tiny", "--data", data, "--output-dir", run, "--batch-size", "4",
           "--steps", "4", "--verbose", "0", *flags, "--precision", precision]
    assert main(cmd) == 0

def torch_forward():
    import torch, transformers as hf
    cfg = hf.ElectraConfig(vocab_size=64, embedding_size=16, hidden_size=16, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    model = hf.ElectraForPreTraining(cfg).eval()
    ids = torch.randint(0, 64, (8, 16))
    with torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids)).logits.numpy()

def multi_label():
    keras.utils.set_random_seed(1)
    texts = ["good movie", "bad plot", "the plot was good", "awful"]
    names = [["pos"], ["neg", "plot"], ["pos", "plot"], []]
    model = _classifier(labels=["neg", "pos", "plot"], kind="multi_label")
    ragged = tf.data.Dataset.from_tensor_slices((texts, tf.ragged.constant(names))).batch(2)
    model.fit(ragged, epochs=1, verbose=0)

for r in range(rounds):
    if what == "f16": pretrain(os.path.join(work, f"r{r}"), "mixed_float16")
    elif what == "f32": pretrain(os.path.join(work, f"r{r}"), "float32")
    elif what == "torch": torch_forward()
    elif what == "none": pass
    libc.malloc_trim(0)
    multi_label()
    libc.malloc_trim(0)
    print("round", r, flush=True)
print("ok")
