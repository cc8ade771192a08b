"""Bad input at the newer doors (issue 32, item 8): one sentence, or a warning, never a traceback.

`evaluate --probe` on empty, one-class, tiny and NaN-rated files; Hugging Face folders
with a cut-short config.json or model.safetensors, no vocab.txt or no recorded casing
(`import --hugging-face` and `pretrain --init`); the serving signatures' checks. The
README's "What survives what" cites these tests.
"""

import json
import re

import numpy as np
import pytest
import tensorflow as tf
from helpers import tiny_config, write_packed

from electra_tf.cli import main
from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.probe import probe_task

WORDS = ["good", "great", "fine", "bad", "awful", "poor", "the", "movie", "was", "plot"]


def _vocab(folder):
    return write_vocabulary(list(SPECIAL_TOKENS) + WORDS, folder / "vocab.txt")


def _movie_file(path, ratings):
    rng = np.random.default_rng(0)
    lines = []
    for i, rating in enumerate(ratings):
        word = WORDS[:3] if float(rating) > 0 else WORDS[3:6]
        text = " ".join(["the", "movie", "was", str(rng.choice(word))])
        lines.append(f"{i}\t{rating}\t{text}")
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    return path


def _probe(tmp_path, ratings, lines=None):
    movie = _movie_file(tmp_path / "movies.txt", ratings)
    return probe_task(
        "movie_reviews",
        "scratch:tiny",
        random_seeds=1,
        vocab_file=str(_vocab(tmp_path)),
        movie_file=movie,
        log=(lines.append if lines is not None else None),
    )


# evaluate --probe ----------------------------------------------------------------------------


def test_a_probe_of_an_empty_file_is_one_sentence(tmp_path, capsys):
    (tmp_path / "movies.txt").write_text("")
    code = main(
        ["evaluate", "--probe", "movie_reviews", "--checkpoint", "scratch:tiny",
         "--vocab-file", str(_vocab(tmp_path)), "--movie-file", str(tmp_path / "movies.txt")]
    )  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "Traceback" not in "\n".join(err)
    assert err[-1] == (
        "electra-tf evaluate: The probe of movie_reviews needs examples in its train split, "
        "and it has none; check the task's file (empty, or every row skipped)."
    )


def test_a_probe_of_one_class_is_one_sentence_after_saying_what_it_skipped(tmp_path):
    lines = []
    with pytest.raises(ConfigError, match="two classes in its train split, and all 3. examples"):
        _probe(tmp_path, [1.5] * 40 + [0.0] * 3, lines)
    assert lines == [
        "[probe] movie_reviews: 43 rows read, 3 skipped: rows_without_a_class (rating 0)"
    ]


def test_a_probe_skips_nan_ratings_and_warns_on_tiny_splits(tmp_path):
    ratings = [1.0, -1.0] * 15 + ["nan", "-nan", "inf"]  # 30 rated rows, 3 not finite
    lines = []
    report = _probe(tmp_path, ratings, lines)
    assert report["rows_read"] == 30 and report["rows_skipped"] == {"non_finite_rating": 3}
    assert lines[0] == "[probe] movie_reviews: 30 rows read, 3 skipped: non_finite_rating"
    # 30 examples split 24/3/3: dev and test accuracies move in steps of 1/3.
    assert report["warnings"] == [
        f"the {name} split has only 3 examples, so its accuracy moves in steps of 0.3333 and "
        "cannot tell encoders apart (use at least 100)"
        for name in ("dev", "test")
    ]
    assert sum(line.startswith("[probe] warning:") for line in lines) == 2


# Hugging Face folders ----------------------------------------------------------------------


def _hugging_face_folder(tmp_path):
    from electra_tf.serving.hugging_face import export_hugging_face

    model = ElectraPretrainer(tiny_config())
    return export_hugging_face(model, tmp_path / "hf")["discriminator"]


