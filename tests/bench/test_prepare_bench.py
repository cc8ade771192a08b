"""`bench prepare`: the reference tokenizer re-implemented faithfully, and the summary's sums."""

import pytest

from electra_tf.bench.full_tokenizer import FullTokenizer
from electra_tf.bench.prepare import summarize
from electra_tf.bench.tokenizer_peers import corpus_sentences, time_tokenizer

TEXT = [
    'The Café\'s owner, M. Dupont, said: "We open at 9 a.m.!" (Mon-Fri).',
    "Naïve résumé façade — ŒUVRE; crème brûlée & co. #1 @home $5.",
    "Unbelievably, the unaffable doorman\u00a0waved\tthem\u200b in\x07 again...",
    "中文 words mix with Latin ones, e.g. 東京 and Kyōto.",
    "A " + "x" * 99 + " word, and hyphen-ated, slash/separated, under_scored text.",
]


def _vocabulary(tmp_path):
    """Words of TEXT as the reference splits them, some only as WordPiece continuations."""
    words = set()
    for line in TEXT:
        words.update(FullTokenizer({"[UNK]": 0})._basic(line))
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    for word in sorted(words):
        if len(word) > 6 and word.isalpha():  # split: first 3 letters, then "##" pieces
            tokens += [word[:3], "##" + word[3:6], "##" + word[6:]]
        elif word not in ("co", "东"):  # two words left out: [UNK]
            tokens.append(word)
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(dict.fromkeys(tokens)) + "\n", encoding="utf-8")
    return path


def test_the_reference_tokenizer_matches_hugging_face_s_bert_tokenizer(tmp_path):
    from tokenizers import BertWordPieceTokenizer

    from electra_tf.bench.full_tokenizer import load_vocabulary

    vocab = _vocabulary(tmp_path)
    ours = FullTokenizer(load_vocabulary(vocab))
    theirs = BertWordPieceTokenizer(str(vocab), lowercase=True)
    for line in TEXT:
        expected = theirs.encode(line, add_special_tokens=False).tokens
        assert ours.tokenize(line) == expected, line
    assert ours.tokenize("unbelievably") == ["unb", "##eli", "##evably"]
    assert ours.tokenize("& co.") == ["&", "[UNK]", "."]
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text("\n".join(TEXT[:2]) + "\n\n  \n" + TEXT[2] + "\n")
    sentences = corpus_sentences(tmp_path / "corpus")
    assert sentences == TEXT[:3]
    hf, full = (time_tokenizer(impl, vocab, sentences) for impl in ("hf", "full"))
    assert hf["tokens"] == full["tokens"] == sum(len(ours.tokenize(s)) for s in sentences)


def test_the_summary_gives_medians_ratios_and_the_projection_by_hand():
    def run(impl, count, rate, **more):
        key = "workers" if impl == "prepare" else "threads"
        return {"impl": impl, key: count, "tokens_per_s": rate, **more}

    megabyte = {"tokens": 200_000, "input_mb": 1.0, "startup_s": 6.0}  # 0.2 tokens a byte
    records = [
        run("prepare", 1, 800_000, round=0, **megabyte),
        run("prepare", 1, 900_000, round=1, **megabyte),
        run("prepare", 1, 700_000, round=2, **megabyte),
        run("prepare", 2, 1_500_000, round=0, **megabyte),
        run("prepare", 2, 1_600_000, round=1, **megabyte),
        run("prepare", 2, 1_400_000, round=2, **megabyte),
        run("hf", 1, 500_000), run("hf", 2, 900_000), run("full", 1, 200_000),
    ]  # fmt: skip
    summary = summarize(records, 2, reader_mb_per_s=100.0)
    assert summary["tokens_per_s"]["prepare_1"] == 800_000
    assert summary["scaling"] == pytest.approx(1_500_000 / 800_000)  # of the medians
    assert summary["paired_scaling"] == pytest.approx(15 / 8)  # rounds: 15/8, 16/9, 2
    assert summary["prepare_1_over_hf_1"] == pytest.approx(1.6)
    assert summary["prepare_2_over_hf_2"] == pytest.approx(1_500_000 / 900_000)
    assert summary["prepare_1_over_full_tokenizer"] == pytest.approx(4.0)
    hours = summary["projected_hours_10gb"]  # 10 GB = 2e9 tokens, plus 6 s to start
    assert hours["1_core"] == round((2e9 / 800_000 + 6) / 3600, 2)
    assert hours["2_cores"] == round((2e9 / 1_500_000 + 6) / 3600, 2)
    # 16 cores at the measured efficiency (1.875 / 2) would be 12 M tokens/s; reading
    # 100 MB/s caps it at 20 M tokens/s, which does not bind.
    assert hours["16_cores"] == round((2e9 / (800_000 * 16 * 1.875 / 2) + 6) / 3600, 2)
    capped = summarize(records, 2, reader_mb_per_s=10.0)  # 2 M tokens/s: it binds
    assert capped["projected_hours_10gb"]["16_cores"] == round((2e9 / 2e6 + 6) / 3600, 2)
