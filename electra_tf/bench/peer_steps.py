"""The peers' pre-training steps, built from one of our configs, for `bench step --impl`.

Both time one ELECTRA step on the same ids as ours (`step.workload`), with the
config's sizes, dropout, mask count and loss weights:

- `model_garden_step`: tf-models-official's ELECTRA task (`ElectraPretrainTask`:
  `ElectraPretrainer` over two `BertEncoder`s, the generator reusing the
  discriminator's embeddings), stepped by the task's own `train_step` in a
  `tf.function`, with the AdamW (weight decay, global-norm clipping) of Model
  Garden's `electra/pretraining` experiment. It reads pre-masked features, its
  data loader's format, so its masking is outside the timed step.
- `torch_step`: Hugging Face's PyTorch `ElectraForMaskedLM` generator and
  `ElectraForPreTraining` discriminator sharing one embedding module
  (`torch_reference.hugging_face_models`), masking
  inside the step, the generator's head at the masked positions only and
  inverse-CDF sampling (its fastest form on a CPU), clipping and AdamW.

Each returns (one_step, trainable parameter count, versions); one_step blocks
until the step is done and returns the loss. Model Garden is Keras 2
(`tf_keras`): it is measured here, never used by our models.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TORCH_OPTIMIZER", "model_garden_step", "premask", "torch_adamw", "torch_step"]


def premask(ids, num_predictions: int, mask_id: int, mask_token_rate: float, seed: int) -> dict:
    """Model Garden's pre-masked features for one `[B, L]` batch (full rows, no padding).

    `num_predictions` distinct positions per row among 1..L-2 (never [CLS] or the last
    token); a `mask_token_rate` share of them shown as [MASK], the rest unchanged.
    """
    rng = np.random.RandomState(seed)
    batch, length = ids.shape
    positions = np.sort(np.argsort(rng.rand(batch, length - 2), axis=1)[:, :num_predictions] + 1)
    positions = positions.astype("int32")
    originals = np.take_along_axis(ids, positions, axis=1).astype("int32")
    shown = rng.rand(batch, num_predictions) < mask_token_rate
    word_ids = ids.copy()
    rows = np.broadcast_to(np.arange(batch)[:, None], positions.shape)
    word_ids[rows[shown], positions[shown]] = mask_id
    return {
        "input_word_ids": word_ids.astype("int32"),
        "input_mask": np.ones_like(ids, dtype="int32"),
        "input_type_ids": np.zeros_like(ids, dtype="int32"),
        "masked_lm_positions": positions,
        "masked_lm_ids": originals,
        "masked_lm_weights": np.ones(positions.shape, dtype="float32"),
    }


def _model_garden_encoder(c):
    """Model Garden's BERT encoder config for one of our model configs `c`."""
    from official.nlp.configs import encoders

    return encoders.EncoderConfig(
        type="bert",
        bert=encoders.BertEncoderConfig(
            vocab_size=c.vocabulary_size,
            hidden_size=c.hidden_dim,
            num_layers=c.num_layers,
            num_attention_heads=c.num_heads,
            intermediate_size=c.intermediate_dim,
            hidden_activation="gelu",
            dropout_rate=c.dropout,
            attention_dropout_rate=c.dropout,
            max_position_embeddings=c.max_sequence_length,
            type_vocab_size=c.num_segments,
            initializer_range=c.initializer_range,
            embedding_size=c.embedding_dim,
        ),
    )


def _model_garden_task(config, batch_size: int):
    """Model Garden's `ElectraPretrainTask` for `config` (sizes, objective, batch)."""
    from official.nlp.configs import electra as electra_configs
    from official.nlp.data import pretrain_dataloader
    from official.nlp.tasks import electra_task

    length, n = config.data.sequence_length, config.num_predictions
    model_config = electra_configs.ElectraPretrainerConfig(
        num_masked_tokens=n,
        sequence_length=length,
        num_classes=2,
        discriminator_loss_weight=config.objective.discriminator_weight,
        tie_embeddings=config.model.weight_tying != "none",
        disallow_correct=config.objective.disallow_correct,
        generator_encoder=_model_garden_encoder(config.model.generator()),
        discriminator_encoder=_model_garden_encoder(config.model.discriminator()),
        cls_heads=[],
    )
    data = pretrain_dataloader.BertPretrainDataConfig(
        input_path="unused",
        seq_length=length,
        max_predictions_per_seq=n,
        global_batch_size=batch_size,
        use_next_sentence_label=False,
    )
    return electra_task.ElectraPretrainTask(
        electra_task.ElectraPretrainConfig(model=model_config, train_data=data)
    )


def _model_garden_optimizer(task, train):
    """AdamW with the reference's weight-decay exclusions, warmup and polynomial decay."""
    from official.modeling import optimization

    return task.create_optimizer(
        optimization.OptimizationConfig(
            {
                "optimizer": {
                    "type": "adamw",
                    "adamw": {
                        "weight_decay_rate": train.weight_decay,
                        "exclude_from_weight_decay": ["LayerNorm", "layer_norm", "bias"],
                    },
                },
                "learning_rate": {
                    "type": "polynomial",
                    "polynomial": {
                        "initial_learning_rate": train.learning_rate,
                        "end_learning_rate": 0.0,
                        "decay_steps": 1_000_000,
                    },
                },
                "warmup": {"type": "polynomial", "polynomial": {"warmup_steps": 10_000}},
            }
        )
    )


