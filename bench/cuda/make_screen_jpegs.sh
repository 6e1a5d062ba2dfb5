#!/usr/bin/env bash
# Makes real screen-content JPEGs for the GPU decode benchmark: an Xvfb screen with xterms full
# of text, xclock, xeyes and glxgears, captured with ImageMagick's import, encoded by
# libjpeg-turbo's cjpeg (q50 4:2:0 and q90 4:4:4, plus a q70 file with a restart marker every
# 2 MCU rows and crops for the backend-routing sizes).
# Usage: make_screen_jpegs.sh OUTDIR   (KEEP_PPM=1: also keep the captures, OUTDIR/screen*.ppm,
#        which bench/python/compare_cpu.py encodes as PNG and WebP)
set -euo pipefail
out=${1:?usage: make_screen_jpegs.sh OUTDIR}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

shot() {  # shot W H NAME
  local w=$1 h=$2 name=$3 disp=:$((RANDOM % 400 + 100))
  Xvfb "$disp" -screen 0 "${w}x${h}x24" -nolisten tcp >/dev/null 2>&1 &
  local xpid=$!
  sleep 1
  export DISPLAY=$disp
  local cols=$((w / 7 / 2 - 2)) rows=$((h / 14 - 4))
  xterm -geometry "${cols}x${rows}+0+0" -fa Monospace -fs 9 -e bash -c 'ls -laR /usr/share/doc | head -3000; sleep 60' &
  xterm -geometry "${cols}x${rows}+$((w / 2))+0" -bg navy -fg yellow -e bash -c 'man bash | cat; sleep 60' &
  xclock -geometry "300x300+$((w / 2 - 150))+$((h / 2 - 150))" -update 1 &
  xeyes -geometry "300x200+$((w - 320))+$((h - 220))" &
  glxgears -geometry "400x400+$((w / 3))+$((h / 2))" >/dev/null 2>&1 &
  sleep 4
  import -window root "$tmp/$name.ppm"
  kill $(jobs -p | grep -v "^$xpid$") 2>/dev/null || true
  kill "$xpid" 2>/dev/null || true
  wait 2>/dev/null || true
}

shot 3840 2160 screen4k
shot 1920 1080 screen1080
for n in screen4k screen1080; do
  cjpeg -quality 50 -sample 2x2 -outfile "$out/${n}_q50_420.jpg" "$tmp/$n.ppm"
  cjpeg -quality 90 -sample 1x1 -outfile "$out/${n}_q90_444.jpg" "$tmp/$n.ppm"
done
cjpeg -quality 70 -sample 2x2 -restart 2 -outfile "$out/screen4k_q70_420_rst2.jpg" "$tmp/screen4k.ppm"
# Crops for the HYBRID / GPU_HYBRID routing and the small-picture threshold (q50 4:2:0, top-left
# of the 4K screen).
for s in 128x128 192x192 256x256 384x384 512x512 1024x768 1280x1024 1600x1200; do
  w=${s%x*}; h=${s#*x}
  pnmcut -left 0 -top 0 -width "$w" -height "$h" "$tmp/screen4k.ppm" | cjpeg -quality 50 -sample 2x2 -outfile "$out/crop_${s}_q50_420.jpg"
done
if [ -n "${KEEP_PPM:-}" ]; then cp "$tmp"/screen4k.ppm "$tmp"/screen1080.ppm "$out/"; fi
ls -l "$out"
