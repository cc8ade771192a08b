"""`python -m electra_tf.bench BENCHMARK [options]`; benchmarks: step, serving, input."""

import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    benchmarks = {
        "step": "electra_tf.bench.step",
        "serving": "electra_tf.bench.serving",
        "input": "electra_tf.bench.input",
    }
    if not argv or argv[0] not in benchmarks:
        print(
            f"usage: python -m electra_tf.bench {{{','.join(benchmarks)}}} [options]",
            file=sys.stderr,
        )
        return 2
    import importlib

    return importlib.import_module(benchmarks[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
