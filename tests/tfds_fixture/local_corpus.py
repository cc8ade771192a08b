"""`local_corpus`: a GeneratorBasedBuilder whose examples come from this file, built offline."""

import tensorflow as tf
import tensorflow_datasets as tfds

TEXTS = ("First article. It has two sentences.", "Second article!", "")


class LocalCorpus(tfds.core.GeneratorBasedBuilder):
    """Three short articles (one empty), with a text feature and an id."""

    VERSION = tfds.core.Version("1.0.0")

    def _info(self):
        return self.dataset_info_from_configs(
            features=tfds.features.FeaturesDict(
                {"text": tfds.features.Text(), "id": tfds.features.Scalar(tf.int32)}
            )
        )

    def _split_generators(self, dl_manager):
        return {"train": self._generate_examples()}

    def _generate_examples(self):
        for i, text in enumerate(TEXTS):
            yield i, {"text": text, "id": i}
