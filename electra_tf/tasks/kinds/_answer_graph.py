"""Question answering inside the SavedModel: question + context strings -> the answer.

The graph form of `ElectraQuestionAnswererPreprocessor.windows` and
`electra_tf.datasets.squad.answer_details` (the Python path the Keras model and the run
use); tests hold the two equal. Every step is batched over all windows of all questions:

1. the context is split on whitespace into words with their byte offsets
   (tensorflow-text's `WhitespaceTokenizer`, as `squad_example._split_words` splits), each word
   WordPiece-tokenized on its own, and the question cut to `max_query_length` pieces
   (and to `seq_length - 4`, as `squad.query_limit`: a window always holds context);
2. each context becomes windows of `seq_length - question - 3` pieces starting every
   `min(room, doc_stride)` pieces, as `squad.make_features`; a window's token knows its
   piece and word, and whether this window gives it its most context (BERT's rule, in
   integers: `100 * min(left, right) + length`, the first window winning ties);
3. the heads (at most `WINDOW_BATCH` windows per encoder call); per window, the `n_best`
   starts times the `n_best` ends that lie in the context, end >= start, at most
   `max_answer_length` tokens, starting at a token of most context; the best start + end
   over a question's windows (the first window on ties);
4. the words' byte offsets back to characters, the outer punctuation stripped as
   `squad._answer_span` strips it, the score (start times end probability in the window),
   and under SQuAD 2.0 the threshold on the best answerability logit (or, with
   `no_answer="null_score"`, on the best span's score minus the smallest [CLS] null score).
"""

from __future__ import annotations

from types import SimpleNamespace

import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf.datasets import squad

__all__ = ["answer_graph"]

_NONE = -1e30  # the value of "no candidate span"

#: Windows the encoder reads in one call inside the graph; a request with more (a long
#: context, or many questions) runs them in chunks of this many, one after another.
WINDOW_BATCH = 64

# squad._STRIPPED: whitespace and . , ; : ! ? " ' ( ) [ ] { } (ASCII: one byte each).
_OUTER = "[\\t\\n\\x0b\\x0c\\r .,;:!?\"'()\\[\\]{}]"


def _chars_before(text, byte_offsets):
    """The number of characters (code points) of `text` before each byte offset."""
    prefix = tf.strings.substr(text, tf.zeros_like(byte_offsets), byte_offsets, unit="BYTE")
    return tf.strings.length(prefix, unit="UTF8_CHAR")


def _max_context(offset, window_length, in_context, piece, total_pieces):
    """`[W, L]`: whether this window gives the context piece at each position its most
    context (BERT's rule in integers, `100 * min(left, right) + length`; the first window
    wins ties), as `squad._most_context`."""
    windows = tf.shape(piece, out_type=tf.int64)[0]
    left, right = offset, window_length[:, None] - 1 - offset
    most = 100 * tf.minimum(left, right) + window_length[:, None]
    keys = tf.boolean_mask(piece, in_context)
    best_context = tf.math.unsorted_segment_max(
        tf.boolean_mask(most, in_context), keys, total_pieces
    )
    window_index = tf.broadcast_to(tf.range(windows)[:, None], tf.shape(piece))
    achieving = tf.where(
        tf.boolean_mask(most, in_context) == tf.gather(best_context, keys),
        tf.boolean_mask(window_index, in_context),
        windows,
    )
    first_window = tf.math.unsorted_segment_min(achieving, keys, total_pieces)
    return in_context & (tf.gather(first_window, piece) == window_index)


