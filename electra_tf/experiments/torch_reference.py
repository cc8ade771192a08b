"""The same pre-training run with Hugging Face's PyTorch ELECTRA, as an independent check.

When our discriminator behaves in a way that looks like a bug (a replaced-token
AUC that stops rising, say), the question is whether another implementation of
the algorithm does the same on the same data. `torch_reference_run` trains
`transformers.ElectraForMaskedLM` (generator) and `ElectraForPreTraining`
(discriminator) with the sizes, masking, loss weights, optimizer and schedule
of one of our configs, on a folder written by `electra-tf prepare`, and
reports the held-out replaced-token AUC and generator MLM accuracy every few
steps. Only the data reading is ours; model, masking, sampling, losses and
optimizer are written here against PyTorch, following the reference code
(exactly round(tokens * mask_rate) positions per sequence, 85% shown as
[MASK], Gumbel-max sampling, loss = MLM + 50 * detection averaged over
tokens, AdamW with linear warmup and decay, clipping at norm 1).

The last shard of the folder is held out, as the demo does. Needs the test
extras (`pip install -e ".[test]"`: torch and transformers).

    electra-tf experiment torch-reference --data data/bbcnews-v2048-s64 \\
        --set train.num_steps=1500 --set train.batch_size=64
"""

from __future__ import annotations

import time

import numpy as np

__all__ = [
    "reference_masks",
    "hugging_face_models",
    "learning_rate_factor",
    "torch_reference_run",
    "torch_reference_experiment",
]


def reference_masks(token_ids, padding_mask, special_ids, mask_rate, max_predictions, generator):
    """Which positions to predict: exactly round(real tokens * mask_rate) per sequence.

    As the reference's `mask()`: at least 1, at most `max_predictions`, never a
    padding or special token, chosen uniformly without replacement.

    Args:
        token_ids, padding_mask: int tensors `[B, T]`.
        special_ids: ids that are never chosen ([CLS], [SEP], ...).
        mask_rate: float.
        max_predictions: int.
        generator: a `torch.Generator`.

    Returns:
        bool tensor `[B, T]`.
    """
    import torch

    candidates = padding_mask.bool()
    for token in special_ids:
        candidates &= token_ids != token
    counts = torch.round(padding_mask.sum(-1).float() * mask_rate).long()
    counts = counts.clamp(min=1, max=max_predictions)
    counts = torch.minimum(counts, candidates.sum(-1))
    scores = torch.rand(token_ids.shape, generator=generator)
    scores = torch.where(candidates, scores, torch.full_like(scores, -1.0))
    rank = scores.argsort(-1, descending=True).argsort(-1)
    return (rank < counts[:, None]) & candidates


def hugging_face_models(config):
    """(generator, discriminator, their unique parameters) as Hugging Face's ELECTRA classes.

    `ElectraForMaskedLM` and `ElectraForPreTraining` with the config's sizes; with
    `model.weight_tying=embeddings` the discriminator takes the generator's embedding
    module, which the generator's tied output layer keeps reading.
    """
    import transformers

    from electra_tf.config import ConfigError
    from electra_tf.serving.conversion import hugging_face_config

    model = config.model
    if model.weight_tying not in ("none", "embeddings"):
        raise ConfigError(
            f"Hugging Face's ELECTRA runs model.weight_tying none|embeddings, got "
            f"{model.weight_tying!r}."
        )
    generator = transformers.ElectraForMaskedLM(
        transformers.ElectraConfig(**hugging_face_config(model.generator(), "ElectraForMaskedLM"))
    )
    discriminator = transformers.ElectraForPreTraining(
        transformers.ElectraConfig(
            **hugging_face_config(model.discriminator(), "ElectraForPreTraining")
        )
    )
    if model.weight_tying == "embeddings":
        discriminator.electra.embeddings = generator.electra.embeddings
    params = list(
        {id(p): p for p in [*generator.parameters(), *discriminator.parameters()]}.values()
    )
    return generator, discriminator, params


def learning_rate_factor(step: int, total: int, warmup: int, power: float = 1.0) -> float:
    """The peak rate's factor at `step` (0 for the first update), as `WarmupLinearDecay`.

    (1 - step / total) ** power, times step / warmup during the warmup: the first update
    has rate 0, as in the reference code and in our optimizer.
    """
    decay = max(0.0, 1.0 - min(step, total) / max(1, total)) ** power
    return min(step / warmup, 1.0) * decay if warmup > 0 else decay


