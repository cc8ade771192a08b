"""The peers of `bench serving --run`: the fine-tuned classifier's weights as a PyTorch module
(Hugging Face's `ElectraModel` and a linear layer on [CLS]), its ONNX exports (BERT-fused,
and int8), ONNX Runtime sessions and the fast tokenizer over the run's vocabulary
(`electra_tf.bench.task_serving`'s `onnxruntime*` and `pipeline` runtimes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["torch_module", "hf_tokenizer", "onnx_models", "onnx_session", "feeds", "load_torch"]


def torch_module(model):
    """A PyTorch module (`ElectraModel` and a linear layer on [CLS]) with the Keras
    classifier's weights."""
    import torch
    from transformers import ElectraConfig

    from electra_tf.serving.hugging_face import encoder_state, hugging_face_config

    labels = list(model.labels)
    config = hugging_face_config(model.encoder, "ElectraForSequenceClassification")
    config.update(id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)})
    module = _torch_class()(ElectraConfig(**config)).eval()
    state = {name: torch.from_numpy(value) for name, value in encoder_state(model.encoder).items()}
    state["classifier.weight"] = torch.from_numpy(model.output_dense.kernel.numpy().T.copy())
    state["classifier.bias"] = torch.from_numpy(model.output_dense.bias.numpy().copy())
    missing, unexpected = module.load_state_dict(state, strict=False)
    if unexpected or [m for m in missing if "position_ids" not in m]:
        raise RuntimeError(f"weights not mapped: missing {missing}, unexpected {unexpected}")
    return module


def hf_tokenizer(folder: Path, lower_case: bool, seq: int):
    from transformers import BertTokenizerFast

    return BertTokenizerFast(  # transformers 5: `vocab` takes the vocab.txt path
        vocab=str(folder / "vocab.txt"), do_lower_case=lower_case, model_max_length=seq
    )


def onnx_models(module, work: Path, heads: int, hidden: int) -> dict:
    """model.onnx (BERT-fused by onnxruntime's optimizer) and model_int8.onnx."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    names = ["input_ids", "attention_mask", "token_type_ids"]
    ids = torch.ones(2, 8, dtype=torch.long)
    raw = work / "model_raw.onnx"
    module.set_attn_implementation("eager")  # traced as plain ops, which the fusions match
    torch.onnx.export(
        module, (ids, ids, ids * 0), str(raw), input_names=names, output_names=["logits"],
        dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names}, opset_version=17,
        dynamo=False,
    )  # fmt: skip
    module.set_attn_implementation("sdpa")
    fused = optimizer.optimize_model(
        str(raw), model_type="bert", num_heads=heads, hidden_size=hidden
    )
    fused.save_model_to_file(str(work / "model.onnx"))
    quantize_dynamic(
        str(work / "model.onnx"), str(work / "model_int8.onnx"), weight_type=QuantType.QInt8,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},  # fused ops' outputs
    )  # fmt: skip
    return {"fused_ops": {k: v for k, v in fused.get_fused_operator_statistics().items() if v}}


def onnx_session(path: Path, threads: int, parallel: bool = False):
    """`threads` intra-op threads, or with `parallel` the parallel executor on `threads`
    inter-op threads of 1 intra-op thread each."""
    import onnxruntime as ort

    settings = ort.SessionOptions()
    settings.intra_op_num_threads, settings.inter_op_num_threads = threads, 1
    if parallel:
        settings.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        settings.intra_op_num_threads, settings.inter_op_num_threads = 1, threads
    return ort.InferenceSession(str(path), settings, providers=["CPUExecutionProvider"])


def feeds(encoded) -> dict:
    names = ("input_ids", "attention_mask", "token_type_ids")
    return {name: np.asarray(encoded[name], np.int64) for name in names}


def load_torch(work: Path):
    return _torch_class().from_pretrained(str(work / "hf")).eval()


def _torch_class():
    import torch
    from transformers import ElectraModel, ElectraPreTrainedModel
    from transformers.modeling_outputs import SequenceClassifierOutput

    class ClassifierOnCLS(ElectraPreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.electra = ElectraModel(config)
            self.classifier = torch.nn.Linear(config.hidden_size, config.num_labels)
            self.post_init()

        def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, **_):
            hidden = self.electra(
                input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            return SequenceClassifierOutput(logits=self.classifier(hidden[:, 0]))

    return ClassifierOnCLS
