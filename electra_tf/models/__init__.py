"""The encoder, the generator, the discriminator (and, later, fine-tuning models)."""

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.models.generator import ElectraGenerator

__all__ = ["ElectraEncoder", "ElectraGenerator", "ElectraDiscriminator"]