def _read(files, sequence_length):
    import tensorflow as tf

    from electra_tf.data.tfrecords import parse_batch

    dataset = tf.data.TFRecordDataset(files).batch(1024)
    parts = [parse_batch(serialized, sequence_length) for serialized in dataset]
    return {key: np.concatenate([p[key].numpy() for p in parts]) for key in parts[0]}


def torch_reference_run(config, eval_every: int = 100, threads: int = 0, log=print) -> dict:
    """Trains the config's ELECTRA with Hugging Face PyTorch; returns the held-out curve.

    Args:
        config: an `ElectraConfig` whose `data.train_files` is a prepare folder
            (run through `config_for_data`); objective `electra` only.
        eval_every: steps between held-out evaluations (and the last step).
        threads: torch CPU threads (0: torch's default).
        log: called with one line per evaluation.

    Returns:
        dict with `curve` (step, auc, mlm_accuracy, seconds per entry) and the sizes used.
    """
    torch, transformers = _torch_or_refuse()
    files = _shards_or_refuse(config)
    length = config.data.sequence_length
    train, held_out = _read(files[:-1], length), _read(files[-1:], length)
    if threads:
        torch.set_num_threads(threads)
    seed = config.train.seed
    torch.manual_seed(seed)
    generator, discriminator, params = hugging_face_models(config)
    optimizer, scheduler = _optimizer(torch, config.train, params)
    forward = _forward_pass(torch, config, generator, discriminator)
    objective, train_cfg, steps = config.objective, config.train, config.train.num_steps

    rng = torch.Generator().manual_seed(seed + 1)
    batch_size = train_cfg.batch_size
    batches = _random_batches(torch, train, batch_size, rng)
    curve, started = [], time.perf_counter()
    for step, batch in zip(range(1, steps + 1), batches, strict=False):  # batches: endless
        mlm_loss, disc_loss, *_ = forward(batch, rng)
        loss = objective.mlm_weight * mlm_loss + objective.discriminator_weight * disc_loss
        optimizer.zero_grad()
        loss.backward()
        if train_cfg.clip_norm:
            torch.nn.utils.clip_grad_norm_(params, train_cfg.clip_norm)
        optimizer.step()
        scheduler.step()
        if step % eval_every == 0 or step == steps:
            auc, accuracy = _evaluate(torch, forward, (generator, discriminator), held_out)
            seconds = time.perf_counter() - started
            point = {"step": step, "auc": round(auc, 4), "mlm_accuracy": round(accuracy, 4)}
            curve.append(dict(point, seconds=round(seconds, 1)))
            log(
                f"[torch-reference] step {step}: held-out AUC {auc:.4f}, "
                f"generator MLM accuracy {accuracy:.4f} ({seconds:.0f} s)"
            )
    return {
        "implementation": f"transformers {transformers.__version__}, torch {torch.__version__}",
        "data": config.data.train_files,
        "held_out_file": files[-1],
        "steps": steps,
        "batch_size": batch_size,
        "sequence_length": length,
        "curve": curve,
    }


def _random_batches(torch, train, batch_size, rng):
    """Batches of `train` drawn without replacement, reshuffled when fewer than a batch are
    left; each shuffle draws from `rng` when it is needed (between the steps' draws)."""
    size = train["token_ids"].shape[0]
    order, position = torch.randperm(size, generator=rng), 0
    while True:
        if position + batch_size > size:
            order, position = torch.randperm(size, generator=rng), 0
        index = order[position : position + batch_size].numpy()
        position += batch_size
        yield {k: torch.from_numpy(v[index]).long() for k, v in train.items()}


def _torch_or_refuse():
    """(torch, transformers), or one sentence saying how to install them."""
    from electra_tf.config import ConfigError

    try:
        import torch
        import transformers
    except ImportError:
        raise ConfigError(
            "experiment torch-reference needs torch and transformers; install the test "
            'extras with `pip install -e ".[test]"`.'
        ) from None
    return torch, transformers


def _shards_or_refuse(config) -> list:
    """The prepared shards (the last one held out), or one sentence on what is wrong."""
    from electra_tf.config import ConfigError
    from electra_tf.data.tfrecords import resolve_files

    if config.objective.name != "electra":
        raise ConfigError(
            f"experiment torch-reference runs objective.name=electra only, got "
            f"{config.objective.name!r}."
        )
    files, _, _ = resolve_files(config.data.train_files)
    if len(files) < 2:
        raise ConfigError(
            f"{config.data.train_files} has one shard; torch-reference holds the last shard out, "
            "so prepare the corpus with more than one shard (--examples-per-shard)."
        )
    return files


