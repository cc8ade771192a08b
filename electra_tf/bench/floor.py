"""The pre-training step's matmul floor: every matmul of the traced step, timed alone.

    electra-tf bench floor --recipe small --batch 32

Traces the step exactly as `bench step` builds it and lists every `MatMul` and
`BatchMatMulV2` in its graph, forward and gradients, with operand shapes and
transposes. Each distinct product is timed alone: a call of `--chain` copies
less a call of one, over `chain - 1`, so the call's own overhead cancels; the
median over `--repeats` is kept. Count times time, summed, is
what the step would take if nothing but its matmuls ran, each at the rate it
reaches alone: the floor that elementwise work, copies and scheduling sit
above. `--steps` steps are then timed in the same process, and the record
gives the step over the floor. The products' FLOPs add up to
`matmul_step_flops`, the model FLOPs the peers' benchmarks count; the record
carries both.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import statistics
import time

__all__ = ["FloorOptions", "matmul_ceiling", "product_flops", "step_products", "run"]

_PRODUCTS = ("MatMul", "BatchMatMulV2", "BatchMatMulV3")


@dataclasses.dataclass
class FloorOptions:
    """What `electra-tf bench floor` records (its flags, one field each)."""

    recipe: str = "small"
    batch: int = 32
    seq: int = 128
    chain: int = 6  # copies of a product per timed call
    repeats: int = 15  # timed calls per product
    steps: int = 5  # whole steps timed after the products
    top: int = 12  # products listed, most total time first
    overrides: tuple = ()


def product_flops(op_type: str, a: tuple, b: tuple, transposes: tuple) -> int:
    """2 * m * k * n (times the batch) for a `MatMul` or `BatchMatMul` of shapes `a`, `b`."""
    m, k = (a[-1], a[-2]) if transposes[0] else (a[-2], a[-1])
    n = b[-2] if transposes[1] else b[-1]
    batch = 1 if op_type == "MatMul" else math.prod(a[:-2])
    return 2 * batch * m * k * n


def step_products(graph) -> collections.Counter:
    """(op type, shape a, shape b, transposes) -> count, over `graph` and the functions it calls."""
    counts: collections.Counter = collections.Counter()
    for op in graph.get_operations():
        if op.type in _PRODUCTS:
            a, b = (tuple(t.shape.as_list()) for t in op.inputs[:2])
            if None in a or None in b:
                raise ValueError(f"{op.name}: operand shapes {a}, {b} are not fully known.")
            names = ("transpose_a", "transpose_b") if op.type == "MatMul" else ("adj_x", "adj_y")
            counts[(op.type, a, b, tuple(bool(op.get_attr(n)) for n in names))] += 1
        elif "f" in op.node_def.attr and op.node_def.attr["f"].func.name:
            function = graph._get_function(op.node_def.attr["f"].func.name)
            if function is not None:
                counts.update(step_products(function.graph))
    return counts


def _time_product(op_type, a, b, transposes, chain: int, repeats: int) -> float:
    """Seconds one product takes alone: a call of `chain` copies, less a call of one."""
    import tensorflow as tf

    lhs = [tf.random.normal(a) for _ in range(chain)]
    rhs = [tf.random.normal(b) for _ in range(chain)]

    def product(x, y):
        if op_type == "MatMul":
            return tf.raw_ops.MatMul(a=x, b=y, transpose_a=transposes[0], transpose_b=transposes[1])
        return tf.raw_ops.BatchMatMulV2(x=x, y=y, adj_x=transposes[0], adj_y=transposes[1])

    def copies(count):
        # Every output is returned: grappler prunes products whose results go unused.
        return [product(x, y) for x, y in zip(lhs[:count], rhs[:count], strict=True)]

    one, many = tf.function(lambda: copies(1)), tf.function(lambda: copies(chain))
    for _ in range(2):
        one(), many()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        one()
        single = time.perf_counter() - started
        started = time.perf_counter()
        many()
        samples.append((time.perf_counter() - started - single) / (chain - 1))
    return max(statistics.median(samples), 1e-9)


def matmul_ceiling(sizes=(512, 1024, 2048), chain: int = 4, repeats: int = 7) -> dict:
    """The fp32 matmul ceiling: the best rate of square `n x n` products, timed as above.

    Returns {"gflops": best GFLOP/s, "size": its n, "by_size": {n: GFLOP/s}}.
    """
    by_size = {}
    for n in sizes:
        seconds = _time_product("MatMul", (n, n), (n, n), (False, False), chain, repeats)
        by_size[n] = product_flops("MatMul", (n, n), (n, n), (False, False)) / seconds / 1e9
    best = max(by_size, key=by_size.get)
    return {"gflops": by_size[best], "size": best, "by_size": by_size}


def run(args: FloorOptions) -> dict:
    """Times the step's products and the step; returns the JSON record (module docstring)."""
    if args.chain < 2 or args.repeats < 1 or args.steps < 1:
        raise ValueError("bench floor: --chain must be at least 2, --repeats and --steps 1.")
    from electra_tf.bench.step import StepOptions, build_step
    from electra_tf.pretraining.flops import matmul_step_flops

    options = StepOptions(
        recipe=args.recipe, batch=args.batch, seq=args.seq, overrides=tuple(args.overrides)
    )
    config, _, one_step = build_step(options)
    one_step()
    products = step_products(one_step.graph())
    rows = []
    for (op_type, a, b, transposes), count in products.items():
        seconds = _time_product(op_type, a, b, transposes, args.chain, args.repeats)
        flops = product_flops(op_type, a, b, transposes)
        rows.append(
            {
                "op": op_type,
                "a": list(a),
                "b": list(b),
                "transposes": list(transposes),
                "count": count,
                "ms": round(seconds * 1e3, 4),
                "gflops_per_s": round(flops / seconds / 1e9, 1),
                "total_ms": round(count * seconds * 1e3, 3),
                "flops": flops,
            }
        )
    rows.sort(key=lambda row: -row["total_ms"])
    floor = sum(row["total_ms"] for row in rows) / 1e3
    graph_flops = sum(row["count"] * row["flops"] for row in rows)
    steps = []
    for _ in range(args.steps):
        started = time.perf_counter()
        one_step()
        steps.append(time.perf_counter() - started)
    step = statistics.median(steps)
    tokens = args.batch * args.seq
    return {
        "kind": "matmul_floor",
        "recipe": args.recipe,
        "batch": args.batch,
        "seq_len": args.seq,
        "matmul_ops": sum(products.values()),
        "distinct_products": len(products),
        "graph_matmul_flops_per_step": graph_flops,
        "model_flops_per_step": matmul_step_flops(config, args.batch)["step"],
        "floor_s": floor,
        "floor_tokens_per_s": tokens / floor,
        "floor_gflops_per_s": graph_flops / floor / 1e9,
        "step_s_median": step,
        "tokens_per_s": tokens / step,
        "step_over_floor": step / floor,
        "products": [{k: v for k, v in row.items() if k != "flops"} for row in rows[: args.top]],
    }