def model_garden_step(config, batches, xla: bool = False, seed: int = 1234):
    """Model Garden's ELECTRA step on `batches` (int32 `[B, L]` arrays), pre-masked."""
    import tensorflow as tf
    import tf_keras

    tf_keras.utils.set_random_seed(seed)
    task = _model_garden_task(config, int(batches[0].shape[0]))
    model, metrics = task.build_model(), task.build_metrics()
    optimizer = _model_garden_optimizer(task, config.train)

    def train_step(features):
        logs = task.train_step(features, model=model, optimizer=optimizer, metrics=metrics)
        return logs[task.loss]

    step = tf.function(train_step, jit_compile=xla)
    n, mask_id = config.num_predictions, config.data.mask_id
    mask_rate = config.objective.mask_token_rate
    features = [premask(ids, n, mask_id, mask_rate, seed + i) for i, ids in enumerate(batches)]
    pool = [{k: tf.constant(v) for k, v in f.items()} for f in features]
    counter = [0]

    def one_step():
        loss = step(pool[counter[0] % len(pool)])
        counter[0] += 1
        return float(loss)

    unique = {v.ref(): v for v in model.trainable_variables}.values()
    params = int(sum(np.prod(v.shape) for v in unique))
    return one_step, params, {"tensorflow": tf.__version__, "tf_keras": tf_keras.__version__}


#: What the PyTorch peers' records say of their optimizer.
TORCH_OPTIMIZER = "adamw_torch_fused"


def torch_adamw(params, **kwargs):
    """`torch.optim.AdamW` with its fused kernel: what transformers' `Trainer` makes by default
    (`optim="adamw_torch_fused"` with torch 2.8 or later), on CPUs too. Every PyTorch peer
    here takes its optimizer from this, so the peer runs the policy a transformers user
    gets; torch's own default on a CPU, a loop of small kernels per parameter, was 12-20%
    slower a MiniLM step here (docs/results/finetuning.md, "Where a QA call's time goes")."""
    import torch

    return torch.optim.AdamW(params, fused=True, **kwargs)


def torch_step(config, batches, seed: int = 1234, device: str = "cpu", bf16: bool = False):
    """Hugging Face PyTorch ELECTRA's step on `batches`, masked inside the step.

    `device` is a torch device name ("cuda" on a GPU machine); `bf16` runs the forward
    passes under bfloat16 autocast (the peer's mixed precision). The step returns the
    loss as a float, so it ends synchronised with the device.
    """
    from electra_tf.config import ConfigError

    try:
        import torch
        import transformers
    except ImportError:
        raise ConfigError(
            'bench step --impl pytorch needs torch and transformers: pip install -e ".[test]".'
        ) from None
    from electra_tf.experiments.torch_reference import hugging_face_models

    transformers.logging.set_verbosity_error()
    torch.manual_seed(seed)
    generator, discriminator, parameters = hugging_face_models(config)
    generator.to(device), discriminator.to(device)
    model = config.model
    train = config.train
    optimizer = torch_adamw(
        [  # decay on matrices only: no LayerNorm, no bias
            {"params": [p for p in parameters if p.dim() > 1], "weight_decay": train.weight_decay},
            {"params": [p for p in parameters if p.dim() <= 1], "weight_decay": 0.0},
        ],
        lr=train.learning_rate,
        betas=(train.adam_beta_1, train.adam_beta_2),
        eps=train.adam_epsilon,
    )
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, 10_000, 1_000_000)

    objective, data = config.objective, config.data
    n, vocabulary = config.num_predictions, model.vocabulary_size
    pool = [torch.from_numpy(ids.astype("int64")).to(device) for ids in batches]
    batch, length = pool[0].shape
    attention = torch.ones(batch, length, dtype=torch.long, device=device)
    rng = torch.Generator(device=device).manual_seed(seed + 7)
    on = {"device": device, "generator": rng}
    counter = [0]

    def one_step():
        ids = pool[counter[0] % len(pool)]
        counter[0] += 1
        positions = torch.rand(batch, length - 2, **on).argsort(dim=1)[:, :n] + 1
        chosen = torch.zeros(batch, length, dtype=torch.bool, device=device)
        chosen = chosen.scatter_(1, positions, True)
        shown = chosen & (torch.rand(batch, length, **on) < objective.mask_token_rate)
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=bf16):
            loss = forward(ids, chosen, shown)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if train.clip_norm:
            torch.nn.utils.clip_grad_norm_(parameters, train.clip_norm)
        optimizer.step()
        schedule.step()
        return float(loss.item())

    def forward(ids, chosen, shown):
        hidden = generator.electra(
            input_ids=ids.masked_fill(shown, data.mask_id), attention_mask=attention
        ).last_hidden_state
        logits = generator.generator_lm_head(generator.generator_predictions(hidden[chosen]))
        mlm_loss = torch.nn.functional.cross_entropy(logits.float(), ids[chosen])
        with torch.no_grad():
            cdf = torch.softmax(logits.float(), dim=-1).cumsum(-1)
            uniform = torch.rand(cdf.shape[0], 1, **on) * cdf[:, -1:]
            sampled = torch.searchsorted(cdf, uniform).squeeze(-1).clamp_max(vocabulary - 1)
            corrupted = ids.clone()
            corrupted[chosen] = sampled
            labels = (corrupted != ids).long()
        disc_loss = discriminator(input_ids=corrupted, attention_mask=attention, labels=labels).loss
        return objective.mlm_weight * mlm_loss + objective.discriminator_weight * disc_loss

    params = int(sum(p.numel() for p in parameters))
    return one_step, params, {"torch": torch.__version__, "transformers": transformers.__version__}
