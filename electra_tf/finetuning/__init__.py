"""Fine-tuning and evaluation: tasks, readers, metrics, layer-wise learning rates, seeds."""
