#!/bin/bash
# usage: run_torch.sh SEED   (arm T)
export OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES=
cd /tmp/cls5
/usr/bin/time -f '%e s wall %U+%S cpu' -o out/torch_s$1.time \
/work/main/.venv/bin/python torch_cls.py --seed $1 --name torch_s$1 > out/torch_s$1.log 2>&1
