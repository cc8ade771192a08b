#!/bin/bash
# 2 alternating rounds: PyTorch fp32 (gather + CDF, AVX2 cap) and electra-tf mixed_bfloat16 (no cap: oneDNN's bf16 matmul aborts under the AVX2 cap).
export PEER_BUDGET_S=45 PEER_MIN_STEPS=5 TF_ENABLE_ONEDNN_OPTS=1
for r in 1 2; do
  ATEN_CPU_CAPABILITY=avx2 /work/main/.venv/bin/python /work/shared/bench/peers/bench_torch.py --batch 32 --round $r --lm-head gather --sampler cdf 2>/dev/null | grep '^{'
  /work/main/.venv/bin/python -m electra_tf.bench step --recipe small --batch 32 --round $r --budget 45 --precision mixed_bfloat16 2>/dev/null | grep '^{'
done
