"""Compares two dump.py outputs array by array: prints how many differ (exactly)."""
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert sorted(a.files) == sorted(b.files), "different weights"
apart = [k for k in a.files if not np.array_equal(a[k], b[k])]
print(f"{len(apart)} of {len(a.files)} arrays apart", apart[:5])
