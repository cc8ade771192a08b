"""Summaries of py-spy's raw (collapsed-stack) profiles: the share of samples whose stack
holds a frame matching each pattern (inclusive), and the top inclusive functions.

    py-spy record -r 50 -f raw -o self.txt -- python -m pytest -q -n 0 FILES...
    python summarize.py self.txt > self-summary.json

The raw files (about 20 MB each) are not kept; their summaries are.
"""

import collections
import json
import re
import sys

PATTERNS = {
    "trace (func_graph_from_py_func)": r"func_graph_from_py_func",
    "SavedModel save": r"saved_model/save\.py",
    "SavedModel load": r"saved_model/load\.py",
    "running traced functions (quick_execute)": r"quick_execute",
    "imports (_find_and_load)": r"_find_and_load",
    "ragged from_row_splits (validated)": r"from_row_splits",
    "check_ops asserts": r"_binary_assert",
    "tensorflow-text BasicTokenizer": r"BasicTokenizer\.tokenize",
    "keras fit": r"TensorFlowTrainer\.fit",
}


def main(path):
    total, shares, functions = 0, collections.Counter(), collections.Counter()
    for line in open(path):
        stack, _, count = line.rstrip().rpartition(" ")
        count = int(count)
        total += count
        frames = stack.split(";")
        for name, pattern in PATTERNS.items():
            if any(re.search(pattern, f) for f in frames):
                shares[name] += count
        for name in {re.sub(r":\d+\)", ")", f) for f in frames}:
            functions[name] += count
    return {
        "samples": total,
        "inclusive_share": {k: round(v / total, 4) for k, v in shares.most_common()},
        "top_inclusive": [[round(v / total, 4), k[:160]] for k, v in functions.most_common(80)],
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1]), indent=1))
