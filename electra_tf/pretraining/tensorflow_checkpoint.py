"""The weights of a checkpoint written on TensorFlow (`ckpt.*`), read on another backend.

A run on TensorFlow saves `tf.train.Checkpoint(model=, optimizer=, states=)`
(`checkpoint.checkpoint_object`). Its object graph lists the optimizer's
`_trainable_variables` (the model's trainable variables, in creation order) and
`states` (every non-trainable variable, by position); the model creates its variables
in the same order on every backend, so on JAX or PyTorch each is read by that name
(`optimizer/_trainable_variables/<i>`, `states/<i>`), shape checked, and assigned. That
is all `--init` (and `export`, `evaluate`) take. Resuming the run on JAX or PyTorch
takes the optimizer's variables too (`with_optimizer`): its step counter and moments,
listed by position under `optimizer/_variables` (a loss-scale optimizer's own first, then
its inner optimizer's under `optimizer/inner_optimizer/_variables`), in the order
`optimizer.variables` gives them on every backend.

TensorFlow is imported only here, lazily, to read the file; where it is not installed
the checkpoint is refused in one sentence that says how to convert it.
"""

from __future__ import annotations

from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.ops import backend

__all__ = ["read_tensorflow_weights", "TRAINABLE", "STATES", "OPTIMIZER", "INNER"]

#: Where the object graph lists the model's trainable and non-trainable variables.
TRAINABLE = ("optimizer/_trainable_variables", "optimizer/inner_optimizer/_trainable_variables")
STATES = ("states",)
#: Where it lists the optimizer's variables (and a loss-scale optimizer's inner one's).
OPTIMIZER, INNER = "optimizer/_variables", "optimizer/inner_optimizer/_variables"


def _object_graph(reader, tf):
    """The checkpoint's object graph (`TrackableObjectGraph` proto)."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return graph


def _node(graph, path: str):
    """The object graph's node at object path `path` ("a/b/0"), or None."""
    node = graph.nodes[0]
    for name in path.split("/"):
        child = next((c.node_id for c in node.children if c.local_name == name), None)
        if child is None:
            return None
        node = graph.nodes[child]
    return node


def _key(graph, path: str) -> str | None:
    """The checkpoint key of the variable at object path `path`, or None."""
    node = _node(graph, path)
    if node is None:
        return None
    values = [a.checkpoint_key for a in node.attributes if a.name == "VARIABLE_VALUE"]
    return values[0] if values else None


def _mismatch(folder, what: str) -> ConfigError:
    return ConfigError(
        f"Checkpoint {folder} does not match this model ({what}); its config is in "
        f"{Path(folder) / 'config.json'}."
    )


def _no_tensorflow(folder, name: str) -> ConfigError:
    return ConfigError(
        f"Checkpoint {folder} was written by a run on TensorFlow (ckpt.*) and TensorFlow is "
        f"not installed here, so the {name} backend cannot read it; convert it first on a "
        "machine with TensorFlow (electra-tf import --tensorflow-run RUN --out NEW) and use "
        "NEW."
    )


def _assign(variables, prefixes, graph, reader, folder, group: str) -> None:
    """Assigns each of `variables` the value stored at `<prefix>/<i>`, shapes checked."""
    for index, variable in enumerate(variables):
        key = next((k for p in prefixes if (k := _key(graph, f"{p}/{index}")) is not None), None)
        if key is None:
            raise _mismatch(folder, f"it holds no {group} variable {index}, {variable.path}")
        value = reader.get_tensor(key)
        if tuple(value.shape) != tuple(variable.shape):
            raise _mismatch(
                folder,
                f"{key.split('/.ATTRIBUTES')[0]} has shape {list(value.shape)}, the model's "
                f"{variable.path} {list(variable.shape)}",
            )
        variable.assign(value.astype(variable.dtype))


def _optimizer_groups(optimizer) -> list[tuple[list, str]]:
    """`optimizer.variables` split by where a TensorFlow checkpoint lists them."""
    variables = list(optimizer.variables)
    inner = getattr(optimizer, "inner_optimizer", None)
    if inner is None:
        return [(variables, OPTIMIZER)]
    own = len(variables) - len(inner.variables)
    return [(variables[:own], OPTIMIZER), (variables[own:], INNER)]


def _assign_optimizer(optimizer, graph, reader, folder) -> None:
    """Assigns the optimizer's variables (step counter, moments, loss scale), count checked."""
    for variables, prefix in _optimizer_groups(optimizer):
        node = _node(graph, prefix)
        saved = len(node.children) if node is not None else 0
        if saved != len(variables):
            counts = f"{saved} optimizer variables under {prefix}, the model {len(variables)}"
            raise _mismatch(folder, counts)
        _assign(variables, (prefix,), graph, reader, folder, "optimizer")


def read_tensorflow_weights(model, folder, with_optimizer: bool = False) -> None:
    """Assigns the weights (trainable and non-trainable variables) of the TensorFlow
    checkpoint `folder` (a `step-N` folder holding `ckpt.*`) to `model`, on any backend;
    `with_optimizer`: its optimizer's variables too (a resume; the optimizer built).

    Raises:
        ConfigError: TensorFlow is not installed here, or the checkpoint does not hold a
            variable of the model's shape at its position (one sentence each).
    """
    tf = backend.tensorflow()
    if tf is None:
        raise _no_tensorflow(folder, backend.name())
    reader = tf.train.load_checkpoint(str(Path(folder) / "ckpt"))
    graph = _object_graph(reader, tf)
    _assign(model.trainable_variables, TRAINABLE, graph, reader, folder, "trainable")
    _assign(model.non_trainable_variables, STATES, graph, reader, folder, "non-trainable")
    if with_optimizer:
        _assign_optimizer(model.optimizer, graph, reader, folder)
