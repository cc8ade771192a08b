"""A real TFDS dataset builder over local text, for the TFDS reader test (no download)."""
