import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.tokenizer import ElectraTokenizer, normalize_text
from electra_tf.data.vocabulary import (
    SPECIAL_TOKENS,
    VocabularyError,
    learn_vocabulary,
    read_vocabulary,
    special_ids,
    write_vocabulary,
)

WORDS = [
    "the",
    "cafe",
    "naive",
    "resume",
    "is",
    "open",
    "##s",
    "##ed",
    "paris",
    ",",
    ".",
    "!",
    "ca",
    "##fe",
]


@pytest.fixture
def vocab(tmp_path):
    return str(write_vocabulary(list(SPECIAL_TOKENS) + WORDS, tmp_path / "vocab.txt"))


def test_uncased_tokenization_folds_case_and_strips_accents(vocab):
    tok = ElectraTokenizer(vocab)
    ids = tok.tokenize(["The CAFÉ in Paris opens!", "Naïve résumé, opened."]).to_list()
    words = [[tok.vocabulary[i] for i in row] for row in ids]
    assert words == [
        ["the", "cafe", "[UNK]", "paris", "open", "##s", "!"],
        ["naive", "resume", ",", "open", "##ed", "."],
    ]
    text = tok.detokenize(tf.ragged.constant(ids)).numpy().tolist()
    assert text == [b"the cafe [UNK] paris opens !", b"naive resume , opened ."]


def test_round_trip_of_normalized_text(vocab):
    tok = ElectraTokenizer(vocab)
    original = ["Café IS open, Naïve!"]
    ids = tok.tokenize(original)
    again = tok.tokenize(tok.detokenize(ids))
    assert again.to_list() == ids.to_list()


def test_cased_and_accent_options(vocab):
    cased = ElectraTokenizer(vocab, lower_case=False)
    assert cased.strip_accents is False
    assert [cased.vocabulary[i] for i in cased.tokenize(["The cafe"]).to_list()[0]] == [
        "[UNK]",
        "cafe",
    ]
    accents_only = normalize_text(tf.constant(["Ça Résumé"]), lower_case=False, strip_accents=True)
    assert accents_only.numpy().tolist() == [b"Ca Resume"]
    lower_only = normalize_text(tf.constant(["Ça Résumé"]), lower_case=True, strip_accents=False)
    assert lower_only.numpy().tolist() == ["ça résumé".encode()]


def test_special_ids_and_graph_use(vocab):
    tok = ElectraTokenizer(vocab)
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 1, 2, 3, 4)
    ds = tf.data.Dataset.from_tensor_slices(["the cafe", "is open"]).batch(2).map(tok.tokenize)
    assert next(iter(ds)).to_list() == [[5, 6], [9, 10]]


def test_vocabulary_files_are_checked(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    with pytest.raises(VocabularyError, match=r"has no \[MASK\] token"):
        read_vocabulary(path)
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nhello\n")
    with pytest.raises(VocabularyError, match="lists 'hello' twice"):
        read_vocabulary(path)
    with pytest.raises(VocabularyError, match="does not exist"):
        read_vocabulary(tmp_path / "nope.txt")
    bert_order = (
        ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    )
    assert special_ids(bert_order) == {"pad": 0, "unk": 100, "cls": 101, "sep": 102, "mask": 103}


def test_learning_a_vocabulary_from_a_small_corpus(tmp_path):
    corpus = [
        "The quick brown fox jumps over the lazy dog.",
        "The dog sleeps; the fox runs.",
        "Quick foxes jumped over lazy dogs!",
    ] * 20
    tokens = learn_vocabulary(corpus, vocabulary_size=100)
    assert tokens[:5] == list(SPECIAL_TOKENS)
    assert {"the", "fox", "dog", "quick", "."} <= set(tokens)
    assert any(t.startswith("##") for t in tokens) and len(tokens) <= 100
    path = write_vocabulary(tokens, tmp_path / "learned.txt")
    tok = ElectraTokenizer(path)
    ids = tok.tokenize(["The lazy FOXES jumped."]).to_list()[0]
    assert tok.unk_id not in ids
    assert tok.detokenize([ids]).numpy()[0] == b"the lazy foxes jumped ."
    assert np.all(np.array(ids) < len(tokens))


def test_each_tokenizer_reads_its_own_vocabulary_file(tmp_path, monkeypatch):
    # TextFileInitializer names a shared lookup table after str(filename); ours is an Asset
    # whose repr holds a memory address, and a table kept alive elsewhere (a loaded export)
    # was handed to a later tokenizer whose Asset reused that address: a CI run tokenized
    # with all-MiniLM-L6-v2's ids. Equal reprs make that reuse certain here.
    monkeypatch.setattr(tf.saved_model.Asset, "__repr__", lambda self: "<the same Asset>")
    words_a = list(SPECIAL_TOKENS) + ["alpha", "beta"]
    words_b = list(SPECIAL_TOKENS) + ["beta", "gamma", "alpha"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = ElectraTokenizer(write_vocabulary(words_a, tmp_path / "a" / "vocab.txt"))
    second = ElectraTokenizer(write_vocabulary(words_b, tmp_path / "b" / "vocab.txt"))
    assert first.tokenize(["alpha beta"]).to_list() == [[5, 6]]
    assert second.tokenize(["alpha beta"]).to_list() == [[7, 5]]


def test_a_token_list_tokenizes_as_its_file_does(vocab):
    texts = ["The CAFÉ in Paris opens!", "Naïve résumé, opened.", "unknown words"]
    from_file = ElectraTokenizer(vocab).tokenize(texts).to_list()
    from_list = ElectraTokenizer(vocabulary=read_vocabulary(vocab)).tokenize(texts).to_list()
    assert from_list == from_file and from_file[2] == [1, 1]
    with pytest.raises(VocabularyError, match=r"lacks \[MASK\]"):
        ElectraTokenizer(vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the"])
    with pytest.raises(ValueError, match="either vocab_file or vocabulary"):
        ElectraTokenizer(vocab, vocabulary=WORDS)
