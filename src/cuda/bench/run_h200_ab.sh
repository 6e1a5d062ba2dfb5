#!/usr/bin/env bash
# Third device call: GL tests (write-discard maps), then A/B of the texture path with and without
# write-discard maps and of the hardware batch depth (2, 3, 4 batches in flight).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; here=$(pwd); d=data
export LD_LIBRARY_PATH="$here/libs:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}"
export PIXPATH_CUDA_MODULE="$here/bin/libpixpath_cuda.so"
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
timeout 120 bin/cuda_gpu_jpeg_test --gtest_color=no --gtest_filter='-*TenThousand*' >"$OUT/tests.log" 2>&1; echo "tests rc=$?"
grep -E "OK \]|FAILED|Failure" "$OUT/tests.log" | cut -c1-200
files="$d/screen4k_q50_420.jpg $d/screen1080_q50_420.jpg $d/crop_512x512_q50_420.jpg"
for cfg in "DEPTH=2" "DEPTH=3" "DEPTH=4" "DEPTH=2 NODISCARD"; do
  echo "=== $cfg"
  ( [[ $cfg == *NODISCARD* ]] && export PIXPATH_CUDA_NO_WRITE_DISCARD=1
    export PIXPATH_CUDA_BATCH_DEPTH=${cfg#DEPTH=}; export PIXPATH_CUDA_BATCH_DEPTH=${PIXPATH_CUDA_BATCH_DEPTH%% *}
    timeout 120 bin/cuda_gpu_jpeg_benchmark --iters 100 --batch-iters 60 $files 2>&1 | grep -E "nvJPEG alone|auto|texture|batch" ) | tee -a "$OUT/ab.log"
done
