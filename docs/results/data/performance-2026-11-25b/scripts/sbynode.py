import os, sys, tempfile, time, glob, collections, re, numpy as np
import tensorflow as tf, tensorflow_text
from tensorflow.tsl.profiler.protobuf import xplane_pb2
from electra_tf.config import load_recipe
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving.saved_model import export_for_serving
B = int(sys.argv[1]); seq=128; layout = sys.argv[2] if len(sys.argv)>2 else "auto"
config = load_recipe("small").override(f"data.sequence_length={seq}","data.pad_id=0","data.unk_id=1","data.cls_id=2","data.sep_id=3","data.mask_id=4")
model = ElectraPretrainer(config)
folder = tempfile.mkdtemp()
vocab = write_vocabulary(list(SPECIAL_TOKENS)+[f"w{i}" for i in range(config.model.vocabulary_size-5)], os.path.join(folder,"vocab.txt"))
exported = export_for_serving(model, folder, vocab_file=vocab, warmup=False, seq_length=seq, model_name="m", kernel_layout=layout)
sig = tf.saved_model.load(str(exported)).signatures["serving_default"]
ids = np.random.default_rng(0).integers(5, 1000, size=(B, seq)).astype(np.int32)
t = dict(input_word_ids=tf.constant(ids), input_mask=tf.ones_like(ids), input_type_ids=tf.zeros_like(ids))
for _ in range(10): sig(**t)["rtd_logits"].numpy()
ts=[]
for _ in range(60 if B==1 else 8):
    t0=time.perf_counter(); sig(**t)["rtd_logits"].numpy(); ts.append(time.perf_counter()-t0)
print("p50 ms", np.median(ts)*1e3)
n=20 if B==1 else 4
logdir=tempfile.mkdtemp()
tf.profiler.experimental.start(logdir, options=tf.profiler.experimental.ProfilerOptions(host_tracer_level=3, python_tracer_level=0, device_tracer_level=1))
for _ in range(n): sig(**t)["rtd_logits"].numpy()
tf.profiler.experimental.stop()
p = glob.glob(os.path.join(logdir,"**","*.xplane.pb"), recursive=True)[0]
space = xplane_pb2.XSpace(); space.ParseFromString(open(p,"rb").read())
tot = collections.defaultdict(float); cnt = collections.Counter(); lines=collections.Counter()
for plane in space.planes:
    if not plane.name.startswith("/host:"): continue
    for line in plane.lines:
        if line.name == "python": continue
        for ev in line.events:
            name = plane.event_metadata[ev.metadata_id].name
            if ":" not in name or name.startswith(("ThreadpoolListener","Memory")): continue
            node, kernel = name.rsplit(":",1); kernel=kernel.strip()
            if kernel in ("Process","Run") or kernel.startswith("__inference"): continue
            nn = re.sub(r"_\d+", "_N", node); nn = re.sub(r"\d+", "N", nn)
            tot[(kernel, nn)] += ev.duration_ps*1e-12/n; cnt[(kernel,nn)] += 1; lines[line.name]+=ev.duration_ps*1e-12/n
print("kernel ms per call", sum(tot.values())*1e3)
print({k: round(v*1e3,2) for k,v in lines.items()})
for (k,nn),v in sorted(tot.items(), key=lambda kv:-kv[1])[:40]:
    print(f"{v*1000:8.3f} ms {cnt[(k,nn)]//n:5d}x {k:28s} {nn[-100:]}")
