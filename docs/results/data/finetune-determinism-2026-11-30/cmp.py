"""Compare two fine-tuned runs' kept weights (best.weights.h5): count of arrays that differ, max diff."""
import sys, h5py, numpy as np
def arrays(path):
    out = {}
    with h5py.File(path) as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out
a, b = arrays(sys.argv[1]), arrays(sys.argv[2])
diff = {k: float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in a if a[k].shape == b[k].shape and a[k].size and not np.array_equal(a[k], b[k])}
print(f"{len(diff)} of {len(a)} arrays differ; max {max(diff.values(), default=0.0):.3g}")
for k in sorted(diff, key=diff.get, reverse=True)[:5]: print(" ", k, diff[k])
