import os, sys, tempfile
import tensorflow as tf, tensorflow_text
from electra_tf.config import load_recipe
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving.saved_model import export_for_serving
out = sys.argv[1]; layout = sys.argv[2]; seq=128
config = load_recipe("small").override(f"data.sequence_length={seq}","data.pad_id=0","data.unk_id=1","data.cls_id=2","data.sep_id=3","data.mask_id=4")
model = ElectraPretrainer(config)
os.makedirs(out, exist_ok=True)
vocab = write_vocabulary(list(SPECIAL_TOKENS)+[f"w{i}" for i in range(config.model.vocabulary_size-5)], os.path.join(out,"vocab.txt"))
print(export_for_serving(model, out, vocab_file=vocab, warmup=False, seq_length=seq, model_name="m", kernel_layout=layout))
