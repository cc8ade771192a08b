"""Diagnostic (not the decision): our kept models re-scored with BertForQuestionAnswering's
no-answer rule (best span score minus the [CLS] null score, threshold chosen on dev), beside
ours (the answerability logit). Same windows, same candidate search, same scoring.
usage: null_rule.py  -> prints per seed: test F1 with our rule, with the null rule"""
import os, json, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3"); os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np, keras
from electra_tf.datasets import squad
from electra_tf.metrics import squad_scores
from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer, window_outputs
# seed 3's model.keras was saved while a commit had dropped the class's registration
keras.saving.get_custom_objects()["ElectraQuestionAnswerer"] = ElectraQuestionAnswerer

split = {s: squad.read_squad(f"data/{s}.json") for s in ("dev", "test")}
refs = {s: {e.qid: e.answers for e in ex} for s, ex in split.items()}
out = []
for seed in (1, 2, 3):
    model = keras.saving.load_model(f"out/ours_s{seed}/model/model.keras")
    rows = {}
    for rule in ("answerability", "null"):
        details = {}
        for s, ex in split.items():
            w = model.preprocessor.windows(ex)
            o = window_outputs(model, w.inputs, 128)
            d = squad.answer_details(ex, w, o, True, model.n_best, model.max_answer_length)
            if rule == "null":
                best, null = {}, {}
                for k, i in enumerate(w.example_index):
                    q = ex[int(i)].qid
                    c = squad.best_spans(o["start_logits"][k], o["end_logits"][k], w.token_to_word[k], w.max_context[k], model.n_best, model.max_answer_length)
                    if c: best[q] = max(best.get(q, -np.inf), c[0][0])
                    null[q] = min(null.get(q, np.inf), float(o["start_logits"][k][0] + o["end_logits"][k][0]))
                for q, v in d.items():
                    v["answerable_logit"] = best.get(q, -1e9) - null[q]
            details[s] = d
        threshold, _ = squad.best_threshold(details["dev"], refs["dev"])
        for s in ("dev", "test"):
            d = squad.with_threshold(details[s], threshold)
            rows[f"{rule}_{s}_f1"] = round(squad_scores({q: v["answer"] for q, v in d.items()}, refs[s])["f1"], 2)
    out.append({"seed": seed, **rows}); print(out[-1], flush=True)
json.dump(out, open("null_rule.json", "w"), indent=1)
