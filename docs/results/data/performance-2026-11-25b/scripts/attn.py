import sys, time, math, numpy as np, tensorflow as tf
B=int(sys.argv[1]); S=128; H=256; nh=4; D=64; L=12
rng=np.random.default_rng(0)
x0=tf.constant(rng.standard_normal((B*S,H)).astype(np.float32))
Wqkv=[tf.Variable(rng.standard_normal((H,3*H)).astype(np.float32)*0.05) for _ in range(L)]
bqkv=[tf.Variable(rng.standard_normal((3*H,)).astype(np.float32)*0.05) for _ in range(L)]
Wo=[tf.Variable(rng.standard_normal((H,H)).astype(np.float32)*0.05) for _ in range(L)]
bo=[tf.Variable(rng.standard_normal((H,)).astype(np.float32)*0.05) for _ in range(L)]
# per-head layouts
Wh=[tf.Variable(tf.transpose(tf.reshape(w,[H,3*nh,D]),[1,0,2])) for w in Wqkv]  # [3nh,H,D]
bh=[tf.Variable(tf.reshape(b,[3*nh,1,D])) for b in bqkv]
Woh=[tf.Variable(tf.reshape(w,[nh,D,H])) for w in Wo]
keep=tf.ones([B,1,1,S]); bias=(1.0-keep)*-1e9
@tf.function
def cur(x):
    for l in range(L):
        qkv=tf.nn.bias_add(tf.matmul(x,Wqkv[l]),bqkv[l])
        qkv=tf.transpose(tf.reshape(qkv,[B,S,3,nh,D]),[2,0,3,1,4])
        q,k,v=tf.unstack(qkv)
        s=tf.matmul(q*(1/math.sqrt(D)),k,transpose_b=True)+bias
        p=tf.nn.softmax(s)*keep
        c=tf.reshape(tf.transpose(tf.matmul(p,v),[0,2,1,3]),[-1,H])
        x=tf.nn.bias_add(tf.matmul(c,Wo[l]),bo[l])+x
    return x
@tf.function
def perhead(x):
    for l in range(L):
        xb=tf.reshape(x,[B,1,S,H])
        qkv=tf.matmul(xb,Wh[l])+bh[l]   # [B,3nh,S,D]
        q,k,v=qkv[:,:nh],qkv[:,nh:2*nh],qkv[:,2*nh:]
        s=tf.matmul(q*(1/math.sqrt(D)),k,transpose_b=True)+bias
        p=tf.nn.softmax(s)*keep
        c=tf.matmul(p,v)   # [B,nh,S,D]
        o=tf.reduce_sum(tf.matmul(c,Woh[l]),axis=1)  # [B,S,H]
        x=tf.reshape(o,[-1,H])+bo[l]+x
    return x
@tf.function
def perhead_t(x):
    for l in range(L):
        xb=tf.reshape(x,[B,1,S,H])
        qkv=tf.matmul(xb,Wh[l])+bh[l]   # [B,3nh,S,D]
        q,k,v=qkv[:,:nh],qkv[:,nh:2*nh],qkv[:,2*nh:]
        s=tf.matmul(q*(1/math.sqrt(D)),k,transpose_b=True)+bias
        p=tf.nn.softmax(s)*keep
        c=tf.reshape(tf.transpose(tf.matmul(p,v),[0,2,1,3]),[-1,H])
        x=tf.nn.bias_add(tf.matmul(c,Wo[l]),bo[l])+x
    return x
fs=dict(cur=cur,perhead=perhead,perhead_t=perhead_t)
ref=cur(x0).numpy()
for n,f in fs.items(): print(n, np.abs(f(x0).numpy()-ref).max())
for f in fs.values():
    for _ in range(5): f(x0).numpy()
ts={n:[] for n in fs}
R=200 if B==1 else 20
for i in range(R):
    for n,f in fs.items():
        t0=time.perf_counter(); f(x0).numpy(); ts[n].append(time.perf_counter()-t0)
base=np.array(ts["cur"])
for n in fs: print(f"{n:10s} p50 {np.median(ts[n])*1e3:.2f} ms paired cur/this {np.median(base/np.array(ts[n])):.3f}")
