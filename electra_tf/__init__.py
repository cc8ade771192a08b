"""electra-tf: ELECTRA pre-training, fine-tuning and serving on TensorFlow 2 / Keras 3.

The public names load lazily, so `import electra_tf` (and the CLI's `--help`)
does not pay TensorFlow's import time until a model is used; `keras.saving.load_model`
finds every electra-tf class after `import electra_tf` alone (`electra_tf._keras_names`).
"""

from __future__ import annotations

import importlib

from electra_tf import _keras_names

__version__ = "0.1.0"

_LAZY = {
    "ElectraConfig": "electra_tf.config",
    "ConfigError": "electra_tf.config",
    "load_recipe": "electra_tf.config",
    "ElectraEncoder": "electra_tf.models.encoder",
    "ElectraGenerator": "electra_tf.models.generator",
    "ElectraDiscriminator": "electra_tf.models.discriminator",
    "ElectraPretrainer": "electra_tf.pretraining.pretrainer",
    "ElectraAdamW": "electra_tf.pretraining.optimizer",
    "WarmupLinearDecay": "electra_tf.pretraining.optimizer",
    "ElectraTextClassifier": "electra_tf.tasks.text_classifier",
    "ElectraTokenClassifier": "electra_tf.tasks.token_classifier",
    "ElectraQuestionAnswerer": "electra_tf.tasks.question_answerer",
    "ElectraTextClassifierPreprocessor": "electra_tf.tasks.text_classifier_preprocessor",
    "ElectraTokenClassifierPreprocessor": "electra_tf.tasks.token_classifier_preprocessor",
    "ElectraQuestionAnswererPreprocessor": "electra_tf.tasks.question_answerer_preprocessor",
}

__all__ = sorted(_LAZY) + ["__version__"]

_keras_names.install()


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'electra_tf' has no attribute {name!r}")