def _window_spans(start_logits, end_logits, in_context, max_context, settings):
    """Per window `[W]`: the best candidate's start + end logit (`_NONE` if none) and its
    start and end positions, among the `n_best` starts times the `n_best` ends that lie in
    the context, in order, at most `max_answer_length` long, starting at a position of most
    context (as `squad.best_spans`)."""
    windows = tf.shape(start_logits, out_type=tf.int64)[0]
    width = tf.shape(start_logits)[1]
    k = tf.minimum(tf.cast(settings.n_best, tf.int32), width)
    start_value, start_at = tf.math.top_k(start_logits, k)
    end_value, end_at = tf.math.top_k(end_logits, k)
    start_at, end_at = tf.cast(start_at, tf.int64), tf.cast(end_at, tf.int64)
    s, e = start_at[:, :, None], end_at[:, None, :]
    valid = (
        tf.gather(max_context, start_at, batch_dims=1)[:, :, None]
        & tf.gather(in_context, end_at, batch_dims=1)[:, None, :]
        & (e >= s)
        & (e - s + 1 <= settings.max_answer_length)
    )
    pair_value = start_value[:, :, None] + end_value[:, None, :]
    # No candidate: a finite floor (segment maxima start from the lowest float, not -inf).
    pair_value = tf.reshape(tf.where(valid, pair_value, _NONE), [windows, -1])
    best_pair = tf.argmax(pair_value, axis=-1)
    best_start = tf.gather(start_at, best_pair // tf.cast(k, tf.int64), batch_dims=1)
    best_end = tf.gather(end_at, best_pair % tf.cast(k, tf.int64), batch_dims=1)
    return tf.reduce_max(pair_value, axis=-1), best_start, best_end


def _joint_window_spans(start_logits, end_logits, starts, in_context, max_context, settings):
    """`_window_spans` for the joint head: each of the `[W, K]` `starts` with the `n_best` ends
    of its own `[W, K, L]` end row (as `squad.best_spans` with `start_candidates`); also the
    chosen start's row `[W]`."""
    windows = tf.shape(start_logits, out_type=tf.int64)[0]
    k = tf.minimum(tf.cast(settings.n_best, tf.int32), tf.shape(end_logits)[2])
    end_value, end_at = tf.math.top_k(end_logits, k)  # [W, K, E]
    starts, end_at = tf.cast(starts, tf.int64), tf.cast(end_at, tf.int64)
    s, e = starts[:, :, None], end_at
    ends_in_context = tf.gather(in_context, tf.reshape(end_at, [windows, -1]), batch_dims=1)
    valid = (
        tf.gather(max_context, starts, batch_dims=1)[:, :, None]
        & tf.reshape(ends_in_context, tf.shape(end_at))
        & (e >= s)
        & (e - s + 1 <= settings.max_answer_length)
    )
    pair_value = tf.gather(start_logits, starts, batch_dims=1)[:, :, None] + end_value
    pair_value = tf.reshape(tf.where(valid, pair_value, _NONE), [windows, -1])
    best_pair = tf.argmax(pair_value, axis=-1)
    row = best_pair // tf.cast(k, tf.int64)
    best_start = tf.gather(starts, row, batch_dims=1)
    best_end = tf.gather(tf.reshape(end_at, [windows, -1]), best_pair, batch_dims=1)
    return tf.reduce_max(pair_value, axis=-1), best_start, best_end, row


def _batched_logits(module, token_ids, padding_mask, segment_ids, size: int):
    """`module.logits` over `[W, L]` windows, at most `size` windows per encoder call (a
    book-length context is thousands of windows: one call would hold all their activations
    at once); the last chunk is filled with copies of the last window and cut off again."""
    windows = tf.shape(token_ids)[0]

    def chunked():
        chunks = (windows + size - 1) // size
        index = tf.minimum(tf.range(chunks * size), windows - 1)
        parts = [
            tf.reshape(tf.gather(x, index), [chunks, size, tf.shape(x)[1]])
            for x in (token_ids, padding_mask, segment_ids)
        ]
        signature = {  # the QA head's outputs (`QuestionAnswering.head`)
            "start_logits": tf.TensorSpec([size, None], tf.float32),
            "answerable_logits": tf.TensorSpec([size], tf.float32),
            "end_logits": tf.TensorSpec([size, None], tf.float32),
        }
        if module.settings.joint_end:  # end logits [W, K, L] of [W, K] start candidates
            signature["end_logits"] = tf.TensorSpec([size, None, None], tf.float32)
            signature["start_candidates"] = tf.TensorSpec([size, None], tf.int32)
        out = tf.map_fn(
            lambda chunk: module.logits(*chunk), tuple(parts), parallel_iterations=1,
            fn_output_signature=signature,
        )  # fmt: skip
        return {
            name: tf.reshape(value, tf.concat([[-1], tf.shape(value)[2:]], 0))[:windows]
            for name, value in out.items()
        }

    return tf.cond(
        windows <= size, lambda: module.logits(token_ids, padding_mask, segment_ids), chunked
    )


def _strip_outer(context, begin, end):
    """Byte offsets `[B]` of `context[begin:end]` with the outer punctuation stripped, kept
    when nothing else is left (as `squad._answer_span`)."""
    span = tf.strings.substr(context, begin, end - begin, unit="BYTE")
    lead = tf.strings.length(span) - tf.strings.length(
        tf.strings.regex_replace(span, f"^{_OUTER}+", "")
    )
    trail = tf.strings.length(span) - tf.strings.length(
        tf.strings.regex_replace(span, f"{_OUTER}+$", "")
    )
    keep = tf.cast(lead + trail, tf.int64) < end - begin
    begin = tf.where(keep, begin + tf.cast(lead, tf.int64), begin)
    end = tf.where(keep, end - tf.cast(trail, tf.int64), end)
    return begin, end


def answer_graph(module, question, context) -> dict:
    """`serving_default`'s outputs for `question` and `context` `[B]` (see the module): its
    four steps in turn, each a function below."""
    batch = tf.shape(question, out_type=tf.int64)[0]
    pieces = _pieces(module, question, context)
    windows = _windows(module, pieces, batch)
    spans = _spans(module, windows, batch)
    return _answers(module, context, pieces, windows, spans)


def _pieces(module, question, context) -> SimpleNamespace:
    """1. Words of the context (byte offsets), their pieces; the question's pieces."""
    settings, tok = module.settings, module.tokenizer
    words, word_begin, word_end = tf_text.WhitespaceTokenizer().tokenize_with_offsets(context)
    word_pieces = tok.tokenize(words.flat_values)  # [total words, (pieces)]
    word_piece_splits = tf.gather(word_pieces.row_splits, words.row_splits)
    limit = squad.query_limit(module.seq_length, settings.max_query_length)
    query = tok.tokenize(question)[:, :limit]
    return SimpleNamespace(
        word_begin=word_begin, word_end=word_end,
        piece_ids=word_pieces.flat_values,
        piece_word=word_pieces.value_rowids(),  # flat word index of each piece
        n_pieces=word_piece_splits[1:] - word_piece_splits[:-1],  # [B]
        piece_base=word_piece_splits[:-1],  # first flat piece of each question
        query=query, query_length=query.row_lengths(),
    )  # fmt: skip


def _windows(module, pieces, batch) -> SimpleNamespace:
    """2. Windows: the encoder's inputs, and each position's piece (flat) where it lies in
    the context, with its most-context flag."""
    settings, tok, seq = module.settings, module.tokenizer, module.seq_length
    query_length, n_pieces = pieces.query_length, pieces.n_pieces
    room = seq - query_length - 3
    checks = [tf.debugging.assert_positive(room, message="the question leaves no room")]
    with tf.control_dependencies(checks):
        step = tf.minimum(room, settings.doc_stride)
    count = 1 + tf.maximum(tf.constant(0, tf.int64), (n_pieces - room + step - 1) // step)
    window_question = tf.repeat(tf.range(batch), count)  # [W]
    window_start = tf.ragged.range(count).flat_values * tf.gather(step, window_question)
    window_length = tf.minimum(
        tf.gather(n_pieces, window_question) - window_start, tf.gather(room, window_question)
    )
    first_piece = tf.gather(pieces.piece_base, window_question) + window_start
    flat_pieces = tf.ragged.range(first_piece, first_piece + window_length)  # [W, (len)]
    context_ids = tf.gather(pieces.piece_ids, flat_pieces)
    window_query = tf.gather(pieces.query, window_question)
    windows = tf.shape(window_question, out_type=tf.int64)[0]
    cls = tf.fill([windows, 1], tf.constant(tok.cls_id, tf.int64))
    sep = tf.fill([windows, 1], tf.constant(tok.sep_id, tf.int64))
    ids = tf.concat([cls, window_query, sep, context_ids, sep], axis=1)
    segments = tf.concat(
        [tf.zeros_like(cls), tf.zeros_like(window_query), tf.zeros_like(sep),
         tf.ones_like(context_ids), tf.ones_like(sep)], axis=1,
    )  # fmt: skip
    longest = tf.reduce_max(ids.row_lengths())
    width = tf.minimum(tf.constant(seq, tf.int64), (longest + 7) // 8 * 8)

    context_first = tf.gather(query_length, window_question) + 2  # [W]
    position = tf.range(width, dtype=tf.int64)[None, :]
    offset = position - context_first[:, None]  # [W, L]
    in_context = (offset >= 0) & (offset < window_length[:, None])
    piece = tf.where(in_context, first_piece[:, None] + offset, 0)
    total_pieces = tf.shape(pieces.piece_ids, out_type=tf.int64)[0] + 1  # + 1: 0 always valid
    return SimpleNamespace(
        question=window_question, count=windows,
        token_ids=tf.cast(ids.to_tensor(tok.pad_id, shape=[windows, width]), tf.int32),
        padding_mask=tf.cast(tf.ones_like(ids).to_tensor(0, shape=[windows, width]), tf.int32),
        segment_ids=tf.cast(segments.to_tensor(0, shape=[windows, width]), tf.int32),
        piece=piece, in_context=in_context,
        max_context=_max_context(offset, window_length, in_context, piece, total_pieces),
    )  # fmt: skip


def _spans(module, windows, batch) -> SimpleNamespace:
    """3. The heads and the candidate spans: each question's best window and span."""
    settings, window_question = module.settings, windows.question
    logits = _batched_logits(
        module, windows.token_ids, windows.padding_mask, windows.segment_ids, WINDOW_BATCH
    )
    penalty = (1.0 - tf.cast(windows.padding_mask, tf.float32)) * -10000.0
    start_logits = logits["start_logits"] + penalty
    if settings.joint_end:  # end logits [W, K, L] for the [W, K] start candidates
        end_logits = logits["end_logits"] + penalty[:, None, :]
        window_best, best_start, best_end, row = _joint_window_spans(
            start_logits, end_logits, logits["start_candidates"], windows.in_context,
            windows.max_context, settings,
        )  # fmt: skip
        end_logits = tf.gather(end_logits, row, batch_dims=1)  # the chosen start's ends
    else:
        end_logits = logits["end_logits"] + penalty
        window_best, best_start, best_end = _window_spans(
            start_logits, end_logits, windows.in_context, windows.max_context, settings
        )

    question_best = tf.math.unsorted_segment_max(window_best, window_question, batch)
    chosen = tf.math.unsorted_segment_min(
        tf.where(window_best == tf.gather(question_best, window_question),
                 tf.range(windows.count), windows.count),
        window_question, batch,
    )  # fmt: skip
    has_answer = question_best > _NONE / 2
    chosen = tf.where(has_answer, chosen, 0)  # any window: masked out below
    answerable = tf.math.unsorted_segment_max(logits["answerable_logits"], window_question, batch)
    if settings.no_answer == "null_score":  # transformers' rule (`squad.null_scores`)
        null = tf.math.unsorted_segment_min(
            start_logits[:, 0] + end_logits[:, 0], window_question, batch
        )
        answerable = tf.where(has_answer, question_best, squad.NO_SPAN) - null
    return SimpleNamespace(
        chosen=chosen, has_answer=has_answer, answerable=answerable,
        at_start=tf.gather(best_start, chosen), at_end=tf.gather(best_end, chosen),
        start_logits=start_logits, end_logits=end_logits,
    )  # fmt: skip


def _answers(module, context, pieces, windows, spans) -> dict:
    """4. Words, characters, stripping, the score and the threshold."""
    chosen, at_start, at_end = spans.chosen, spans.at_start, spans.at_end
    has_answer, piece = spans.has_answer, windows.piece
    # (Padded by one entry so that a question without any word still gathers: masked below.)
    piece_word = tf.concat([pieces.piece_word, [0]], 0)
    first_word = tf.gather(piece_word, tf.gather_nd(piece, tf.stack([chosen, at_start], -1)))
    last_word = tf.gather(piece_word, tf.gather_nd(piece, tf.stack([chosen, at_end], -1)))
    word_begin = tf.cast(pieces.word_begin.flat_values, tf.int64)
    word_end = tf.cast(pieces.word_end.flat_values, tf.int64)
    zero = tf.zeros([1], tf.int64)
    begin = tf.where(has_answer, tf.gather(tf.concat([word_begin, zero], 0), first_word), 0)
    end = tf.where(has_answer, tf.gather(tf.concat([word_end, zero], 0), last_word), 0)
    begin, end = _strip_outer(context, begin, end)

    log_start = tf.nn.log_softmax(tf.gather(spans.start_logits, chosen), axis=-1)
    log_end = tf.nn.log_softmax(tf.gather(spans.end_logits, chosen), axis=-1)
    score = tf.exp(
        tf.gather(log_start, at_start, batch_dims=1) + tf.gather(log_end, at_end, batch_dims=1)
    )
    answered, answerable = has_answer, spans.answerable
    if module.settings.version_2:
        answered &= answerable >= module._keras.model.threshold
        no_answer = tf.sigmoid(-answerable)
    else:
        no_answer = tf.zeros_like(answerable)
    begin = tf.where(answered, begin, 0)
    end = tf.where(answered, end, 0)
    answer = tf.where(answered, tf.strings.substr(context, begin, end - begin, unit="BYTE"), "")
    return {
        "answer": answer,
        "start": tf.cast(_chars_before(context, begin), tf.int32),
        "end": tf.cast(_chars_before(context, end), tf.int32),
        "score": tf.where(answered, score, 0.0),
        "no_answer": no_answer,
    }
