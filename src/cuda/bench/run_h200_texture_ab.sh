#!/usr/bin/env bash
# One device call (docs/performance.md, "GPU decode"): how decode_to_texture writes the texture
# (PIXPATH_CUDA_TEXTURE_WRITE surface / copy / late, each twice, interleaved), the GL tests of the
# decoder in each mode, and the paint engine with 8 4K windows over a long recording (no CPU
# run) with one picture per GPU call against batches. Run from a folder made by
# scripts/stage-gpu-check. Logs under $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; here=$(pwd); d=data
export LD_LIBRARY_PATH="$here/libs:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}"
export PIXPATH_CUDA_MODULE="$here/bin/libpixpath_cuda.so"
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  for round in 1 2; do
    for mode in surface copy late; do
      PIXPATH_PROBE_FILES_ONLY=1 PIXPATH_CUDA_TEXTURE_WRITE=$mode timeout 100 bin/cuda_gpu_jpeg_benchmark \
        --sync-probe --iters 100 $d/screen4k_q50_420.jpg $d/screen4k_q70_420_rst2.jpg $d/screen1080_q50_420.jpg \
        $d/crop_512x512_q50_420.jpg | grep -E "its fence|nvJPEG alone|decode_to_device"
    done
  done
} 2>&1 | tee "$OUT/texture-ab.log"
{
  for mode in surface copy late; do
    echo "=== GL decoder tests, texture write $mode"
    PIXPATH_CUDA_TEXTURE_WRITE=$mode timeout 120 bin/cuda_gpu_jpeg_test --gtest_filter='GpuJpegGl*' --gtest_brief=1 2>&1 | tail -3
  done
} 2>&1 | tee "$OUT/texture-tests.log"
{
  echo "=== paint engine: 8 4K windows, 2400 draws, gpu only"; date -u
  bin/gpu_paint_benchmark --make-recording /tmp/eight4k.pxrec --draws 2400 --windows 8 $d/screen4k_q50_420.jpg
  for inflight in 16 32; do
    timeout 120 bin/gpu_paint_benchmark --no-cpu --threads 2 --in-flight $inflight --gpu-batch 1,8,16 /tmp/eight4k.pxrec \
      | grep -vE "^  window"
  done
} 2>&1 | tee "$OUT/paint-long.log" | grep -v "decoder info" | cut -c1-330
