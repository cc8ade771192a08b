"""Writes every serving artifact of one pre-training checkpoint and checks each one.

    python export/release.py --checkpoint runs/demo --out releases/demo

Thin over `electra_tf.serving`: the same functions `electra-tf export` runs,
one folder per format, then each artifact is loaded back the way its
consumers load it and compared with the Keras discriminator on a few
sentences (maximum absolute difference printed; the id-based exports must
agree within 1e-5):

- `serving/<name>/<version>/`: TF Serving layout (`serving_default`,
  `serve_text`, `serve_text_pair`, warm-up requests), via `tf.saved_model.load`;
- `hub/encoder`, `hub/preprocessor`: the TF-Hub-style pair, via `tf.saved_model.load`;
- `keras_hub/`: a keras-hub `ElectraBackbone` preset, via
  `keras_hub.models.ElectraBackbone.from_preset` (tanh-approximate GELU, so
  it differs slightly by design; see the README).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a run or step-N folder")
    parser.add_argument("--out", required=True, help="release folder to write")
    parser.add_argument("--model-name", default="electra", help="TF Serving model name")
    parser.add_argument("--version", type=int, default=1, help="TF Serving version")
    parser.add_argument("--seq-length", type=int, default=128, help="text signatures' length")
    parser.add_argument("--vocab-file", help="vocabulary (default: the one the run's config names)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    import keras_hub
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the text signatures' ops)

    from electra_tf.pretraining.checkpoint import load_pretrainer
    from electra_tf.serving.hub import export_hub
    from electra_tf.serving.keras_hub_preset import write_keras_hub_preset
    from electra_tf.serving.saved_model import export_for_serving

    model = load_pretrainer(args.checkpoint)
    vocab = args.vocab_file or model.config.data.vocab_file
    if not vocab:
        print(
            f"{args.checkpoint}: its config names no vocabulary file; give --vocab-file.",
            file=sys.stderr,
        )
        return 2
    out = Path(args.out)
    serving = export_for_serving(
        model,
        out / "serving",
        vocab_file=vocab,
        model_name=args.model_name,
        version=args.version,
        seq_length=args.seq_length,
    )
    hub = export_hub(model, out / "hub", vocab_file=vocab, seq_length=args.seq_length)
    preset = write_keras_hub_preset(model, out / "keras_hub", vocab_file=vocab)

    sentences = tf.constant(["The markets rallied today.", "A new film opens this week."])
    encoder_dir, preprocessor_dir = hub
    preprocessor = tf.saved_model.load(str(preprocessor_dir))
    ids = {k: tf.cast(v, tf.int32) for k, v in preprocessor(sentences).items()}
    ours = model.discriminator.encoder(
        {
            "token_ids": ids["input_word_ids"],
            "padding_mask": ids["input_mask"],
            "segment_ids": ids["input_type_ids"],
        },
        training=False,
    ).numpy()
    checks = {}
    loaded = tf.saved_model.load(str(serving))
    served = loaded.signatures["serving_default"](**ids)["sequence_output"].numpy()
    checks["serving"] = float(np.abs(served - ours).max())
    encoder = tf.saved_model.load(str(encoder_dir))
    checks["hub_encoder"] = float(np.abs(encoder(ids)["sequence_output"].numpy() - ours).max())
    backbone = keras_hub.models.ElectraBackbone.from_preset(str(preset))
    theirs = backbone(
        {
            "token_ids": ids["input_word_ids"],
            "padding_mask": ids["input_mask"],
            "segment_ids": ids["input_type_ids"],
        }
    )["sequence_output"]
    checks["keras_hub_tanh_gelu"] = float(np.abs(np.asarray(theirs) - ours).max())
    report = {
        "serving": str(serving),
        "hub": [str(encoder_dir), str(preprocessor_dir)],
        "keras_hub": str(preset),
        "max_abs_difference_vs_keras": checks,
    }
    print(json.dumps(report, indent=2))
    exact = ("serving", "hub_encoder")
    return 0 if all(checks[name] <= 1e-5 for name in exact) else 1


if __name__ == "__main__":
    sys.exit(main())
