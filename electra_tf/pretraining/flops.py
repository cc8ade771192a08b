"""FLOP accounting: the paper's (Appendix E) and matmul-only, both from the config.

The paper counts a multiply-add as 2 FLOPs, the backward pass as equal to the
forward pass (so training is 2 x forward), embedding lookups as dense
one-hot matmuls, and small constants for elementwise work (dropout 4,
LayerNorm 5, GELU 8, softmax 5 per element). `TransformerFlops` reproduces
that accounting; `electra_train_flops` adds the generator and discriminator.
Checked in tests: BERT-Small 1.4e18 (1.45M steps, batch 128, length 128),
ELECTRA-Base 6.4e19 and 3.7e9 for one length-128 inference, the paper's
figures. For ELECTRA-Small the reference script and this module give
1.29e18 with the 1/4-size generator; the paper's table says 1.4e18, which
this accounting gives with a 1/2-size generator (1.42e18). One deliberate
difference from the reference script: LayerNorm after attention is counted
per hidden unit (the script counts 5 FLOPs per token there), which moves
totals by less than 0.1%.

Conventions (`CONVENTIONS`): "paper" (the default) counts the embedding lookup as the
one-hot matmul above, as Appendix E and the reference's `flops_computation.py` do;
"sparse" counts it as free, like that script's `sparse_embed_lookup` switch. At
all-MiniLM-L6-v2's size (hidden 384, vocabulary 30,522) the lookup is most of an
ELECTRA step's counted FLOPs, so the convention changes how many steps of one objective
a budget buys against another's (`with convention("sparse"): ...`).

`matmul_step_flops` is the throughput benchmarks' measure: matmuls only,
2*m*n*k, training step = 3 x forward, the vocabulary projection at the
masked positions only.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses

__all__ = [
    "CONVENTIONS",
    "convention",
    "TransformerFlops",
    "model_shapes",
    "electra_train_flops",
    "inference_flops",
    "matmul_step_flops",
]

DROPOUT = 4  # random number, compare, mask, rescale
LAYER_NORM = 5  # mean, variance (square, sum), scale, shift
ACTIVATION = 8  # GELU
SOFTMAX = 5  # max, subtract, exp, sum, divide

CONVENTIONS = ("paper", "sparse")
_SPARSE_LOOKUP = contextvars.ContextVar("sparse_lookup", default=False)


@contextlib.contextmanager
def convention(name: str):
    """Counts every FLOP figure taken from a config inside the block by convention `name`."""
    from electra_tf.config import ConfigError

    if name not in CONVENTIONS:
        raise ConfigError(
            f"Unknown FLOP convention {name!r}: choose from {', '.join(CONVENTIONS)}."
        )
    token = _SPARSE_LOOKUP.set(name == "sparse")
    try:
        yield
    finally:
        _SPARSE_LOOKUP.reset(token)


@dataclasses.dataclass(frozen=True)
class TransformerFlops:
    """Forward FLOPs of one BERT-style encoder on one sequence (Appendix E)."""

    hidden: int
    layers: int
    seq_len: int = 512
    vocab: int = 30522
    embedding: int | None = None
    intermediate: int | None = None
    heads: int | None = None
    output_fraction: float = 0.15625  # share of positions with an MLM softmax (20 / 128)
    sparse_lookup: bool = False  # True: embedding lookups cost nothing

    @property
    def e(self) -> int:
        return self.hidden if self.embedding is None else self.embedding

    @property
    def i(self) -> int:
        return 4 * self.hidden if self.intermediate is None else self.intermediate

    @property
    def num_heads(self) -> int:
        return max(self.hidden // 64, 1) if self.heads is None else self.heads

    def block(self) -> float:
        """One Transformer block, per sequence."""
        h, s, i, n = self.hidden, self.seq_len, self.i, self.num_heads
        per_token = (
            3 * 2 * h * h
            + 3 * h  # query, key, value (+ bias)
            + 2 * h * s
            + (SOFTMAX + DROPOUT + 1) * s * n  # scores, softmax, dropout, scale
            + 2 * h * s  # weighted values
            + 2 * h * h
            + h
            + (DROPOUT + 1 + LAYER_NORM) * h  # attention output
            + 2 * h * i
            + i
            + ACTIVATION * i  # intermediate
            + 2 * h * i
            + h
            + (DROPOUT + 1 + LAYER_NORM) * h  # output
        )
        return per_token * s

    def embeddings(self) -> float:
        """The input embedding block (and E -> H projection), per sequence."""
        e, h, s = self.e, self.hidden, self.seq_len
        per_token = 0 if self.sparse_lookup else 2 * e * self.vocab
        per_token += 2 * e * (s + 2) + 2 * e + (LAYER_NORM + DROPOUT) * e  # position, segment
        if e != h:
            per_token += 2 * h * e + h
        return per_token * s

    def mlm_head(self) -> float:
        """Generator output: dense, GELU, LayerNorm, vocabulary softmax at masked positions."""
        e, h, v = self.e, self.hidden, self.vocab
        per_token = 2 * e * v + 2 * h * e + e + (ACTIVATION + LAYER_NORM) * e + SOFTMAX * v + 2 * v
        return self.output_fraction * per_token * self.seq_len

    def rtd_head(self) -> float:
        """Binary per-token head: dense(H), GELU, dense(1)."""
        h = self.hidden
        return (2 * h * h + h + ACTIVATION * h + 2 * h) * self.seq_len

    def forward(self, head: str) -> float:
        heads = {"mlm": self.mlm_head, "rtd": self.rtd_head, "none": lambda: 0.0}
        return self.layers * self.block() + self.embeddings() + heads[head]()

    def train(self, batch_size: int, steps: float, head: str) -> float:
        """Training FLOPs: 2 x forward (backward = forward) per example."""
        return 2.0 * batch_size * steps * self.forward(head)


def model_shapes(config) -> tuple[TransformerFlops, TransformerFlops]:
    """(discriminator, generator) `TransformerFlops` of a config; MLM heads at the masked share."""
    model, seq = config.model, config.data.sequence_length
    fraction = config.num_predictions / seq
    d, g = model.discriminator(), model.generator()
    disc = TransformerFlops(
        d.hidden_dim,
        d.num_layers,
        seq,
        d.vocabulary_size,
        d.embedding_dim,
        d.intermediate_dim,
        d.num_heads,
        fraction,
        _SPARSE_LOOKUP.get(),
    )
    gen = TransformerFlops(
        g.hidden_dim,
        g.num_layers,
        seq,
        g.vocabulary_size,
        g.embedding_dim,
        g.intermediate_dim,
        g.num_heads,
        fraction,
        _SPARSE_LOOKUP.get(),
    )
    return disc, gen


def electra_train_flops(config, steps: float = 1.0, batch_size: int | None = None) -> float:
    """Appendix-E training FLOPs of the ELECTRA objective (generator + discriminator)."""
    disc, gen = model_shapes(config)
    batch = config.train.batch_size if batch_size is None else batch_size
    return disc.train(batch, steps, "rtd") + gen.train(batch, steps, "mlm")


def inference_flops(config) -> float:
    """Appendix-E FLOPs of one discriminator forward pass with a classification head."""
    disc, _ = model_shapes(config)
    return disc.forward("rtd")


def matmul_step_flops(config, batch_size: int) -> dict:
    """Matmul-only FLOPs of one ELECTRA step (2*m*n*k; step = 3 x forward).

    The vocabulary projection is counted at the masked positions only (N per
    sequence); this is the "model FLOPs" of the throughput benchmark.
    """
    model, seq = config.model, config.data.sequence_length
    tokens = batch_size * seq
    n_masked = batch_size * config.num_predictions

    def encoder(c) -> float:
        flops = (
            2 * tokens * c.embedding_dim * c.hidden_dim if c.embedding_dim != c.hidden_dim else 0
        )
        per_layer = 2 * tokens * (4 * c.hidden_dim**2 + 2 * c.hidden_dim * c.intermediate_dim)
        per_layer += 2 * 2 * tokens * seq * c.hidden_dim  # QK^T and AV
        return flops + c.num_layers * per_layer

    d, g = model.discriminator(), model.generator()
    generator = encoder(g)
    generator_head = (
        2 * n_masked * (g.hidden_dim * g.embedding_dim + g.embedding_dim * g.vocabulary_size)
    )
    discriminator = encoder(d)
    discriminator_head = 2 * tokens * (d.hidden_dim * d.hidden_dim + d.hidden_dim)
    forward = generator + generator_head + discriminator + discriminator_head
    return {"forward": forward, "step": 3 * forward}
