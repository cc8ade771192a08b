"""A multi-worker JAX run's watch over its processes (`electra_tf/pretraining/worker_watch.py`).

Without JAX: the processes meet on a real local port (`jax_cluster.gather_workers` and
`wait_for_coordinator`) and keep those connections; plain Python children stand in for the
workers. A worker killed with SIGKILL must stop process 0 within a second or two in the
`WorkerLost` sentence, and process 0 must pass the news on: the other worker prints it the
way the CLI does and exits 2. A worker whose process 0 closes says so too; a peer that
finished is let go, and one that failed stops the others after train.collective_timeout.
The real thing, two JAX workers and a kill -9 mid-run, is the slow test in
test_jax_multi_worker.py.
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time

from helpers import TESTS, free_ports

from electra_tf.pretraining import jax_cluster, worker_watch

# A worker: joins the cluster (process argv[2] of argv[3], coordinator argv[1]), watches its
# connection to process 0 as a run would, having finished step 4, and waits (argv[4]
# seconds, then leaves without ending its training).
WORKER = """
import sys, time
from electra_tf.pretraining import jax_cluster, worker_watch
index, count = int(sys.argv[2]), int(sys.argv[3])
addresses = (sys.argv[1],) + ("127.0.0.1:1",) * (count - 1)
cluster = jax_cluster.Cluster(addresses, index, "TF_CONFIG")
connection = worker_watch.watch_socket(jax_cluster.wait_for_coordinator(cluster, 30), 30)
watch = worker_watch.install(worker_watch.Watch({0: connection}, index, count, 30).start())
watch.step = 4
print("watching", flush=True)
time.sleep(float(sys.argv[4]))
"""


def _workers(count, wait=60):
    """(process 0's {index: connection}, the children of processes 1..count-1), each child
    leaving after `wait` s."""
    (port,) = free_ports(1)
    address = f"127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS.parent), str(TESTS)]))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, address, str(index), str(count), str(wait)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(1, count)
    ]
    chief = jax_cluster.Cluster((address,) + ("127.0.0.1:1",) * (count - 1), 0, "TF_CONFIG")
    peers = jax_cluster.gather_workers(chief, 60)
    for child in children:
        assert child.stdout.readline() == "watching\n", child.stderr.read()
    return peers, children


def _recorder():
    """(stop callback, list of (sentence, monotonic time), event set on the first)."""
    heard, event = [], threading.Event()

    def stop(sentence):
        heard.append((sentence, time.monotonic()))
        event.set()

    return stop, heard, event


def test_a_killed_worker_stops_process_0_and_the_others_in_one_sentence():
    peers, (first, second) = _workers(3)
    assert sorted(peers) == [1, 2]
    stop, heard, event = _recorder()
    watch = worker_watch.Watch(peers, 0, 3, 30, stop=stop).start()
    watch.step, watch.checkpoint = 6, lambda: "step-00000006"
    os.kill(first.pid, signal.SIGKILL)  # no goodbye: the kernel closes its socket
    killed = time.monotonic()
    assert event.wait(10), "process 0 did not notice"
    assert heard == [
        (
            "A worker of this multi-worker run was lost at step 6 (process 1 of 3 stopped "
            "answering: its connection closed); relaunch every worker with "
            "the same command: the run resumes from its last checkpoint (step-00000006).",
            heard[0][1],
        )
    ]
    assert heard[0][1] - killed < 5
    _, err = second.communicate(timeout=30)  # told by process 0, it ends itself
    assert second.returncode == 2, err
    assert err.splitlines() == [
        "electra-tf pretrain: A worker of this multi-worker run was lost at step 4 (process 1 "
        "of 3 stopped answering); relaunch every worker with the same command: the run "
        "resumes from its last checkpoint (step-00000006)."
    ]
    assert time.monotonic() - killed < 10
    first.wait()
    for connection in peers.values():
        connection.close()


def test_a_worker_whose_process_0_closes_ends_in_one_sentence():
    peers, (child,) = _workers(2)
    started = time.monotonic()
    peers[1].close()  # process 0 is gone
    _, err = child.communicate(timeout=30)
    assert child.returncode == 2 and time.monotonic() - started < 10, err
    assert err.splitlines() == [
        "electra-tf pretrain: A worker of this multi-worker run was lost at step 4 (process 0 "
        "of 2 stopped answering: its connection closed); relaunch every "
        "worker with the same command: the run resumes from its last checkpoint."
    ]


def test_a_peer_that_finished_is_let_go_and_one_that_failed_stops_the_others_later():
    for said in (b"done\n", b"fail\n"):
        here, there = socket.socketpair()
        stop, heard, event = _recorder()
        watch = worker_watch.Watch({1: here}, 0, 2, 0.5, stop=stop).start()
        watch.step = 3
        started = time.monotonic()  # before the message: the watch may read it at once
        there.sendall(said)
        there.close()
        if said == b"done\n":
            assert not event.wait(1.5) and heard == []
            with worker_watch.training(watch):  # this one finishes too: it stops watching
                pass
            assert watch.ended.is_set()
            continue
        assert event.wait(10) and 0.5 <= heard[0][1] - started < 5
        assert heard[0][0] == (
            "Process 1 of this multi-worker run stopped with an error near step 3 (its own "
            "output says why) and this process was still waiting for it after 0.5 s; fix "
            "that, then relaunch every worker with the same command: the run resumes from "
            "its last checkpoint."
        )


def test_a_worker_that_leaves_without_training_says_so_and_is_not_lost():
    peers, (child,) = _workers(2, wait=0)
    stop, heard, event = _recorder()
    started = time.monotonic()  # before the watch: it may read the child's "fail" at once
    worker_watch.Watch(peers, 0, 2, 1.0, stop=stop).start()
    _, err = child.communicate(timeout=30)
    assert child.returncode == 0 and err == ""
    assert event.wait(10) and heard[0][1] - started >= 1.0, heard  # "fail": a wait, not a loss
    assert heard[0][0].startswith("Process 1 of this multi-worker run stopped with an error")
    peers[1].close()


def test_the_coordinator_reads_only_the_index_line_of_a_knock():
    """A worker that fails at once sends its index and "fail" together: process 0 must take
    the index and leave "fail" to the watch (it had read 16 bytes and dropped the rest, so the
    watch saw a closed connection and called a failed worker lost)."""
    server = socket.create_server(("127.0.0.1", 0))
    with server, socket.create_connection(server.getsockname()) as worker:
        worker.sendall(b"1\nfail\n")
        index, connection = jax_cluster._knock(server, 1, 10.0)
        with connection:
            assert index == 1
            connection.settimeout(5)  # the old reading left nothing: a timeout, not a hang
            assert connection.recv(16) == b"fail\n"
