"""`electra-tf ...` with `exact_gradient_sums` made a no-op: the code before the change."""
import sys

import electra_tf.pretraining.distribute as distribute

distribute.exact_gradient_sums = lambda: None
from electra_tf.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
