"""Pre-training: the pretrainer model, its objectives, the optimizer, callbacks and the run."""
