// Probe (built by hand, not by CMake; needs libdeflate-dev):
//   gcc -O2 -o /tmp/png_inflate_probe bench/codecs/png_inflate_probe.c -lz -ldeflate
//   /tmp/png_inflate_probe FILE.png [ROUNDS]
// docs/python-peers.md (Run 4, "1080p PNG"): how much of a PNG decode zlib's inflate costs
// against libdeflate's, on the concatenated IDAT data of one 8-bit RGB PNG (both check adler32).
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
static double cpu_ms(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void* a, const void* b) { double x = *(double*)a, y = *(double*)b; return (x > y) - (x < y); }
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
  uint8_t* png = malloc(n); fread(png, 1, n, f); fclose(f);
  uint8_t* idat = malloc(n); size_t m = 0; uint32_t w = 0, h = 0;
  for (long p = 8; p + 8 <= n;) {
    uint32_t len = (png[p] << 24) | (png[p + 1] << 16) | (png[p + 2] << 8) | png[p + 3];
    if (!memcmp(png + p + 4, "IHDR", 4)) { w = (png[p+8]<<24)|(png[p+9]<<16)|(png[p+10]<<8)|png[p+11]; h = (png[p+12]<<24)|(png[p+13]<<16)|(png[p+14]<<8)|png[p+15]; }
    if (!memcmp(png + p + 4, "IDAT", 4)) { memcpy(idat + m, png + p + 8, len); m += len; }
    p += 12 + len;
  }
  size_t out_n = (size_t)h * (1 + (size_t)w * 3) + 1024;  // RGB 8-bit
  uint8_t* out = malloc(out_n);
  int rounds = argc > 2 ? atoi(argv[2]) : 40;
  double* tz = malloc(rounds * sizeof(double)); double* td = malloc(rounds * sizeof(double));
  struct libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  size_t got_z = 0, got_d = 0;
  for (int r = 0; r < rounds; ++r) {
    uLongf dl = out_n; double t0 = cpu_ms();
    if (uncompress(out, &dl, idat, m) != Z_OK) { puts("zlib failed"); return 1; }
    tz[r] = cpu_ms() - t0; got_z = dl;
    t0 = cpu_ms();
    if (libdeflate_zlib_decompress(d, idat, m, out, out_n, &got_d) != LIBDEFLATE_SUCCESS) { puts("libdeflate failed"); return 1; }
    td[r] = cpu_ms() - t0;
  }
  qsort(tz, rounds, sizeof(double), cmp); qsort(td, rounds, sizeof(double), cmp);
  printf("%s: %ux%u, IDAT %zu bytes -> %zu (libdeflate %zu); CPU ms best/median: zlib %s %.2f/%.2f, libdeflate %s %.2f/%.2f\n",
         argv[1], w, h, m, got_z, got_d, zlibVersion(), tz[0], tz[rounds / 2], "1.14", td[0], td[rounds / 2]);
  return 0;
}