@pytest.mark.parametrize("damage", ["config.json", "model.safetensors"])
def test_a_cut_short_hugging_face_folder_is_one_sentence_at_import_and_init(
    tmp_path, capsys, damage
):
    folder = _hugging_face_folder(tmp_path)
    path = folder / damage
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert main(["import", "--hugging-face", str(folder), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"electra-tf import: {path} ")
    assert err[-1].endswith("download it again.") and "Traceback" not in "\n".join(err)
    data = write_packed(tmp_path / "data", n=16, seq=16)
    code = main(["pretrain", "--init", str(folder), "--data", data, "--output-dir",
                 str(tmp_path / "run2"), "--steps", "1", "--verbose", "0"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith(f"electra-tf pretrain: {path} ")


def test_a_hugging_face_folder_without_vocab_txt_is_refused_at_import(tmp_path, capsys):
    folder = _hugging_face_folder(tmp_path)
    assert main(["import", "--hugging-face", str(folder), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"electra-tf import: {folder} has no vocab.txt; pass --vocab-file (the vocabulary the "
        "weights were trained with), so the imported checkpoint records one."
    )
    assert not (tmp_path / "run").exists()


def test_the_casing_of_a_hugging_face_folder_is_read_or_the_assumption_said(tmp_path):
    from electra_tf.serving.hugging_face import hugging_face_vocabulary

    folder = _hugging_face_folder(tmp_path)
    _vocab(folder)
    lines = []
    assert hugging_face_vocabulary(folder, log=lines.append) == (str(folder / "vocab.txt"), True)
    assert len(lines) == 1 and "records no casing" in lines[0] and "--no-lower-case" in lines[0]
    (folder / "tokenizer.json").write_text(json.dumps({"normalizer": {"lowercase": False}}))
    assert hugging_face_vocabulary(folder, log=lines.append)[1] is False
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    assert hugging_face_vocabulary(folder, log=lines.append)[1] is True  # it comes first
    assert len(lines) == 1
    (folder / "tokenizer_config.json").write_text('{"do_lower_')
    with pytest.raises(ConfigError, match="tokenizer_config.json is not readable JSON"):
        hugging_face_vocabulary(folder)


# The serving signatures ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    import tensorflow_text  # noqa: F401  (the text signatures' ops)

    from electra_tf.serving.saved_model import export_for_serving

    folder = tmp_path_factory.mktemp("served")
    model = ElectraPretrainer(tiny_config())
    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + [f"w{i}" for i in range(59)], folder / "vocab.txt"
    )
    exported = export_for_serving(model, folder / "out", vocab_file=vocab, warmup=False)
    return model, tf.saved_model.load(str(exported))


@pytest.mark.parametrize(
    "mask, message",
    [
        ([[1, 2, 1, 1]], "input_mask must hold 0 (padding) or 1 (a token)"),
        ([[1, 1, -1, 1]], "input_mask must hold 0 (padding) or 1 (a token)"),
        ([[1, 1, 1, 1], [0, 0, 0, 0]], "input_mask has an example with no token (all 0)"),
    ],
)
def test_the_id_signature_rejects_masks_that_are_not_0_or_1_or_all_zero(served, mask, message):
    _, loaded = served
    mask = tf.constant(mask, tf.int32)
    ids = tf.where(mask > 0, 7, 0) + tf.constant([[2, 0, 0, 0]], tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
        loaded.signatures["serving_default"](
            input_word_ids=ids, input_mask=mask, input_type_ids=tf.zeros_like(ids)
        )


def test_the_id_signature_still_serves_good_inputs_as_keras_computes_them(served):
    model, loaded = served
    ids = tf.constant([[2, 7, 8, 3], [2, 9, 3, 0]], tf.int32)
    mask = tf.constant([[1, 1, 1, 1], [1, 1, 1, 0]], tf.int32)
    outputs = loaded.signatures["serving_default"](
        input_word_ids=ids, input_mask=mask, input_type_ids=tf.zeros_like(ids)
    )
    inputs = {"token_ids": ids, "padding_mask": mask, "segment_ids": tf.zeros_like(ids)}
    expected = model.discriminator(inputs, training=False).numpy()
    np.testing.assert_allclose(outputs["rtd_logits"].numpy(), expected, atol=1e-5)


def test_the_text_signatures_reject_a_2d_text_tensor(served):
    _, loaded = served
    text = loaded.signatures["serve_text"]
    assert text(text=tf.constant(["w1 w2", "w3"]))["input_word_ids"].shape[0] == 2
    for bad in (tf.constant([["w1 w2"], ["w3"]]), tf.constant([["w1", "w2"], ["w3", "w4"]])):
        with pytest.raises(tf.errors.InvalidArgumentError, match="text must be a 1-D batch"):
            text(text=bad)
    pair = loaded.signatures["serve_text_pair"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="text_a must be a 1-D batch"):
        pair(text_a=tf.constant([["w1"], ["w2"]]), text_b=tf.constant([["w3"], ["w4"]]))
