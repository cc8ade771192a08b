import tensorflow as tf
_lib = tf.load_op_library("/tmp/s28/op/gelu_op.so")

@tf.custom_gradient
def gelu_op(x):
    y, d = _lib.gelu_exact_with_derivative(x)
    def grad(upstream):
        return upstream * d
    return y, grad

_dlib = tf.load_op_library("/tmp/s28/op/dropout_op.so")

def dropout_op(inputs, rate, seed):
    threshold = round(rate * 65536)
    if threshold == 0:
        return inputs
    scale = 1.0 / (1.0 - rate)

    @tf.custom_gradient
    def inner(x):
        def grad(upstream):
            return _dlib.hash_dropout(upstream, seed, threshold=threshold, scale=scale)
        return _dlib.hash_dropout(x, seed, threshold=threshold, scale=scale), grad

    return inner(inputs)
