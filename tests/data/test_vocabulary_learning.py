"""Learning a vocabulary: tokenizers' WordPiece trainer (the default) or tensorflow-text's."""

import json
import os
import subprocess
import sys

import pytest

from electra_tf.cli import main
from electra_tf.data.corpus import CorpusError, TextSource
from electra_tf.data.prepare import prepare_corpus
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import (
    SPECIAL_TOKENS,
    VocabularyError,
    learn_vocabulary,
    read_vocabulary,
    special_ids,
    write_vocabulary,
)
from electra_tf.data.vocabulary_learners import train_wordpiece

CORPUS = [
    "The Café in Paris opens early; the baker's bread is warm.",
    "Quick foxes jumped over lazy dogs near the CAFÉ!",
    "The river flows past the old mill, and the heron waits.",
    "東京 has many cafés (and bakers).",
] * 15


def _alphabet(tokens):
    """The single characters right after the special tokens."""
    return [t for t in tokens[5:] if len(t) == 1]


def test_default_learner_puts_specials_then_alphabet_then_pieces(tmp_path):
    tokens = learn_vocabulary(CORPUS, vocabulary_size=120)
    assert tokens[:5] == list(SPECIAL_TOKENS)
    assert special_ids(tokens) == {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4}
    # the normalized corpus's characters, sorted, then each as a "##" piece, as tf-text orders
    alphabet = sorted(set("".join(CORPUS).lower().replace("é", "e")) - {" "})
    n = len(alphabet)
    assert tokens[5 : 5 + n] == alphabet and "東" in alphabet
    assert tokens[5 + n : 5 + 2 * n] == [f"##{c}" for c in alphabet]
    assert len(tokens) == 120 == len(set(tokens))  # merges fill the rest, none twice
    assert {"the", "cafe", "baker", "over"} <= set(tokens)
    tokenizer = ElectraTokenizer(write_vocabulary(tokens, tmp_path / "vocab.txt"))
    assert read_vocabulary(tmp_path / "vocab.txt") == tokens
    ids = tokenizer.tokenize(["The CAFÉS of 東京, quickly!"]).to_list()[0]
    assert tokenizer.unk_id not in ids
    assert tokenizer.detokenize([ids]).numpy()[0].decode() == "the cafes of 東 京 , quickly !"


def test_casing_rules_reach_the_learned_vocabulary():
    uncased = learn_vocabulary(CORPUS, vocabulary_size=120)
    assert all(t == t.lower() for t in uncased[5:]) and "é" not in "".join(uncased)
    cased = learn_vocabulary(CORPUS, vocabulary_size=120, lower_case=False)
    assert {"T", "C", "P", "É", "é", "##É"} <= set(cased)  # accents kept with the case
    cased_stripped = learn_vocabulary(
        CORPUS, vocabulary_size=120, lower_case=False, strip_accents=True
    )
    assert "C" in cased_stripped and "é" not in "".join(cased_stripped)


def test_learning_is_deterministic_across_processes_and_thread_counts():
    """The trainer numbers its pieces in hash-map order unless the alphabet is fixed up front:
    each process (each hash seed) and thread count gives the same tokens."""
    texts = [t.lower() for t in CORPUS] + [f"word{i} piece{i % 7}ing" for i in range(300)]
    here = train_wordpiece([texts], 150, SPECIAL_TOKENS)
    assert here == train_wordpiece([texts], 150, SPECIAL_TOKENS)
    script = (
        "import json, sys\n"
        "from electra_tf.data.vocabulary_learners import train_wordpiece\n"
        "texts = json.loads(sys.stdin.read())\n"
        "print(json.dumps(train_wordpiece([texts], 150, "
        "['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'])))\n"
    )
    for threads in ("1", "2", "2", "4"):
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        run = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert json.loads(run.stdout) == here, threads


