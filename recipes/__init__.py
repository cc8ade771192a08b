"""Named configurations, shipped as TOML files and installed as `electra_tf.recipes`.

`pretrain/*.toml` are partial `ElectraConfig` tables over the defaults (which
are ELECTRA-Small's); load one with `electra_tf.load_recipe(name)`.
"""
