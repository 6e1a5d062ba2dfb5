#!/usr/bin/env bash
# Second device call: nvJPEG set-up probe (what the decoupled path costs), the GPU tests without
# the 10,000-decode one, and the benchmark on three files. Same staging as run_h200.sh.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; here=$(pwd); d=data
export LD_LIBRARY_PATH="$here/libs:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}"
export PIXPATH_CUDA_MODULE="$here/bin/libpixpath_cuda.so"
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
echo "=== probe"
for f in crop_512x512_q50_420 screen1080_q50_420 screen4k_q50_420; do
  timeout 60 bin/cuda_gpu_jpeg_benchmark --probe $d/$f.jpg 2>&1 | tee -a "$OUT/probe.log"
done
echo "=== tests"
timeout 200 bin/cuda_gpu_jpeg_test --gtest_color=no --gtest_filter='-*TenThousand*' >"$OUT/tests.log" 2>&1; echo "tests rc=$?"
grep -E "OK \]|FAILED|batch window 0|Skipped" "$OUT/tests.log" | cut -c1-300
echo "=== phases"
for f in screen4k_q50_420 screen1080_q50_420 crop_512x512_q50_420; do
  timeout 60 bin/cuda_gpu_jpeg_benchmark --phases $d/$f.jpg 2>&1 | sed 's/"index".*"hybrid_below_pixels":[0-9]*,//; s/,"self_test.*//' | tee -a "$OUT/bench.log"
done
echo "=== bench"
timeout 200 bin/cuda_gpu_jpeg_benchmark --iters 50 --batch-iters 60 $d/screen4k_q50_420.jpg $d/screen1080_q50_420.jpg $d/crop_512x512_q50_420.jpg 2>&1 | grep "^|" | tee -a "$OUT/bench.log"
