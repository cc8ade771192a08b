"""Fine-tuning's QA scoring path (`window_outputs` as `tasks/kinds/question_answering.py`
calls it) on JAX: distinct batch shapes and seconds for 300 questions, one process."""

import json
import os
import sys
import time

import keras

from electra_tf.bench.finetune import FinetuneBenchOptions, workload
from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer, window_outputs
from electra_tf.tasks.question_answerer_preprocessor import as_examples

encoder, splits, _, _ = workload(FinetuneBenchOptions(data_dir=sys.argv[1]))
keras.utils.set_random_seed(0)
model = ElectraQuestionAnswerer.from_source(str(encoder), sequence_length=128)
dev = [text for text, _ in splits["dev"]]
contexts = [" ".join(dev[i : i + 1 + i % 4]) for i in range(300)]  # 1-4 snippets each
examples, _ = as_examples(["what did the critic think?"] * 300, contexts)
inputs = model.preprocessor.windows(examples).inputs
forward, shapes = model.inference_function(), set()


def spy(batch):
    shapes.add(tuple(batch["token_ids"].shape))
    return forward(batch)


object.__setattr__(model, "_inference_function", spy)
begin = time.perf_counter()
window_outputs(model, inputs, 32)
print(json.dumps({"arm": os.environ.get("ARM", ""), "windows": len(inputs["token_ids"]),
                  "shapes": len(shapes), "seconds": round(time.perf_counter() - begin, 2)}))
