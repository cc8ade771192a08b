import sys, numpy as np
from tensorflow.python.debug.lib import debug_events_reader
targets = [0x39a57d56, 0x398b04fe, 0xb9229248]
with debug_events_reader.DebugDataReader(sys.argv[1]) as reader:
    reader.update()
    traces = reader.graph_execution_traces()
    print("traces", len(traces))
    for t in traces:
        try:
            v = reader.graph_execution_trace_to_tensor_value(t)
        except Exception as e:
            continue
        a = np.asarray(v)
        if a.dtype != np.float32: continue
        bits = a.view(np.uint32).ravel()
        hits = [hex(x) for x in targets if (bits == x).any()]
        if hits:
            op = reader.graph_op_by_id(t.graph_id, t.op_name) if hasattr(reader,'graph_op_by_id') else None
            print(t.op_name, t.op_type, a.shape, hits, [int(np.where(bits==x)[0][0]) for x in targets if (bits==x).any()])
