"""Hugging Face ELECTRA and BERT-family weights, in and out.

State-dict names derive from the reference names (`reference_checkpoint`):
`electra.encoder.layer.0.attention.self.query.weight`, ..., with PyTorch's
`[out, in]` kernels transposed.

- `import_hugging_face(discriminator, generator=None)`: folders or files with
  `model.safetensors` or `pytorch_model.bin` (PyTorch state dicts need torch),
  every size from their `config.json`.
- `import_hugging_face_encoder(folder)`: the discriminator's encoder alone (fine-tuning).
- `export_hugging_face(model, folder)`: `discriminator/` and `generator/` folders
  that `transformers` loads with `ElectraForPreTraining` / `ElectraForMaskedLM`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.io.durable import publishing
from electra_tf.serving.reference_checkpoint import assign_weight, encoder_entries, reference_names

__all__ = [
    "HUGGING_FACE_TYPES",
    "hugging_face_name",
    "import_hugging_face",
    "import_hugging_face_encoder",
    "hugging_face_vocabulary",
    "hugging_face_config",
    "hugging_face_value",
    "encoder_state",
    "export_hugging_face",
]


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


#: config.json keys every importer here reads.
_REQUIRED = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads")


def _read_json(path: Path, what: str) -> dict:
    """A JSON object file, or one sentence naming it when it is cut short or not an object."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigError(
            f"{path} is not readable JSON ({str(error)[:120]}); the {what} is damaged or cut "
            "short: download it again."
        ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path} holds no JSON object; the {what} is damaged: download it again.")
    return value


