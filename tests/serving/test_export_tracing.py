"""Each export traces each of its signatures once.

`tf.saved_model.save` traces a module's functions again in its own context (the variable
policy is part of the cache key), so signatures given as concrete functions traced before the
save were traced twice: a third of a small model's export time.
"""

import collections
import functools

from helpers import tiny_config

from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving import saved_model
from electra_tf.tasks import export
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor


def _count_calls(monkeypatch, cls, names):
    """Counts the calls of `cls`'s Python methods `names` (each call is one trace)."""
    calls = collections.Counter()

    def counted(name, method):
        @functools.wraps(method)  # keeps the signature tf.function binds its inputs with
        def wrapper(self, *args, **kwargs):
            calls[name] += 1
            return method(self, *args, **kwargs)

        return wrapper

    for name in names:
        monkeypatch.setattr(cls, name, counted(name, getattr(cls, name)))
    return calls


def test_a_fine_tuned_export_traces_each_signature_once(monkeypatch, tmp_path):
    calls = _count_calls(
        monkeypatch, export.TaskServingModule, ["_serve_text", "_serve_ids", "_serve_examples"]
    )
    tokens = [*SPECIAL_TOKENS, "good", "bad"]
    encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=1, hidden_dim=8,
                             embedding_dim=8, num_heads=2, intermediate_dim=16,
                             max_sequence_length=16)  # fmt: skip
    preprocessor = ElectraTextClassifierPreprocessor(tokens, sequence_length=16)
    model = ElectraTextClassifier(encoder, ["no", "yes"], preprocessor=preprocessor)
    model.build()
    folder = export.export_finetuned(model, {"kind": "classification"}, tmp_path, warmup=False)
    assert (folder / "saved_model.pb").exists()
    # serve_examples and serving_default reach _serve_ids from their own traces.
    assert dict(calls) == {"_serve_text": 1, "_serve_ids": 2, "_serve_examples": 1}


def test_the_encoder_export_traces_each_signature_once(monkeypatch, tmp_path):
    methods = ["_serve", "_serve_text", "_serve_text_pair"]
    calls = _count_calls(monkeypatch, saved_model.ServingModule, methods)
    vocab = write_vocabulary([*SPECIAL_TOKENS, *(f"w{i}" for i in range(59))], tmp_path / "v.txt")
    model = ElectraPretrainer(tiny_config())
    folder = saved_model.export_for_serving(model, tmp_path / "out", vocab_file=vocab, warmup=False)
    assert (folder / "saved_model.pb").exists()
    assert dict(calls) == dict.fromkeys(methods, 1)
