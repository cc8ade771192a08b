"""One worker of several multi-worker `electra-tf pretrain` runs, one after the other, in
one process: one TensorFlow import and one collective server for them all.

Usage: python multi_worker_cli_runs.py WEIGHTS_OUT PRETRAIN_ARGS... [-- WEIGHTS_OUT
PRETRAIN_ARGS...]...  (TF_CONFIG set by the caller: one cluster for every run). Runs each
command as `multi_worker_cli_job.py` does (a finished run's weights and step saved to its
WEIGHTS_OUT), stops at the first that fails, and exits with the status of the last it ran.
test_multi_worker.py's default suite runs an uninterrupted run and then the run it kills in
the same two workers (two processes less).
"""

import sys

import multi_worker_cli_job as job


def commands(arguments):
    """`[(weights_out, pretrain_args), ...]` of the `--`-separated arguments."""
    groups, current = [], []
    for argument in arguments:
        if argument == "--":
            groups.append(current)
            current = []
        else:
            current.append(argument)
    groups.append(current)
    return [(group[0], group[1:]) for group in groups]


def main(arguments):
    """Each command in turn, as `multi_worker_cli_job.main`; the last status."""
    code = 0
    for out, args in commands(arguments):
        job._results.clear()  # noqa: SLF001 - a failed run must not save the run before it
        sys.argv = [sys.argv[0], out, *args]
        code = job.main()
        if code:
            break
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
