"""An independent NumPy implementation of the ELECTRA encoder and heads (BERT layout).

Used to check the Keras models: weights are read from a model, the forward
pass is recomputed here with exact GELU and LayerNorm epsilon 1e-12.
"""

import numpy as np
from scipy.special import erf


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def layer_norm(x, gamma, beta, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def n(variable):
    return np.asarray(variable.numpy(), np.float64)


def encoder_weights(encoder):
    """The weights of an `ElectraEncoder` as plain arrays, in BERT's terms."""
    emb = encoder.embeddings
    weights = {
        "word": n(emb.token_embedding.embeddings),
        "position": n(emb.position_embedding.embeddings),
        "segment": n(emb.segment_embedding.embeddings),
        "emb_ln": (n(emb.layer_norm.gamma), n(emb.layer_norm.beta)),
        "project": None,
        "layers": [],
    }
    if encoder.embeddings_project is not None:
        weights["project"] = (
            n(encoder.embeddings_project.kernel),
            n(encoder.embeddings_project.bias),
        )
    hidden = encoder.hidden_dim
    for layer in encoder.transformer_layers:
        att = layer._self_attention_layer
        weights["layers"].append(
            {
                "q": (
                    n(att._query_dense.kernel).reshape(hidden, -1),
                    n(att._query_dense.bias).reshape(-1),
                ),
                "k": (
                    n(att._key_dense.kernel).reshape(hidden, -1),
                    n(att._key_dense.bias).reshape(-1),
                ),
                "v": (
                    n(att._value_dense.kernel).reshape(hidden, -1),
                    n(att._value_dense.bias).reshape(-1),
                ),
                "o": (n(att._output_dense.kernel).reshape(-1, hidden), n(att._output_dense.bias)),
                "ln1": (
                    n(layer._self_attention_layer_norm.gamma),
                    n(layer._self_attention_layer_norm.beta),
                ),
                "ffn1": (
                    n(layer._feedforward_intermediate_dense.kernel),
                    n(layer._feedforward_intermediate_dense.bias),
                ),
                "ffn2": (
                    n(layer._feedforward_output_dense.kernel),
                    n(layer._feedforward_output_dense.bias),
                ),
                "ln2": (
                    n(layer._feedforward_layer_norm.gamma),
                    n(layer._feedforward_layer_norm.beta),
                ),
            }
        )
    return weights


def encoder_forward(w, token_ids, segment_ids, padding_mask, num_heads):
    """Sequence output [B, S, H] of a BERT-layout encoder, dropout off."""
    length = token_ids.shape[1]
    x = w["word"][token_ids] + w["position"][:length][None] + w["segment"][segment_ids]
    x = layer_norm(x, *w["emb_ln"])
    if w["project"] is not None:
        x = x @ w["project"][0] + w["project"][1]
    batch, _, hidden = x.shape
    head = hidden // num_heads
    visible = padding_mask.astype(bool)[:, None, None, :]
    for layer in w["layers"]:

        def split(t):
            return t.reshape(batch, length, num_heads, head)

        q = split(x @ layer["q"][0] + layer["q"][1])
        k = split(x @ layer["k"][0] + layer["k"][1])
        v = split(x @ layer["v"][0] + layer["v"][1])
        scores = np.einsum("bqnh,bknh->bnqk", q, k) / np.sqrt(head)
        probs = softmax(np.where(visible, scores, -1e9))
        context = np.einsum("bnqk,bknh->bqnh", probs, v).reshape(batch, length, hidden)
        x = layer_norm(x + context @ layer["o"][0] + layer["o"][1], *layer["ln1"])
        inner = gelu(x @ layer["ffn1"][0] + layer["ffn1"][1])
        x = layer_norm(x + inner @ layer["ffn2"][0] + layer["ffn2"][1], *layer["ln2"])
    return x


def discriminator_forward(model, token_ids, segment_ids, padding_mask):
    encoder = model.encoder
    x = encoder_forward(
        encoder_weights(encoder), token_ids, segment_ids, padding_mask, encoder.num_heads
    )
    head = model.rtd_head
    hidden = gelu(x @ n(head.dense.kernel) + n(head.dense.bias))
    return (hidden @ n(head.dense_prediction.kernel) + n(head.dense_prediction.bias))[..., 0]


def generator_forward(model, token_ids, segment_ids, padding_mask, positions):
    encoder = model.encoder
    w = encoder_weights(encoder)
    x = encoder_forward(w, token_ids, segment_ids, padding_mask, encoder.num_heads)
    x = np.take_along_axis(x, positions[..., None], axis=1)
    head = model.mlm_head
    x = gelu(x @ n(head._intermediate_dense.kernel) + n(head._intermediate_dense.bias))
    x = layer_norm(x, n(head._intermediate_layer_norm.gamma), n(head._intermediate_layer_norm.beta))
    return x @ w["word"].T + n(head._bias)
