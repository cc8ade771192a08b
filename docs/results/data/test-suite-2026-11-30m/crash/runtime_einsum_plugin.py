"""pytest plugin: the run-time shapes of every einsum (to /tmp/vg/rte.log)."""
def pytest_configure(config):
    import tensorflow as tf
    from tensorflow.python.ops import gen_linalg_ops
    orig = gen_linalg_ops.einsum
    def einsum(inputs, equation, name=None):
        p = tf.print("E", equation, *[tf.shape(i) for i in inputs], output_stream="file:///tmp/vg/rte.log")
        with tf.control_dependencies([p]):
            inputs = [tf.identity(i) for i in inputs]
        return orig(inputs, equation, name=name)
    gen_linalg_ops.einsum = einsum
