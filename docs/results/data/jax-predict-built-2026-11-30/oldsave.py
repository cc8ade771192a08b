import sys, keras, numpy as np
from pathlib import Path
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.tasks.text_classifier import ElectraTextClassifier
vocab = str(write_vocabulary([*SPECIAL_TOKENS, "good", "bad"], Path("/tmp/oldv.txt")))
keras.utils.set_random_seed(0)
m = ElectraTextClassifier.from_source("scratch:tiny", labels=["n", "p"], vocab_file=vocab)
m.fit(["good", "bad", "good good", "bad bad"], ["p", "n", "p", "n"], epochs=1, verbose=0)
m.save("/tmp/old.keras"); np.save("/tmp/old_out.npy", m.predict(["good bad", "bad"]))
print("saved; preprocessor built:", m.preprocessor.built)
