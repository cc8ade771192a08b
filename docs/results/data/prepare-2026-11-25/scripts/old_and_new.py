"""prepare_corpus in one process, the code before and after (PYTHONPATH picks which)."""
import json, os, sys, time, shutil
from electra_tf.data.corpus import TextSource
from electra_tf.data.prepare import prepare_corpus
if __name__ == "__main__":
    which, corpus = sys.argv[1], sys.argv[2]
    out = f"/tmp/pw/oldnew-{which}"
    shutil.rmtree(out, ignore_errors=True)
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    r = prepare_corpus([TextSource([corpus])], out, vocab_file="/work/main/data/models/all-MiniLM-L6-v2/vocab.txt", progress=False)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({"code": which, "load_before": round(load, 2), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "examples": r.examples, "tokens_written": r.tokens, "tokens_written_per_s": round(r.tokens / wall)}))
