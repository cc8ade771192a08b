# A child script standing for a backend child: imports Keras, keras-hub and the encoder; prints backend, CPU-s and the loaded optional packages.
import sys, time, resource
import keras, keras_hub
import electra_tf.models.encoder
r = resource.getrusage(resource.RUSAGE_SELF)
print(keras.backend.backend(), f"cpu {r.ru_utime+r.ru_stime:.1f}", sorted(m for m in ("sklearn","pandas","jax","scipy","matplotlib","cv2","tensorflow") if m in sys.modules))
