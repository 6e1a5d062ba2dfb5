#!/usr/bin/env bash
# The shared-memory texture probe on the H200 (docs/performance.md, "GPU decode"), from a folder
# staged by scripts/stage-gpu-check. Log: $OUT/external-memory.log
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; here=$(pwd); d=data
export LD_LIBRARY_PATH="$here/libs:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}"
export PIXPATH_CUDA_MODULE="$here/bin/libpixpath_cuda.so"
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -n "${VK_DRIVER_FILES:-}" ] || for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  [ -f "$j" ] && export VK_DRIVER_FILES=$j && break
done
echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-none}"
timeout 300 bin/cuda_external_memory_probe --iters "${ITERS:-200}" $d/screen4k_q50_420.jpg $d/screen1080_q50_420.jpg \
  $d/screen4k_q90_444.jpg $d/screen1080_q90_444.jpg 2>&1 | tee "$OUT/external-memory.log"
echo "probe rc=${PIPESTATUS[0]}"
