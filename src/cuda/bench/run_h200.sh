#!/usr/bin/env bash
# One device call: the GPU tests, compute-sanitizer on a few of them, the side-by-side benchmark
# and torchvision on the same files. Run from the staged folder (.devstage) that holds bin/
# (binaries built on the dev machine), libs/ (libnvjpeg.so.13 from the nvidia-nvjpeg wheel,
# libturbojpeg, libjpeg, glvnd's libEGL/libOpenGL, libepoxy), data/ (screen JPEGs) and this
# script. Logs go to $OUT.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
here=$(pwd)
export LD_LIBRARY_PATH="$here/libs:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}"
export PIXPATH_CUDA_MODULE="$here/bin/libpixpath_cuda.so"
for j in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
  [ -f "$j" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$j" && break
done
{
  date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.mem --format=csv
  echo "EGL vendor: ${__EGL_VENDOR_LIBRARY_FILENAMES:-none}"
  echo "--- nvjpeg on the machine:"; find / -xdev \( -name 'libnvjpeg*' -o -name nvjpeg.h -o -name 'libturbojpeg*' \) 2>/dev/null | head -20
  echo "--- ldd module:"; ldd bin/libpixpath_cuda.so
  echo "--- ldd test:"; ldd bin/cuda_gpu_jpeg_test | grep -E "not found|EGL|epoxy|turbo|jpeg|OpenGL"
  echo "--- EGL/GL driver files:"; ls /usr/local/nvidia/lib64 2>/dev/null | grep -i -E "egl|glx|glcore|glsi" | head; cat "${__EGL_VENDOR_LIBRARY_FILENAMES:-/dev/null}"
  ls /usr/lib/x86_64-linux-gnu | grep -i -E "^libEGL|^libGL|^libOpenGL" | head
} >"$OUT/env.log" 2>&1
cat "$OUT/env.log"

# GL: try the carried glvnd libraries first; if no context comes up, unpack the .gl debs into /
# as the device README describes and use those.
if ! bin/cuda_gpu_jpeg_benchmark --gl-check >"$OUT/glcheck.log" 2>&1; then
  cat "$OUT/glcheck.log"
  echo "GL with carried libs failed: unpacking gl/*.deb into /"
  for f in gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  rm -f libs/libEGL.so.1 libs/libOpenGL.so.0 libs/libGLdispatch.so.0
  bin/cuda_gpu_jpeg_benchmark --gl-check 2>&1 | tee -a "$OUT/glcheck.log"
fi
cat "$OUT/glcheck.log"
echo "=== loader test"; timeout 60 bin/cuda_loader_test --gtest_brief=1 2>&1 | tail -3
echo "=== GPU tests"
timeout 300 bin/cuda_gpu_jpeg_test --gtest_color=no >"$OUT/tests.log" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Skipped|Failure|GPU decoder:|forced|garbage|prefix|truncated|scrambled|10000|by name|batch window|GL:" "$OUT/tests.log" | cut -c1-400
grep -E "^  [0-9a-z:]+ .*mean" "$OUT/tests.log" | sort | uniq | head -60

echo "=== benchmark"
d=data
timeout 240 bin/cuda_gpu_jpeg_benchmark --iters 50 --batch-iters 30 \
  $d/screen4k_q50_420.jpg $d/screen4k_q90_444.jpg $d/screen4k_q70_420_rst2.jpg \
  $d/screen1080_q50_420.jpg $d/screen1080_q90_444.jpg \
  $d/crop_256x256_q50_420.jpg $d/crop_512x512_q50_420.jpg $d/crop_1024x768_q50_420.jpg \
  $d/crop_1280x1024_q50_420.jpg $d/crop_1600x1200_q50_420.jpg >"$OUT/bench.log" 2>&1
echo "bench rc=$?"; cat "$OUT/bench.log" | cut -c1-300

echo "=== host time per phase (fresh process per file)"
for f in screen4k_q50_420 screen1080_q50_420 crop_512x512_q50_420; do
  timeout 60 bin/cuda_gpu_jpeg_benchmark --phases $d/$f.jpg 2>&1 | sed 's/"index".*"hybrid_below_pixels":[0-9]*,//' | tee -a "$OUT/bench.log"
done
echo "=== torchvision"
[ "${SKIP_TORCHVISION:-0}" = 1 ] && echo skipped || PYTHONUNBUFFERED=1 timeout 150 python3 bench_torchvision.py --iters 50 $d/screen4k_q50_420.jpg $d/screen4k_q90_444.jpg \
  $d/screen4k_q70_420_rst2.jpg $d/screen1080_q50_420.jpg $d/screen1080_q90_444.jpg >"$OUT/torchvision.log" 2>&1
echo "torchvision rc=$?"; cat "$OUT/torchvision.log" | tail -20

echo "=== compute-sanitizer memcheck (a few tests)"
if command -v compute-sanitizer >/dev/null; then
  timeout 150 compute-sanitizer --tool memcheck bin/cuda_gpu_jpeg_test --gtest_filter='*Jpega*:*DeviceOutput*:*Corrupt*:*TwoWindows*' >"$OUT/sanitizer.log" 2>&1
  echo "sanitizer rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|Invalid" "$OUT/sanitizer.log" | head -20
else
  echo "no compute-sanitizer"
fi
