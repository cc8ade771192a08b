#!/usr/bin/env bash
# The TensorFlow import the PyTorch loops' timers held before 6c63874: 3 fresh processes,
# torch and transformers first (imported before those timers then too), then the module timed.
for round in 1 2 3; do
  python - "$round" <<'PY' 2>/dev/null
import json, sys, time
import torch, transformers  # noqa: F401
from transformers import BertForQuestionAnswering  # noqa: F401
started = time.perf_counter()
import electra_tf.data.batching  # noqa: F401
batching = time.perf_counter() - started
import electra_tf.tasks.question_answerer_preprocessor  # noqa: F401
both = time.perf_counter() - started
print(json.dumps({"round": int(sys.argv[1]), "batching_s": round(batching, 2),
                  "batching_and_qa_preprocessor_s": round(both, 2)}))
PY
done
