import keras, numpy as np, electra_tf
from electra_tf.tasks.base import inference_function
m = keras.saving.load_model("/tmp/old.keras")
out = m.predict(["good bad", "bad"])
print("loaded; unbuilt:", [l.name for l in m._flatten_layers() if not l.built], "max diff", float(np.abs(out - np.load("/tmp/old_out.npy")).max()))
