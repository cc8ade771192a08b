"""Released ELECTRA weights in and out: the reference TF1 checkpoints and Hugging Face's.

One table (`reference_names`) maps every variable of an `ElectraPretrainer`
to its name in the reference code's checkpoints (ELECTRA_SPEC.md), with the
reshape between Keras's per-head attention kernels `[H, heads, head]` and the
reference's `[H, H]`. Hugging Face names derive from the reference names
(`electra.encoder.layer.0.attention.self.query.weight`, ...), with PyTorch's
`[out, in]` kernels transposed.

- `import_reference_checkpoint(path)`: a TF1 checkpoint (`model.ckpt-N`) into a
  pretrainer (generator and discriminator); optimizer slots (`adam_m`, `adam_v`)
  and `global_step` are not weights and are skipped.
- `export_reference_checkpoint(model, path)`: the inverse (a TF1 name-based checkpoint).
- `import_hugging_face(discriminator, generator=None)`: folders or files with
  `model.safetensors` or `pytorch_model.bin` (PyTorch state dicts need torch),
  and their `config.json`.
- `export_hugging_face(model, folder)`: `discriminator/` and `generator/` folders
  that `transformers` loads with `ElectraForPreTraining` / `ElectraForMaskedLM`.

Sizes come from the checkpoint's shapes (heads = hidden // 64, as in the
reference, unless given) or from Hugging Face's config.json.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError, ElectraConfig

__all__ = [
    "reference_names",
    "export_reference_checkpoint",
    "import_reference_checkpoint",
    "export_hugging_face",
    "import_hugging_face",
    "hugging_face_name",
    "hugging_face_config",
    "with_vocabulary",
    "hugging_face_vocabulary",
    "import_weights",
    "HUGGING_FACE_TYPES",
]


def _encoder_entries(encoder, scope: str, with_embeddings: bool, embeddings_scope: str):
    entries = []
    if with_embeddings:
        emb = encoder.embeddings
        base = f"{embeddings_scope}/embeddings"
        entries += [
            (f"{base}/word_embeddings", emb.token_embedding.embeddings, None),
            (f"{base}/position_embeddings", emb.position_embedding.embeddings, None),
            (f"{base}/token_type_embeddings", emb.segment_embedding.embeddings, None),
            (f"{base}/LayerNorm/gamma", emb.layer_norm.gamma, None),
            (f"{base}/LayerNorm/beta", emb.layer_norm.beta, None),
        ]
    if encoder.embeddings_project is not None:
        entries += [
            (f"{scope}/embeddings_project/kernel", encoder.embeddings_project.kernel, None),
            (f"{scope}/embeddings_project/bias", encoder.embeddings_project.bias, None),
        ]
    hidden = encoder.hidden_dim
    for i, layer in enumerate(encoder.transformer_layers):
        att = layer._self_attention_layer
        base = f"{scope}/encoder/layer_{i}"
        for part, dense in (
            ("query", att._query_dense),
            ("key", att._key_dense),
            ("value", att._value_dense),
        ):
            entries += [
                (f"{base}/attention/self/{part}/kernel", dense.kernel, (hidden, hidden)),
                (f"{base}/attention/self/{part}/bias", dense.bias, (hidden,)),
            ]
        entries += [
            (f"{base}/attention/output/dense/kernel", att._output_dense.kernel, (hidden, hidden)),
            (f"{base}/attention/output/dense/bias", att._output_dense.bias, None),
            (
                f"{base}/attention/output/LayerNorm/gamma",
                layer._self_attention_layer_norm.gamma,
                None,
            ),
            (
                f"{base}/attention/output/LayerNorm/beta",
                layer._self_attention_layer_norm.beta,
                None,
            ),
            (
                f"{base}/intermediate/dense/kernel",
                layer._feedforward_intermediate_dense.kernel,
                None,
            ),
            (f"{base}/intermediate/dense/bias", layer._feedforward_intermediate_dense.bias, None),
            (f"{base}/output/dense/kernel", layer._feedforward_output_dense.kernel, None),
            (f"{base}/output/dense/bias", layer._feedforward_output_dense.bias, None),
            (f"{base}/output/LayerNorm/gamma", layer._feedforward_layer_norm.gamma, None),
            (f"{base}/output/LayerNorm/beta", layer._feedforward_layer_norm.beta, None),
        ]
    return entries


def reference_names(model) -> list[tuple[str, object, tuple | None]]:
    """(reference name, Keras variable, reference shape if it differs) for a pretrainer or
    a discriminator; each variable appears once."""
    discriminator = getattr(model, "discriminator", model)
    entries = _encoder_entries(discriminator.encoder, "electra", True, "electra")
    head = discriminator.rtd_head
    entries += [
        ("discriminator_predictions/dense/kernel", head.dense.kernel, None),
        ("discriminator_predictions/dense/bias", head.dense.bias, None),
        ("discriminator_predictions/dense_1/kernel", head.dense_prediction.kernel, None),
        ("discriminator_predictions/dense_1/bias", head.dense_prediction.bias, None),
    ]
    generator = getattr(model, "generator", None)
    if generator is not None:
        if generator.encoder is not discriminator.encoder:
            shared = generator.encoder.embeddings is discriminator.encoder.embeddings
            entries += _encoder_entries(
                generator.encoder, "generator", not shared, "electra" if shared else "generator"
            )
        mlm = generator.mlm_head
        entries += [
            ("generator_predictions/dense/kernel", mlm._intermediate_dense.kernel, None),
            ("generator_predictions/dense/bias", mlm._intermediate_dense.bias, None),
            ("generator_predictions/LayerNorm/gamma", mlm._intermediate_layer_norm.gamma, None),
            ("generator_predictions/LayerNorm/beta", mlm._intermediate_layer_norm.beta, None),
            ("generator_predictions/output_bias", mlm._bias, None),
        ]
    return entries


def _assign(variable, value, name: str, source: str) -> None:
    value = np.asarray(value)
    if value.size != int(np.prod(variable.shape)):
        raise ConfigError(
            f"{source}: {name} has shape {list(value.shape)} but the model expects "
            f"{list(variable.shape)}; the config does not match these weights."
        )
    variable.assign(value.reshape(variable.shape).astype(variable.dtype))


# Reference TF1 checkpoints ------------------------------------------------------------------


def export_reference_checkpoint(model, path) -> str:
    """Writes the model's weights under the reference names (a TF1 name-based checkpoint)."""
    import tensorflow as tf

    names, tensors = [], []
    for name, variable, shape in reference_names(model):
        value = np.asarray(variable.numpy(), np.float32)
        names.append(name)
        tensors.append(tf.constant(value.reshape(shape) if shape else value))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tf.raw_ops.SaveV2(
        prefix=str(path), tensor_names=names, shape_and_slices=[""] * len(names), tensors=tensors
    )
    return str(path)


