"""The paper's comparisons at a scale one machine runs: objectives at equal FLOPs, generators."""
