# MiniLM-shaped weights (all-MiniLM-L6-v2: vocabulary 30,522, hidden 384, 6 blocks, FFN 1,536): 22.6M; read by the probes here.
shapes = [("word_embeddings", (30522, 384)), ("position_embeddings", (512, 384)), ("type", (2, 384)),
          ("emb_ln/gamma", (384,)), ("emb_ln/beta", (384,))]
for i in range(6):
    for p in "qkvo":
        shapes += [(f"l{i}/{p}/kernel", (384, 384)), (f"l{i}/{p}/bias", (384,))]
    shapes += [(f"l{i}/ffn1/kernel", (384, 1536)), (f"l{i}/ffn1/bias", (1536,)),
               (f"l{i}/ffn2/kernel", (1536, 384)), (f"l{i}/ffn2/bias", (384,))]
    for n in ("ln1", "ln2"):
        shapes += [(f"l{i}/{n}/gamma", (384,)), (f"l{i}/{n}/beta", (384,))]
