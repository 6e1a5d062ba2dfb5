#!/usr/bin/env bash
# One device call for the paint engine's GPU route: the GPU paint tests, the engine tests, then
# gpu_paint_benchmark (cpu vs gpu decoder, GL backing, pace max) on a 4K screen-content
# recording made there from the carried screen JPEGs and on the sample recording. Run from the
# staged folder (.devstage): bin/ (binaries, libpixpath_cuda.so), libs/ (libnvjpeg.so.13 and the
# shared libraries the binaries need), data/ (screen JPEGs), tests/data (sample.pxrec).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
here=$(pwd)
export LD_LIBRARY_PATH="$here/libs:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}"
export PIXPATH_CUDA_MODULE="$here/bin/libpixpath_cuda.so"
export PIXPATH_TEST_DATA="$here/tests/data" PIXPATH_SCREEN_JPEGS="$here/data"
for j in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
  [ -f "$j" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$j" && break
done
{ date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.mem --format=csv; nproc
  ldd bin/gl_gpu_paint_test | grep "not found"; } 2>&1 | tee "$OUT/env.log"
echo "=== engine tests (fake GPU)"; timeout 120 bin/paint_threaded_test --gtest_filter='PaintEngine*' --gtest_brief=1 2>&1 | tail -4
echo "=== GPU paint tests"
timeout 300 bin/gl_gpu_paint_test --gtest_color=no >"$OUT/tests.log" 2>&1; echo "tests rc=$?"
grep -vE "^\[ RUN|^$" "$OUT/tests.log" | cut -c1-300 | tail -60
echo "=== benchmark"
bin/gpu_paint_benchmark --make-recording /tmp/screen4k.pxrec --draws ${DRAWS:-240} data/screen4k_q50_420.jpg \
  data/screen4k_q70_420_rst2.jpg data/screen1080_q50_420.jpg data/screen4k_q90_444.jpg data/crop_512x512_q50_420.jpg
timeout 240 bin/gpu_paint_benchmark --threads ${THREADS:-2} --repeat ${REPEAT:-2} /tmp/screen4k.pxrec tests/data/sample.pxrec 2>&1 | tee "$OUT/bench.log" | cut -c1-400
echo "bench rc=${PIPESTATUS[0]}"
if [ "${LATENCY:-1}" = 1 ]; then
  echo "=== latency: one draw in flight"
  timeout 120 bin/gpu_paint_benchmark --threads 2 --in-flight 1 /tmp/screen4k.pxrec tests/data/sample.pxrec 2>&1 | tee -a "$OUT/bench.log" | grep -v "decoder info" | cut -c1-400
  echo "=== throughput: 4 decode threads"
  timeout 120 bin/gpu_paint_benchmark --threads 4 /tmp/screen4k.pxrec 2>&1 | tee -a "$OUT/bench.log" | grep -v "decoder info" | cut -c1-400
fi