def test_the_learner_option_switches_and_is_recorded(tmp_path):
    fast = learn_vocabulary(CORPUS, vocabulary_size=60)
    slow = learn_vocabulary(CORPUS, vocabulary_size=60, learner="tf-text")
    assert fast[:5] == slow[:5] == list(SPECIAL_TOKENS)
    # tf-text: the characters, then its tokens by count, its "##" characters among them
    assert fast[5 + len(_alphabet(fast))] == "##" + _alphabet(fast)[0]
    assert slow[5 + len(_alphabet(slow))] != "##" + _alphabet(slow)[0]
    with pytest.raises(VocabularyError, match="Unknown vocabulary learner 'bpe'"):
        learn_vocabulary(CORPUS, vocabulary_size=60, learner="bpe")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(CORPUS) + "\n")  # a sentence per document
    out = tmp_path / "data"
    options = dict(vocabulary_size=60, sequence_length=16, progress=False)
    prepare_corpus([TextSource([str(corpus)])], out, vocab_learner="tf-text", **options)
    report = json.loads((out / "prepare_report.json").read_text())
    assert report["vocabulary"]["learner"] == "tf-text"
    assert read_vocabulary(out / "vocab.txt") == slow
    with pytest.raises(CorpusError, match="Unknown --vocab-learner 'bpe'"):
        prepare_corpus([TextSource([str(corpus)])], tmp_path / "other", vocab_learner="bpe")
    assert not (tmp_path / "other").exists()


def test_cli_refuses_a_learner_with_a_given_vocabulary(tmp_path, capsys):
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + ["the"], tmp_path / "vocab.txt")
    argv = ["prepare", "--input", str(tmp_path), "--output-dir", str(tmp_path / "out")]
    assert main([*argv, "--vocab-file", str(vocab), "--vocab-learner", "tf-text"]) == 2
    assert "--vocab-learner applies to a learned vocabulary only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*argv, "--vocab-learner", "bpe"])


def test_the_alphabet_keeps_the_most_frequent_characters(monkeypatch):
    """Past MAX_CHARACTERS the rarest characters go (ties by code point) and split words."""
    from electra_tf.data import vocabulary_learners

    monkeypatch.setattr(vocabulary_learners, "MAX_CHARACTERS", 5)
    tokens = train_wordpiece([["aaaa bbb cc d e", "aaab zz xdx"]], 30, ["[PAD]"])
    # counts a 7, b 4, then c d x z 2 each (by code point: z is the one left out), e 1
    assert tokens[:11] == ["[PAD]", "a", "b", "c", "d", "x", "##a", "##b", "##c", "##d", "##x"]
    assert not any("z" in t or "e" in t for t in tokens)
    assert {"aaab", "xdx"} <= set(tokens)


def test_a_prepared_data_folder_gives_its_vocabulary_and_casing(tmp_path, capsys):
    """`--vocab-file DATA` (a folder `prepare` wrote) reuses its vocab.txt and its casing, as
    a held-out split is prepared with the training split's vocabulary; a folder with no
    vocabulary is refused in one sentence that names what to give."""
    from electra_tf.tasks.initialization import vocabulary_of

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(CORPUS) + "\n")
    train = tmp_path / "train"
    options = dict(sequence_length=16, progress=False)
    prepare_corpus([TextSource([str(corpus)])], train, vocabulary_size=60, **options)
    assert vocabulary_of(train) == (str(train / "vocab.txt"), True)
    held = tmp_path / "held"
    argv = ["prepare", "--input", str(corpus), "--output-dir", str(held), "--quiet"]
    assert main([*argv, "--vocab-file", str(train), "--sequence-length", "16"]) == 0
    assert (held / "vocab.txt").read_text() == (train / "vocab.txt").read_text()
    assert json.loads((held / "manifest.json").read_text())["extra"]["lower_case"] is True

    empty = tmp_path / "empty"
    empty.mkdir()
    argv = ["prepare", "--input", str(corpus), "--output-dir", str(tmp_path / "x"), "--quiet"]
    assert main([*argv, "--vocab-file", str(empty)]) == 2
    said = capsys.readouterr().err
    assert f"{empty} holds no vocabulary: give a vocab.txt" in said and "--init" not in said
    assert not (tmp_path / "x").exists()
