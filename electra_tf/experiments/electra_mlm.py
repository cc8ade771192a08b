"""ELECTRA as a masked language model (paper, Appendix G).

A trained discriminator can fill in masked tokens: for each masked position,
take the generator's top-k candidates, put each candidate into the sequence,
and score it with the formula the paper derives from the optimal
discriminator, `D(x, c) * p_G(x | c) / (a * (1 - D(x, c)) + p_G(x | c))`,
where `D` is the discriminator's probability that the token is original,
`p_G` the generator's probability and `a = (1 - p_mask) / p_mask`. The
prediction is the best-scoring candidate.

To keep the cost at k discriminator passes per batch (not k per position),
candidate rank r is put in at *every* masked position of the sequence at
once, so the other masked positions hold their own rank-r candidates, a
corrupted context like the one the discriminator was trained on.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from electra_tf.ops import sampling
from electra_tf.pretraining.objectives.base import StepContext

__all__ = ["optimal_discriminator_scores", "electra_as_mlm", "electra_mlm_experiment"]


def optimal_discriminator_scores(real_probability, generator_probability, mask_rate: float):
    """Appendix G's score of a candidate: D p_G / (a (1 - D) + p_G), a = (1 - p_mask) / p_mask.

    Args:
        real_probability: D, the discriminator's probability that the candidate is original.
        generator_probability: p_G of the candidate.
        mask_rate: p_mask.

    Returns:
        The scores, same shape.
    """
    a = (1.0 - mask_rate) / mask_rate
    d = tf.cast(real_probability, tf.float32)
    p = tf.cast(generator_probability, tf.float32)
    return d * p / (a * (1.0 - d) + p)


def electra_as_mlm(pretrainer, dataset, steps: int, top_k: int = 100, seed: int = 0) -> dict:
    """Masked-LM accuracy of the generator and of ELECTRA (Appendix G) on `steps` batches.

    Masks each batch with the run's masking (seeded by `seed` and the batch
    index), then scores the generator's top-`top_k` candidates.

    Returns:
        {"generator_accuracy", "electra_accuracy", "positions", "top_k"}.
    """
    objective = pretrainer.objective
    generator, discriminator = pretrainer.generator, pretrainer.discriminator
    mask_rate = pretrainer.config.objective.mask_rate
    top_k = min(top_k, pretrainer.config.model.vocabulary_size)

    @tf.function
    def candidates(inputs):
        logits = tf.cast(generator(inputs, training=False), tf.float32)
        probabilities = tf.nn.softmax(logits, axis=-1)
        return tf.math.top_k(probabilities, k=top_k)

    @tf.function
    def real_probability(inputs, positions):
        logits = tf.cast(discriminator(inputs, training=False), tf.float32)
        return sampling.gather_positions(tf.sigmoid(-logits), positions)

    correct_g = correct_e = total = 0.0
    for index, batch in enumerate(dataset.take(steps)):
        if isinstance(batch, (tuple, list)):
            batch = batch[0]
        token_ids = tf.cast(batch["token_ids"], tf.int32)
        size = int(token_ids.shape[0])
        context = StepContext(
            seed=seed,
            step=tf.constant(index, tf.int64),
            example_index=tf.range(size),
            num_replicas=1,
        )
        masked = objective.mask(batch, context)
        common = {"segment_ids": batch["segment_ids"], "padding_mask": batch["padding_mask"]}
        top = candidates(
            {**common, "token_ids": masked.masked_ids, "mask_positions": masked.positions}
        )
        generator_probability, candidate_ids = top.values, top.indices  # [B, N, K]
        real = []
        for rank in range(top_k):
            filled = sampling.scatter_update(
                token_ids, candidate_ids[:, :, rank], masked.positions, masked.weights
            )
            real.append(real_probability({**common, "token_ids": filled}, masked.positions))
        real = tf.stack(real, axis=-1)  # [B, N, K]
        scores = optimal_discriminator_scores(real, generator_probability, mask_rate)
        best = tf.gather(candidate_ids, tf.argmax(scores, axis=-1), batch_dims=2)
        weights = masked.weights.numpy()
        targets = masked.targets.numpy()
        correct_g += float(np.sum((candidate_ids[:, :, 0].numpy() == targets) * weights))
        correct_e += float(np.sum((best.numpy() == targets) * weights))
        total += float(np.sum(weights))
    total = max(total, 1.0)
    return {
        "generator_accuracy": correct_g / total,
        "electra_accuracy": correct_e / total,
        "positions": int(total),
        "top_k": top_k,
    }


def electra_mlm_experiment(run, data: str, batches: int = 20, top_k: int = 100) -> dict:
    """`electra_as_mlm` of a run's checkpoint on `batches` batches of the packed `data`.

    Args:
        run: a pre-training run or `step-N` checkpoint folder.
        data: TFRecord files (comma-separated, globs) or a prepare folder.
        batches: batches scored (of the run's batch size and sequence length).
        top_k: generator candidates rescored per masked position.
    """
    from electra_tf.data.pipeline import pretraining_dataset
    from electra_tf.data.tfrecords import count_records, resolve_files
    from electra_tf.pretraining.checkpoint import load_pretrainer

    model = load_pretrainer(run)
    files, counts, _ = resolve_files(data)
    dataset = pretraining_dataset(
        files,
        counts if counts is not None else count_records(files),
        sequence_length=model.config.data.sequence_length,
        batch_size=model.config.train.batch_size,
        seed=7,
    )
    return electra_as_mlm(model, dataset, batches, top_k)