def _optimizer(torch, train_cfg, params):
    """AdamW with weight decay on matrices only, as the reference's AdamWeightDecay (no
    LayerNorm, no bias), and our warmup-then-decay schedule."""
    groups = [
        {"params": [p for p in params if p.dim() > 1], "weight_decay": train_cfg.weight_decay},
        {"params": [p for p in params if p.dim() <= 1], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(
        groups,
        lr=train_cfg.learning_rate,
        betas=(train_cfg.adam_beta_1, train_cfg.adam_beta_2),
        eps=train_cfg.adam_epsilon,
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: learning_rate_factor(
            step, train_cfg.num_steps, train_cfg.warmup_steps, train_cfg.lr_decay_power
        ),
    )
    return optimizer, scheduler


def _forward_pass(torch, config, generator, discriminator):
    """forward(batch, rng) -> (MLM loss, discriminator loss, its logits, labels, weights,
    the generator's per-prediction correctness): the reference's masking and sampling."""
    data, objective = config.data, config.objective
    length = config.data.sequence_length
    special = [data.cls_id, data.sep_id, data.mask_id, data.pad_id]
    max_predictions = objective.max_predictions_per_seq or int(
        (objective.mask_rate + 0.005) * length
    )

    def forward(batch, rng):
        ids = batch["token_ids"]
        mask = batch["padding_mask"]
        segments = batch["segment_ids"]
        chosen = reference_masks(ids, mask, special, objective.mask_rate, max_predictions, rng)
        shown_as_mask = chosen & (torch.rand(ids.shape, generator=rng) < objective.mask_token_rate)
        masked = torch.where(shown_as_mask, torch.full_like(ids, data.mask_id), ids)
        logits = generator(input_ids=masked, attention_mask=mask, token_type_ids=segments).logits
        mlm_loss = torch.nn.functional.cross_entropy(logits[chosen], ids[chosen])
        with torch.no_grad():
            uniform = torch.rand(logits.shape, generator=rng).clamp(1e-9, 1.0 - 1e-9)
            sampled = (logits / objective.temperature - torch.log(-torch.log(uniform))).argmax(-1)
        corrupted = torch.where(chosen, sampled, ids)
        labels = (corrupted != ids).float()
        disc_logits = discriminator(
            input_ids=corrupted, attention_mask=mask, token_type_ids=segments
        ).logits
        weights = mask.float()
        per_token = torch.nn.functional.binary_cross_entropy_with_logits(
            disc_logits, labels, reduction="none"
        )
        disc_loss = (per_token * weights).sum() / weights.sum()
        correct = (logits[chosen].argmax(-1) == ids[chosen]).float()
        return mlm_loss, disc_loss, disc_logits, labels, weights, correct

    return forward


def _evaluate(torch, forward, models, held_out):
    """(held-out replaced-token AUC, generator MLM accuracy), masks from a fixed stream;
    the models back in training mode after."""
    from electra_tf.metrics import roc_auc

    for model in models:
        model.eval()
    rng = torch.Generator().manual_seed(0)
    labels, scores, correct = [], [], []
    size = held_out["token_ids"].shape[0]
    with torch.no_grad():
        for start in range(0, size, 128):
            batch = {
                k: torch.from_numpy(v[start : start + 128]).long() for k, v in held_out.items()
            }
            _, _, logits, lab, weights, right = forward(batch, rng)
            keep = weights > 0
            labels.append(lab[keep].numpy())
            scores.append(logits[keep].numpy())
            correct.append(right.numpy())
    for model in models:
        model.train()
    auc = roc_auc(np.concatenate(labels), np.concatenate(scores))
    return auc, float(np.concatenate(correct).mean())


def torch_reference_experiment(
    data: str,
    *,
    recipe: str = "tiny",
    overrides=(),
    eval_every: int = 100,
    threads: int = 0,
    output_dir=None,
    log=print,
) -> dict:
    """`torch_reference_run` of a recipe on a prepare folder; writes `torch_reference.json`
    into `output_dir` when given."""
    import json
    from pathlib import Path

    from electra_tf.config import load_recipe
    from electra_tf.pretraining.run import config_for_data

    config = load_recipe(recipe).override(f"data.train_files={data}", *overrides)
    result = torch_reference_run(config_for_data(config), eval_every, threads, log)
    if output_dir:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "torch_reference.json").write_text(json.dumps(result, indent=2) + "\n")
        log(f"[torch-reference] wrote {out / 'torch_reference.json'}")
    return result