def _read_weights(weights: Path) -> dict:
    """The state dict of a `.safetensors` or PyTorch file as float32 numpy arrays."""
    if weights.suffix == ".safetensors":
        from safetensors.numpy import load_file

        try:
            return dict(load_file(str(weights)))
        except Exception as error:  # noqa: BLE001 - safetensors raises its own SafetensorError
            raise ConfigError(
                f"{weights} cannot be read ({str(error)[:120]}); it is damaged or cut short: "
                "download it again."
            ) from None
    try:
        import torch
    except ImportError:
        raise ConfigError(
            f"{weights} is a PyTorch state dict; install torch to read it, or convert it to "
            "safetensors."
        ) from None
    try:
        state = torch.load(str(weights), map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - pickle, zip and torch errors alike
        raise ConfigError(
            f"{weights} cannot be read ({str(error)[:120]}); it is damaged or cut short: "
            "download it again."
        ) from None
    return {k: v.float().numpy() for k, v in state.items()}


def _load_state_dict(source) -> tuple[dict, dict]:
    """(state dict of numpy arrays, config.json dict) from a folder or a weights file."""
    source = Path(source)
    folder = source if source.is_dir() else source.parent
    config = {}
    if (folder / "config.json").exists():
        config = _read_json(folder / "config.json", "model's config")
        missing = [key for key in _REQUIRED if key not in config]
        if missing:
            raise ConfigError(
                f"{folder / 'config.json'} has no {missing[0]!r}; it is not a complete "
                "Hugging Face config: download it again."
            )
    files = (
        [source]
        if source.is_file()
        else [p for p in (folder / "model.safetensors", folder / "pytorch_model.bin") if p.exists()]
    )
    if not files:
        raise ConfigError(f"{source} holds neither model.safetensors nor pytorch_model.bin.")
    return _read_weights(files[0]), config


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
    """An `ElectraPretrainer` from Hugging Face ELECTRA or BERT-family weights: from
    `discriminator`, the folder (or weights file) of an `ElectraForPreTraining` or a BERT,
    and `generator`, an optional `ElectraForMaskedLM` folder (without one the generator
    keeps its initial weights); `config` by default from the folders' config.json, the
    generator's sizes from its own. A generator whose embedding block differs from the
    discriminator's is imported untied (`model.weight_tying=none`).

    A BERT checkpoint becomes the discriminator's encoder (embedding size = hidden size, no
    `embeddings_project`); its pooler (dense + tanh over [CLS], not ELECTRA's: the "pooled"
    output here is the [CLS] vector) and MLM head are not imported, and the replaced-token
    head keeps its fresh initialization. `model.import_report` lists what came from the files.
    """
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    disc_state, disc_config = _discriminator_state(discriminator, config)
    gen_state, gen_config = _load_state_dict(generator) if generator else ({}, None)
    if generator:
        gen_state = _electra_layout(gen_state, gen_config.get("model_type", "electra"), generator)
    untied = bool(generator) and _untied(disc_state, gen_state)
    if config is None:
        config = _config_from_hugging_face(disc_config, gen_config, untied)
    model = ElectraPretrainer(config)
    head_present = any(k.startswith("discriminator_predictions.") for k in disc_state)
    for name, variable, shape in reference_names(model):
        is_generator = name.startswith(("generator/", "generator_predictions/"))
        if is_generator and not generator:
            continue
        if name.startswith("discriminator_predictions/") and not head_present:
            continue
        state, source = (gen_state, generator) if is_generator else (disc_state, discriminator)
        _assign(state, source, name, variable, shape)
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


def _discriminator_state(discriminator, config) -> tuple[dict, dict]:
    """(state dict in ELECTRA's layout, config.json) of a discriminator or BERT folder."""
    state, found = _load_state_dict(discriminator)
    if not found and config is None:
        raise ConfigError(f"{discriminator} has no config.json; pass a config.")
    return _electra_layout(state, found.get("model_type", "electra"), discriminator), found


def import_hugging_face_encoder(discriminator):
    """(the discriminator's `ElectraEncoder` named "encoder", its `ElectraConfig`) from a
    Hugging Face ELECTRA or BERT folder: what fine-tuning keeps of `import_hugging_face`,
    built without the generator and the heads (each weight assigned, none drawn)."""
    from electra_tf.layers.initializers import draws_skipped
    from electra_tf.models.encoder import ElectraEncoder

    state, found = _discriminator_state(discriminator, None)
    config = _config_from_hugging_face(found, None)
    sizes = config.model.discriminator().to_dict()
    with draws_skipped():
        encoder = ElectraEncoder(name="encoder", dtype=config.train.mixed_precision, **sizes)
        encoder.build()
    for name, variable, shape in encoder_entries(encoder, "electra", True, "electra"):
        _assign(state, discriminator, name, variable, shape)
    return encoder, config


def _assign(state: dict, source, name: str, variable, shape) -> None:
    """Sets `variable` (reference name `name`) from its entry in the state dict."""
    hf, transpose = hugging_face_name(name)
    if hf not in state:
        raise ConfigError(f"{source}: the weights have no {hf}, which this config needs.")
    value = state[hf].T if transpose else state[hf]
    assign_weight(variable, value.reshape(shape) if shape else value, hf, str(source))


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _recorded_casing(folder: Path) -> bool | None:
    """tokenizer_config.json's `do_lower_case`, else tokenizer.json's normalizer's."""
    if (folder / "tokenizer_config.json").exists():
        settings = _read_json(folder / "tokenizer_config.json", "tokenizer's config")
        if isinstance(settings.get("do_lower_case"), bool):
            return settings["do_lower_case"]
    if (folder / "tokenizer.json").exists():
        normalizer = _read_json(folder / "tokenizer.json", "tokenizer").get("normalizer") or {}
        if isinstance(normalizer.get("lowercase"), bool):
            return normalizer["lowercase"]
    return None


def hugging_face_vocabulary(folder, log=_stderr) -> tuple[str | None, bool]:
    """(vocab.txt path or None, lower_case) of a Hugging Face folder.

    The casing is tokenizer_config.json's `do_lower_case`, else the `lowercase` of
    tokenizer.json's normalizer. A folder that records neither is taken as lower-cased
    (BERT's default, as `transformers` does), and `log` says so in one line.
    """
    folder = Path(folder)
    folder = folder if folder.is_dir() else folder.parent
    vocab = folder / "vocab.txt"
    lower = _recorded_casing(folder)
    if lower is None:
        lower = True
        log(
            f"[import] {folder} records no casing (no do_lower_case in tokenizer_config.json, "
            "no tokenizer.json); assuming lower-cased text, as BERT's uncased models: pass "
            "--no-lower-case for a cased vocabulary."
        )
    return (str(vocab) if vocab.exists() else None), lower


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


def hugging_face_value(name: str, variable, shape=None) -> tuple[str, np.ndarray]:
    """(state-dict name, float32 array) of one `reference_names` entry: reshaped to the
    reference shape, transposed where PyTorch keeps `[out, in]`."""
    hf, transpose = hugging_face_name(name)
    value = np.asarray(variable.numpy(), np.float32)
    value = value.reshape(shape) if shape else value
    return hf, np.ascontiguousarray(value.T if transpose else value)


def encoder_state(encoder) -> dict:
    """An `ElectraEncoder`'s weights as a Hugging Face `ElectraModel` state dict (numpy)."""
    return dict(
        hugging_face_value(*entry) for entry in encoder_entries(encoder, "electra", True, "electra")
    )


def export_hugging_face(model, folder) -> dict:
    """Writes `folder/discriminator` (and `folder/generator` for a pretrainer) as HF checkpoints."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    discriminator = getattr(model, "discriminator", model)
    generator = getattr(model, "generator", None)
    disc_state, gen_state = {}, {}
    for name, variable, shape in reference_names(model):
        hf, value = hugging_face_value(name, variable, shape)
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
        with publishing(target) as scratch:  # synced and renamed into place; removed on error
            try:
                save_file(state, str(scratch / "model.safetensors"), metadata={"format": "pt"})
            except Exception as error:  # noqa: BLE001 - safetensors raises its own SafetensorError
                raise OSError(str(error).splitlines()[0][:200]) from None
            config = hugging_face_config(encoder, architecture)
            (scratch / "config.json").write_text(json.dumps(config, indent=2))
        written[part] = target
    return written
