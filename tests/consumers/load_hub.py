"""TF-Hub-style consumers in a fresh process that never imports electra_tf.

1. `tf.saved_model.load` of the encoder (without tensorflow_text) and the preprocessor;
2. Keras 3 `keras.layers.TFSMLayer` on the encoder;
3. `tensorflow_hub.KerasLayer(trainable=True)` in a tf_keras classifier that fine-tunes.

Usage: python load_hub.py EXPORT_DIR INPUTS.npz OUTPUTS.npz
"""

import os
import sys

import numpy as np
import tensorflow as tf

folder, inputs_path, outputs_path = sys.argv[1:4]
inputs = np.load(inputs_path)
features = {k: tf.constant(inputs[k]) for k in ("input_word_ids", "input_mask", "input_type_ids")}
results = {}

# 1. The encoder loads and runs before tensorflow_text is imported: it holds no text ops.
encoder = tf.saved_model.load(f"{folder}/encoder")
out = encoder(features, training=False)
results["sequence_output"] = out["sequence_output"].numpy()
results["pooled_output"] = out["pooled_output"].numpy()
results["num_encoder_outputs"] = np.array(len(out["encoder_outputs"]))
results["num_trainable"] = np.array(len(encoder.trainable_variables))
mlm = encoder.mlm(
    {**features, "masked_lm_positions": tf.constant(inputs["masked_lm_positions"])}, training=False
)
results["mlm_logits"] = mlm["mlm_logits"].numpy()
results["signature"] = encoder.signatures["serving_default"](**features)["pooled_output"].numpy()

import tensorflow_text  # noqa: E402,F401 - needed by the preprocessor

preprocessor = tf.saved_model.load(f"{folder}/preprocessor")
texts = tf.constant([str(t) for t in inputs["texts"]])
packed = preprocessor(texts)
results["pre_ids"] = packed["input_word_ids"].numpy()
tokens = preprocessor.tokenize(texts)
results["tokenize_rank"] = np.array(tokens.shape.rank)
pair = preprocessor.bert_pack_inputs([tokens, tokens], seq_length=tf.constant(16))
results["pair_ids"] = pair["input_word_ids"].numpy()
results["pair_types"] = pair["input_type_ids"].numpy()

# 2. Keras 3: TFSMLayer passes one dict positional argument.
import keras  # noqa: E402

layer = keras.layers.TFSMLayer(f"{folder}/encoder", call_endpoint="serve")
results["tfsm_pooled"] = np.asarray(layer(features)["pooled_output"])

# 3. tf_keras + tensorflow_hub: fine-tune the encoder in a classifier.
import tensorflow_hub as hub  # noqa: E402
import tf_keras  # noqa: E402

tf_keras.utils.set_random_seed(int(os.environ.get("CONSUMER_SEED", "0")))
hub_encoder = hub.KerasLayer(f"{folder}/encoder", trainable=True)
word_ids = tf_keras.layers.Input(shape=(None,), dtype=tf.int32, name="input_word_ids")
mask = tf_keras.layers.Input(shape=(None,), dtype=tf.int32, name="input_mask")
types = tf_keras.layers.Input(shape=(None,), dtype=tf.int32, name="input_type_ids")
pooled = hub_encoder({"input_word_ids": word_ids, "input_mask": mask, "input_type_ids": types})[
    "pooled_output"
]
logits = tf_keras.layers.Dense(2)(pooled)
classifier = tf_keras.Model([word_ids, mask, types], logits)
classifier.compile(
    optimizer=tf_keras.optimizers.Adam(1e-3),
    loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True),
)
before = [v.numpy().copy() for v in hub_encoder.trainable_variables]
labels = inputs["labels"]
train = [inputs["train_ids"], inputs["train_mask"], np.zeros_like(inputs["train_ids"])]
# The training loss without dropout, before and after: fit's per-epoch losses carry
# dropout noise that can hide a small decrease.
results["loss_before"] = np.array(classifier.evaluate(train, labels, verbose=0))
classifier.fit(train, labels, epochs=8, batch_size=8, verbose=0)
results["loss_after"] = np.array(classifier.evaluate(train, labels, verbose=0))
results["encoder_moved"] = np.array(
    sum(not np.allclose(b, v.numpy()) for b, v in zip(before, hub_encoder.trainable_variables))
)
results["hub_trainable"] = np.array(len(hub_encoder.trainable_variables))
assert "electra_tf" not in sys.modules
np.savez(outputs_path, **results)
