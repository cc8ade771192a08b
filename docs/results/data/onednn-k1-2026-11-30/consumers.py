import sys
from tensorflow.python.debug.lib import debug_events_reader
name = sys.argv[2]
with debug_events_reader.DebugDataReader(sys.argv[1]) as reader:
    reader.update()
    seen=set()
    for t in reader.graph_execution_traces():
        g = reader.graph_by_id(t.graph_id)
        if (t.graph_id) in seen: continue
        seen.add(t.graph_id)
        for op_name in g._op_by_name if hasattr(g,'_op_by_name') else []:
            pass
    for gid in seen:
        g = reader.graph_by_id(gid)
        for op in g._op_by_name.values():
            ins = [i.op_name for i in op.input_names] if False else op.input_names
            if ins and any(name in str(i) for i in ins):
                print(gid[:8], op.op_type, op.op_name, ins, [reader.graph_op_by_name(gid, op.op_name).output_tensor_ids] if False else "")
