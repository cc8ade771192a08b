"""Makes `keras.saving.load_model` find electra-tf's classes after `import electra_tf` alone.

The classes register themselves with Keras (`register_keras_serializable`) when their
modules are imported, and importing them costs TensorFlow's import time. So
`import electra_tf` registers a stand-in under each class's registered name instead, in
Keras's live table of custom objects (`keras.saving.get_custom_objects()`): at once when
Keras is already imported, else as soon as Keras's own import finishes (a one-shot import
hook; nothing else is imported then, as TensorFlow may be half-imported at that point).
A stand-in's `from_config` imports the real class's module and hands the config on, so
the first `load_model` pays the import and gets the real class; the import registers the
real classes over the stand-ins.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["CLASSES", "install"]

#: Each class registered under "electra_tf>" and the module that defines it.
CLASSES = {
    "ElectraEncoder": "electra_tf.models.encoder",
    "ElectraGenerator": "electra_tf.models.generator",
    "ElectraDiscriminator": "electra_tf.models.discriminator",
    "ElectraPretrainer": "electra_tf.pretraining.pretrainer",
    "ElectraAdamW": "electra_tf.pretraining.optimizer",
    "WarmupLinearDecay": "electra_tf.pretraining.optimizer",
    "ElectraEmbeddings": "electra_tf.layers.embeddings",
    "ReplacedTokenDetectionHead": "electra_tf.layers.heads",
    "TruncatedNormal": "electra_tf.layers.initializers",
    "GlorotUniform": "electra_tf.layers.initializers",
    "ElectraClassifier": "electra_tf.tasks.classifier",
    "ElectraSpanExtractor": "electra_tf.tasks.span_extractor",
    "ElectraTextClassifier": "electra_tf.tasks.text_classifier",
    "ElectraTokenClassifier": "electra_tf.tasks.token_classifier",
    "ElectraQuestionAnswerer": "electra_tf.tasks.question_answerer",
    "ElectraTextClassifierPreprocessor": "electra_tf.tasks.text_classifier_preprocessor",
    "ElectraTokenClassifierPreprocessor": "electra_tf.tasks.token_classifier_preprocessor",
    "ElectraQuestionAnswererPreprocessor": "electra_tf.tasks.question_answerer_preprocessor",
}


def _stand_in(name: str, module: str) -> type:
    """A class whose `from_config` is the real class's (imported on first use)."""

    def from_config(cls, config, *args, **kwargs):
        real = getattr(importlib.import_module(module), name)
        return real.from_config(config, *args, **kwargs)

    def get_config(self):  # never made: Keras only checks that the method exists
        raise TypeError(f"{name} stand-in")

    attributes = {"from_config": classmethod(from_config), "get_config": get_config}
    return type(name, (), {**attributes, "__module__": module, "__doc__": f"{module}.{name}"})


def register(keras_module) -> None:
    """Puts a stand-in under each name no real class holds yet."""
    objects = keras_module.saving.get_custom_objects()
    for name, module in CLASSES.items():
        objects.setdefault(f"electra_tf>{name}", _stand_in(name, module))


def _register_quietly(keras_module) -> None:
    try:
        register(keras_module)
    except Exception:  # noqa: BLE001  (never break a user's `import keras`)
        pass


class _AfterKeras:
    """Runs `register` once Keras's own import has finished, then leaves `sys.meta_path`.

    A meta path finder by its `find_spec` alone (`importlib.abc` costs 15 ms to import). It
    stays until Keras is really imported: TensorFlow asks `importlib.util.find_spec("keras")`
    without importing it, and that spec is never run."""

    def __init__(self):
        self.finding = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "keras" or self.finding:
            return None
        import importlib.util

        self.finding = True  # the other finders' spec, not ours again
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.finding = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            self.remove()
            _register_quietly(module)

        loader.exec_module = exec_module
        return spec

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def install() -> None:
    """Registers the stand-ins now (Keras imported) or after Keras's import."""
    if "keras" in sys.modules:
        _register_quietly(sys.modules["keras"])
    elif not any(isinstance(f, _AfterKeras) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterKeras())
