"""`electra-tf predict` off the happy path (issue 56, cases 13 and 14): one output line per
input row, an error line for each empty one, in every file layout and from every model
format; a batch size below 1 is one sentence (exit 2), never a traceback or no output."""

import json

import keras
import pytest

from electra_tf.cli import main
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder

TOKENS = [*SPECIAL_TOKENS, "good", "bad", "food", "where", "ada", "lives", "in", "rome"]


def _encoder():
    return ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=1, hidden_dim=8, embedding_dim=8, num_heads=2,
        intermediate_dim=16, max_sequence_length=16,
    )  # fmt: skip


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A classifier as a run folder, a SavedModel export and a LiteRT export (untrained: the
    rows, not the answers, are under test), and a question answerer's run folder."""
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.litert import export_litert
    from electra_tf.tasks.model_folder import write_model_folder
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )
    from electra_tf.tasks.text_classifier import ElectraTextClassifier
    from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

    folder = tmp_path_factory.mktemp("models")
    keras.utils.set_random_seed(0)
    preprocessor = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=16)
    model = ElectraTextClassifier(_encoder(), ["no", "yes"], preprocessor=preprocessor)
    model.build()
    info = {"kind": "classification", "labels": ["no", "yes"], "pair": False, "task": "t",
            "columns": {"text": "text"}}  # fmt: skip
    write_model_folder(model, folder / "run" / "model", info)
    export_finetuned(model, info, folder / "serving", model_name="t")
    export_litert(model, info, folder / "litert", model_name="t")
    reader = ElectraQuestionAnswerer(_encoder(), ElectraQuestionAnswererPreprocessor(TOKENS, 16))
    reader.build()
    qa = {"kind": "question_answering", "pair": True, "task": "qa",
          "columns": {"question": "question", "context": "context"}}  # fmt: skip
    write_model_folder(reader, folder / "qa" / "model", qa)
    return {name: folder / name for name in ("run", "serving", "litert", "qa")}


TEXTS = ["good food", "", "   ", "", "bad food"]  # the second "" a blank line in a table


def _write(path, several: bool):
    """TEXTS as a CSV, TSV or JSONL file of one column (text) or several (text, n)."""
    if path.suffix == ".jsonl":
        rows = [{"text": t, **({"n": i} if several else {})} for i, t in enumerate(TEXTS)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
        return 1  # JSON lines count from 1
    sep = "\t" if path.suffix == ".tsv" else ","
    lines = ["text" + (f"{sep}n" if several else "")]
    for i, text in enumerate(TEXTS):
        cell = '""' if text == "" and i == 1 else text  # "" quoted, and a truly blank line
        lines.append(cell + (f"{sep}{i}" if several else ""))
    path.write_text("\n".join(lines) + "\n\n")  # blank lines at the end are no rows
    return 2  # the header is line 1


@pytest.mark.parametrize("model", ["run", "serving", "litert"])
def test_every_input_row_gets_one_output_line_empty_ones_an_error(models, model, tmp_path,
                                                                    capsys):  # fmt: skip
    # Case 13: a one-column CSV with "" and "   " rows gave no line for them ("examples": 4
    # for 6 rows), from a run folder and a LiteRT export alike.
    for suffix in (".csv", ".tsv", ".jsonl"):
        for several in (False, True):
            data = tmp_path / f"in-{several}{suffix}"
            first = _write(data, several)
            out = tmp_path / "out.jsonl"
            argv = ["predict", "--model", str(models[model]), "--input", str(data),
                    "--output", str(out)]  # fmt: skip
            assert main(argv) == 0, (suffix, several)
            summary = json.loads(capsys.readouterr().out)
            where = (model, suffix, several)
            assert summary["examples"] == 2 and summary["not_predicted"] == 3, where
            rows = [json.loads(line) for line in out.open()]
            assert [r["row"] for r in rows] == [first + i for i in range(len(TEXTS))], where
            for row, text in zip(rows, TEXTS, strict=True):
                if text.strip():
                    assert row["text"] == text and row["label"] in ("no", "yes"), where
                else:
                    assert row == {"row": row["row"], "error": "empty_text"}, where


@pytest.mark.parametrize(
    "model,size", [("run", "0"), ("qa", "-3"), ("litert", "-1"), ("serving", "-3")]
)
def test_a_batch_size_below_one_is_one_sentence(models, model, size, capsys):
    # Case 14: 0 was a traceback, -3 on a question answerer exited 0 with no output at all,
    # -1 on a LiteRT export was a traceback.
    texts = (["--question", "where", "--context", "ada lives in rome"] if model == "qa"
             else ["good food"])  # fmt: skip
    code = main(["predict", "--model", str(models[model]), "--batch-size", size, *texts])
    said = capsys.readouterr()
    assert code == 2 and said.out == "", said.out
    lines = said.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in said.err
    assert f"--batch-size must be a whole number of at least 1 (got {size})" in lines[0]


def test_predict_rows_refuses_a_bad_batch_size_at_the_call(models):
    from electra_tf.config import ConfigError
    from electra_tf.finetuning.predict import open_predictor, predict_rows

    predictor = open_predictor(models["run"])
    with pytest.raises(ConfigError, match="at least 1"):
        predict_rows(predictor, ["good"], batch_size=-1)
    rows = list(predict_rows(predictor, ["good", "bad", "food"], batch_size=2, progress=False))
    assert [r["text"] for r in rows] == ["good", "bad", "food"]
