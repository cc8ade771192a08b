import os
import tensorflow as tf

def pytest_configure(config):
    tf.debugging.experimental.enable_dump_debug_info(
        os.environ["DUMP_DIR"], tensor_debug_mode="FULL_TENSOR", circular_buffer_size=-1)