def _config_from_reference(shapes: dict, num_heads: int | None) -> ElectraConfig:
    def need(name):
        if name not in shapes:
            raise ConfigError(f"The checkpoint has no {name}; is it an ELECTRA checkpoint?")
        return shapes[name]

    vocabulary, embedding = need("electra/embeddings/word_embeddings")
    positions = need("electra/embeddings/position_embeddings")[0]
    segments = need("electra/embeddings/token_type_embeddings")[0]
    hidden, intermediate = need("electra/encoder/layer_0/intermediate/dense/kernel")
    layers = len(
        {m.group(1) for n in shapes if (m := re.match(r"electra/encoder/layer_(\d+)/", n))}
    )
    values = {
        "vocabulary_size": vocabulary,
        "embedding_dim": embedding,
        "hidden_dim": hidden,
        "intermediate_dim": intermediate,
        "num_layers": layers,
        "num_heads": num_heads or max(1, hidden // 64),
        "max_sequence_length": positions,
        "num_segments": segments,
    }
    if "generator/encoder/layer_0/intermediate/dense/kernel" in shapes:
        generator_hidden = shapes["generator/encoder/layer_0/intermediate/dense/kernel"][0]
        generator_layers = len(
            {m.group(1) for n in shapes if (m := re.match(r"generator/encoder/layer_(\d+)/", n))}
        )
        values["generator_size_fraction"] = generator_hidden / hidden
        values["generator_layers_fraction"] = generator_layers / layers
        values["weight_tying"] = (
            "none" if "generator/embeddings/word_embeddings" in shapes else "embeddings"
        )
    elif "generator_predictions/output_bias" in shapes:
        values.update(generator_size_fraction=1.0, weight_tying="all")
    return ElectraConfig.from_dict(
        {"model": values, "data": {"sequence_length": min(128, positions)}}
    )


def import_reference_checkpoint(
    path, config: ElectraConfig | None = None, num_heads: int | None = None
):
    """An `ElectraPretrainer` with the weights of a reference (TF1) checkpoint.

    Args:
        path: the checkpoint prefix (`.../model.ckpt-1000000`) or its folder.
        config: the config to build; by default derived from the checkpoint's shapes.
        num_heads: attention heads when deriving the config (default hidden // 64).

    Returns:
        `ElectraPretrainer` (discriminator and generator loaded).
    """
    import tensorflow as tf

    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    path = str(path)
    if Path(path).is_dir():
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ConfigError(f"No TF1 checkpoint in {path}.")
        path = latest
    try:
        reader = tf.train.load_checkpoint(path)
    except (tf.errors.OpError, ValueError) as error:
        raise ConfigError(f"{path} is not a readable checkpoint ({error}).") from None
    shapes = reader.get_variable_to_shape_map()
    if config is None:
        config = _config_from_reference(shapes, num_heads)
    model = ElectraPretrainer(config)
    for name, variable, _ in reference_names(model):
        if name not in shapes:
            raise ConfigError(f"{path}: the checkpoint has no {name}, which this config needs.")
        _assign(variable, reader.get_tensor(name), name, path)
    return model


# Hugging Face ------------------------------------------------------------------------------


def hugging_face_name(reference: str) -> tuple[str, bool]:
    """The Hugging Face state-dict name of a reference name, and whether to transpose."""
    name = reference
    name = re.sub(r"^generator/", "electra/", name)  # HF's generator is its own ElectraModel
    name = name.replace("/encoder/layer_", "/encoder/layer/")
    name = name.replace(
        "discriminator_predictions/dense_1", "discriminator_predictions/dense_prediction"
    )
    transpose = name.endswith("/kernel")
    name = re.sub(r"/(kernel|gamma)$", "/weight", name)
    name = re.sub(r"/beta$", "/bias", name)
    if name.endswith("_embeddings"):
        name += "/weight"
    if name == "generator_predictions/output_bias":
        name = "generator_lm_head/bias"
    return name.replace("/", "."), transpose


def _load_state_dict(source) -> tuple[dict, dict]:
    """(state dict of numpy arrays, config.json dict) from a folder or a weights file."""
    source = Path(source)
    folder = source if source.is_dir() else source.parent
    config = {}
    if (folder / "config.json").exists():
        config = json.loads((folder / "config.json").read_text())
    files = (
        [source]
        if source.is_file()
        else [p for p in (folder / "model.safetensors", folder / "pytorch_model.bin") if p.exists()]
    )
    if not files:
        raise ConfigError(f"{source} holds neither model.safetensors nor pytorch_model.bin.")
    weights = files[0]
    if weights.suffix == ".safetensors":
        from safetensors.numpy import load_file

        return dict(load_file(str(weights))), config
    try:
        import torch
    except ImportError:
        raise ConfigError(
            f"{weights} is a PyTorch state dict; install torch to read it, or convert it to "
            "safetensors."
        ) from None
    state = torch.load(str(weights), map_location="cpu", weights_only=True)
    return {k: v.float().numpy() for k, v in state.items()}, config


#: Hugging Face model types whose encoder is ELECTRA's discriminator encoder (BERT's layout:
#: post-LayerNorm blocks, absolute positions, two segments).
HUGGING_FACE_TYPES = ("electra", "bert")


def _electra_layout(state: dict, model_type: str, source) -> dict:
    """`state` with the encoder's weights named as in Hugging Face's ELECTRA port.

    BERT checkpoints name them `bert.embeddings...` (`BertForMaskedLM`,
    `BertForPreTraining`) or `embeddings...` (`BertModel`, as ELECTRA's bare
    `ElectraModel` does); older ones call LayerNorm's parameters gamma and beta.
    Everything else (BERT's pooler and MLM head) keeps its name and is not read.
    """
    if model_type not in HUGGING_FACE_TYPES:
        raise ConfigError(
            f"{source}: config.json has model_type={model_type!r}; this importer reads "
            f"{' and '.join(HUGGING_FACE_TYPES)} checkpoints."
        )
    encoder_parts = ("embeddings.", "embeddings_project.", "encoder.")
    renamed = {}
    for key, value in state.items():
        key = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", key)
        key = re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", key)
        for prefix in ("electra.", "bert.", ""):
            if key.startswith(prefix) and key[len(prefix) :].startswith(encoder_parts):
                key = "electra." + key[len(prefix) :]
                break
        renamed[key] = value
    return renamed


def _config_from_hugging_face(disc: dict, gen: dict | None, untied: bool = False) -> ElectraConfig:
    hidden = disc["hidden_size"]
    act = disc.get("hidden_act", "gelu")
    if act != "gelu":
        raise ConfigError(f"config.json has hidden_act={act!r}; ELECTRA uses exact 'gelu'.")
    position = disc.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise ConfigError(
            f"config.json has position_embedding_type={position!r}; ELECTRA uses absolute "
            "positions."
        )
    model = {
        "vocabulary_size": disc["vocab_size"],
        "embedding_dim": disc.get("embedding_size", hidden),
        "hidden_dim": hidden,
        "num_layers": disc["num_hidden_layers"],
        "num_heads": disc["num_attention_heads"],
        "intermediate_dim": disc["intermediate_size"],
        "max_sequence_length": disc.get("max_position_embeddings", 512),
        "num_segments": disc.get("type_vocab_size", 2),
        "layer_norm_epsilon": disc.get("layer_norm_eps", 1e-12),
        "initializer_range": disc.get("initializer_range", 0.02),
    }
    if gen:
        embedding = gen.get("embedding_size", gen["hidden_size"])
        if embedding != model["embedding_dim"]:
            raise ConfigError(
                f"The generator's embedding size ({embedding}) differs from the "
                f"discriminator's ({model['embedding_dim']}); both must share one size."
            )
        model["generator_size_fraction"] = gen["hidden_size"] / hidden
        model["generator_layers_fraction"] = gen["num_hidden_layers"] / disc["num_hidden_layers"]
        model["generator_num_heads"] = gen["num_attention_heads"]
        model["generator_intermediate_dim"] = gen["intermediate_size"]
        if untied:
            model["weight_tying"] = "none"
    return ElectraConfig.from_dict(
        {"model": model, "data": {"sequence_length": min(128, model["max_sequence_length"])}}
    )


_EMBEDDING_BLOCK = (
    "electra.embeddings.word_embeddings.weight",
    "electra.embeddings.position_embeddings.weight",
    "electra.embeddings.token_type_embeddings.weight",
    "electra.embeddings.LayerNorm.weight",
    "electra.embeddings.LayerNorm.bias",
)


def _untied(disc_state: dict, gen_state: dict) -> bool:
    """Whether a generator checkpoint holds embeddings of its own (not the discriminator's)."""
    return any(
        key in gen_state
        and (
            key not in disc_state
            or gen_state[key].shape != disc_state[key].shape
            or not np.array_equal(gen_state[key], disc_state[key])
        )
        for key in _EMBEDDING_BLOCK
    )


def import_hugging_face(discriminator, generator=None, config: ElectraConfig | None = None):
    """An `ElectraPretrainer` from Hugging Face ELECTRA or BERT-family weights.

    Every size comes from the folders' config.json: the generator's hidden size, layers,
    heads and feed-forward size from its own. A generator whose embedding block differs
    from the discriminator's is imported untied (`model.weight_tying=none`).

    A BERT checkpoint (`BertModel`, `BertForMaskedLM`, ...) becomes the discriminator's
    encoder (embedding size = hidden size, so no `embeddings_project`). BERT's pooler
    (dense + tanh over [CLS]) is not part of ELECTRA and is not imported: the "pooled"
    output here is the [CLS] vector. Neither is its MLM head. The replaced-token head
    then keeps its fresh initialization; `import_report` says which parts were imported.

    Args:
        discriminator: folder (or weights file) of an `ElectraForPreTraining` (or a BERT)
            checkpoint.
        generator: optional folder of the matching `ElectraForMaskedLM` checkpoint.
        config: the config to build; by default from the folders' config.json.

    Returns:
        `ElectraPretrainer`; without a generator its generator keeps its initial weights.
        Its `import_report` attribute lists what came from the files.
    """
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    disc_state, disc_config = _load_state_dict(discriminator)
    if not disc_config and config is None:
        raise ConfigError(f"{discriminator} has no config.json; pass a config.")
    disc_state = _electra_layout(
        disc_state, disc_config.get("model_type", "electra"), discriminator
    )
    gen_state, gen_config = _load_state_dict(generator) if generator else ({}, None)
    if generator:
        gen_state = _electra_layout(gen_state, gen_config.get("model_type", "electra"), generator)
    untied = bool(generator) and _untied(disc_state, gen_state)
    if config is None:
        config = _config_from_hugging_face(disc_config, gen_config, untied)
    model = ElectraPretrainer(config)
    head_present = any(k.startswith("discriminator_predictions.") for k in disc_state)
    for name, variable, shape in reference_names(model):
        hf, transpose = hugging_face_name(name)
        is_generator = name.startswith(("generator/", "generator_predictions/"))
        state, source = (gen_state, generator) if is_generator else (disc_state, discriminator)
        if is_generator and not generator:
            continue
        if name.startswith("discriminator_predictions/") and not head_present:
            continue
        if hf not in state:
            raise ConfigError(f"{source}: the weights have no {hf}, which this config needs.")
        value = state[hf]
        if transpose:
            value = value.T
        _assign(variable, value.reshape(shape) if shape else value, hf, str(source))
    used = {hugging_face_name(name)[0] for name, _, _ in reference_names(model)}
    model.import_report = {
        "source": str(discriminator),
        "model_type": disc_config.get("model_type", "electra"),
        "discriminator_head": head_present,
        "generator": bool(generator),
        "weight_tying": config.model.weight_tying,
        "not_imported": sorted(k for k in disc_state if k not in used and "position_ids" not in k),
    }
    return model


def hugging_face_vocabulary(folder) -> tuple[str | None, bool]:
    """(vocab.txt path or None, lower_case) of a Hugging Face folder (tokenizer_config.json)."""
    folder = Path(folder)
    folder = folder if folder.is_dir() else folder.parent
    vocab = folder / "vocab.txt"
    lower = True
    if (folder / "tokenizer_config.json").exists():
        settings = json.loads((folder / "tokenizer_config.json").read_text())
        lower = bool(settings.get("do_lower_case", True))
    return (str(vocab) if vocab.exists() else None), lower


def with_vocabulary(model, vocab_file, lower_case: bool | None = None):
    """`model` rebuilt with a config that records `vocab_file`, its special ids and casing."""
    from electra_tf.data.vocabulary import read_vocabulary, special_ids
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    tokens = read_vocabulary(vocab_file)
    if len(tokens) != model.config.model.vocabulary_size:
        raise ConfigError(
            f"{vocab_file} holds {len(tokens)} tokens but the weights' vocabulary has "
            f"{model.config.model.vocabulary_size}; give the vocabulary they were trained with."
        )
    data = {"vocab_file": str(vocab_file), **{f"{k}_id": v for k, v in special_ids(tokens).items()}}
    if lower_case is not None:
        data["lower_case"] = bool(lower_case)
    rebuilt = ElectraPretrainer(model.config.update({"data": data}))
    for target, source in zip(rebuilt.weights, model.weights, strict=True):
        target.assign(source)
    rebuilt.import_report = getattr(model, "import_report", None)
    return rebuilt


def import_weights(
    out,
    *,
    hugging_face=None,
    hugging_face_generator=None,
    reference=None,
    num_heads: int | None = None,
    vocab_file=None,
    lower_case: bool | None = None,
):
    """Released weights into a run folder `out` whose step-0 checkpoint the commands read.

    The vocabulary (`vocab_file`, or the Hugging Face folder's vocab.txt) is copied into
    `out/vocab.txt` and recorded in the checkpoint's config with its casing (the folder's
    tokenizer_config.json, unless `lower_case` is given), so `export`, `finetune` and
    `pretrain --init` need no vocabulary flag afterwards. The checkpoint's `state.json`
    records what was imported (`import_report`).

    Returns:
        (the checkpoint folder, the imported `ElectraPretrainer`).
    """
    import shutil

    from electra_tf.pretraining.checkpoint import save_pretrainer

    folder_lower = None
    if reference:
        model = import_reference_checkpoint(reference, num_heads=num_heads)
        model.import_report = {"source": str(reference), "model_type": "electra (TF1)"}
    else:
        model = import_hugging_face(hugging_face, hugging_face_generator)
        found, folder_lower = hugging_face_vocabulary(hugging_face)
        vocab_file = vocab_file or found
    out = Path(out)
    if vocab_file:
        out.mkdir(parents=True, exist_ok=True)
        copy = out / "vocab.txt"
        if Path(vocab_file).resolve() != copy.resolve():
            shutil.copyfile(vocab_file, copy)
        casing = lower_case if lower_case is not None else folder_lower
        model = with_vocabulary(model, copy.resolve(), casing)
    report = getattr(model, "import_report", None) or {}
    folder = save_pretrainer(model, out, extra={"import_report": report})
    return folder, model


def hugging_face_config(encoder, architecture: str) -> dict:
    """A Hugging Face ELECTRA `config.json` with the sizes of `encoder` (an `EncoderConfig`)."""
    return {
        "architectures": [architecture],
        "model_type": "electra",
        "vocab_size": encoder.vocabulary_size,
        "embedding_size": encoder.embedding_dim,
        "hidden_size": encoder.hidden_dim,
        "num_hidden_layers": encoder.num_layers,
        "num_attention_heads": encoder.num_heads,
        "intermediate_size": encoder.intermediate_dim,
        "hidden_act": "gelu",
        "hidden_dropout_prob": encoder.dropout,
        "attention_probs_dropout_prob": encoder.dropout,
        "max_position_embeddings": encoder.max_sequence_length,
        "type_vocab_size": encoder.num_segments,
        "initializer_range": encoder.initializer_range,
        "layer_norm_eps": encoder.layer_norm_epsilon,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "summary_type": "first",
    }


def export_hugging_face(model, folder) -> dict:
    """Writes `folder/discriminator` (and `folder/generator` for a pretrainer) as HF checkpoints."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    discriminator = getattr(model, "discriminator", model)
    generator = getattr(model, "generator", None)
    disc_state, gen_state = {}, {}
    for name, variable, shape in reference_names(model):
        hf, transpose = hugging_face_name(name)
        value = np.asarray(variable.numpy(), np.float32)
        value = value.reshape(shape) if shape else value
        value = np.ascontiguousarray(value.T if transpose else value)
        if name.startswith(("generator/", "generator_predictions/")):
            gen_state[hf] = value
        else:
            disc_state[hf] = value
            if generator is not None and name.startswith("electra/embeddings/"):
                if generator.encoder.embeddings is discriminator.encoder.embeddings:
                    gen_state[hf] = value  # HF's generator holds its own copy of the shared block
            if generator is not None and generator.encoder is discriminator.encoder:
                gen_state.setdefault(hf, value)
    written = {}
    for part, state, encoder, architecture in (
        ("discriminator", disc_state, discriminator.encoder, "ElectraForPreTraining"),
        ("generator", gen_state, generator.encoder if generator else None, "ElectraForMaskedLM"),
    ):
        if encoder is None:
            continue
        if part == "generator":
            state["generator_lm_head.weight"] = state["electra.embeddings.word_embeddings.weight"]
            state = {
                k: v for k, v in state.items() if not k.startswith("discriminator_predictions")
            }
        target = folder / part
        target.mkdir(parents=True, exist_ok=True)
        save_file(state, str(target / "model.safetensors"), metadata={"format": "pt"})
        (target / "config.json").write_text(
            json.dumps(hugging_face_config(encoder, architecture), indent=2)
        )
        written[part] = target
    return written
