"""Two demo runs: the pre-training's last checkpoints (variables apart), the first logged
step loss that differs, and the report's figures side by side."""
import glob, json, sys
import numpy as np, tensorflow as tf

a, b = sys.argv[1:3]
def latest(root):
    return sorted(glob.glob(f"{root}/runs/demo/checkpoints/step-*"))[-1] + "/ckpt"
ra, rb = (tf.train.load_checkpoint(latest(r)) for r in (a, b))
names = [n for n in ra.get_variable_to_shape_map() if "_CHECKPOINTABLE" not in n]
differ = [n for n in names if not np.array_equal(ra.get_tensor(n), rb.get_tensor(n))]
print(json.dumps({"checkpoint": latest(a).split("/")[-2], "variables": len(names), "differ": len(differ)}))
def losses(root):
    out = {}
    for f in glob.glob(f"{root}/runs/demo/logs/events*"):
        for e in tf.compat.v1.train.summary_iterator(f):
            for v in e.summary.value:
                if v.tag == "train/step_loss":
                    out[e.step] = float(tf.make_ndarray(v.tensor)) if v.HasField("tensor") else v.simple_value
    return out
la, lb = losses(a), losses(b)
steps = sorted(set(la) & set(lb))
first = next((s for s in steps if la[s] != lb[s]), None)
print(json.dumps({"logged_steps": len(steps), "first_step_loss_that_differs": first}))
with open("/tmp/demopair/step_losses.tsv", "w") as f:
    f.write("step\tp1\tp2\n")
    for s in steps:
        f.write(f"{s}\t{la[s]!r}\t{lb[s]!r}\n")
