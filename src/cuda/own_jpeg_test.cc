// pixpath's own GPU baseline-JPEG decoder (own_jpeg_decode.h) against the CPU path: its
// coefficients against the CPU reference of the same method (decode_coefficients_parallel,
// itself tested against libjpeg-turbo), its IDCT planes against idct_islow_block (tested
// against jpeg_read_raw_data), its RGBA against tjDecompress2 (identical: the kernels run the
// arithmetic codecs_jpeg_parallel_test finds identical on the CPU). Label gpu; every test
// that needs a CUDA device skips with the reason where there is none (OwnJpegInput runs
// anywhere: host side only).
#include "own_jpeg_decode.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "codecs/testing/libjpeg_reference.h"
#include "codecs/testing/test_images.h"
#include "pixpath/codecs/jpeg_parallel_decode.h"

namespace pixpath::cuda::own_jpeg {
namespace {

using namespace codecs::jpeg;
using codecs::testing::damage_scan;
using codecs::testing::LibjpegEncodeOptions;

std::string no_gpu_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device";
  return "";
}

#define SKIP_WITHOUT_GPU()                                  \
  do {                                                      \
    const std::string reason_ = no_gpu_reason();            \
    if (!reason_.empty()) GTEST_SKIP() << reason_;          \
  } while (0)

IdctArithmetic installed_arithmetic() {
  const char* none = std::getenv("JSIMD_FORCENONE");
  return none && std::string(none) == "1" ? IdctArithmetic::C : IdctArithmetic::Simd;
}

std::vector<uint8_t> pixels(int w, int h, int comps, bool noise, uint32_t seed) {
  std::vector<uint8_t> out;
  if (noise) {
    std::mt19937 rng(seed);
    out.resize(size_t(w) * size_t(h) * size_t(comps));
    for (auto& b : out) b = uint8_t(rng());
    return out;
  }
  Picture p = codecs::testing::screen_picture(comps == 1 ? PixelFormat::GRAY8 : PixelFormat::RGB,
                                              w, h, seed);
  auto v = p.read();
  for (int y = 0; y < h; ++y) {
    const uint8_t* r = v->planes[0].unchecked_row(y);
    out.insert(out.end(), r, r + size_t(w) * size_t(comps));
  }
  return out;
}

std::vector<uint8_t> encode(int w, int h, int comps, int hy, int vy, int q, int restart,
                            bool noise, uint32_t seed) {
  LibjpegEncodeOptions o;
  o.quality = q;
  o.components = comps;
  o.h[0] = hy;
  o.v[0] = vy;
  o.restart_interval = restart;
  std::string err;
  const auto px = pixels(w, h, comps, noise, seed);
  auto j = codecs::testing::libjpeg_encode(px.data(), w, h, o, &err);
  EXPECT_FALSE(j.empty()) << err;
  return j;
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  ~Stream() { cudaStreamDestroy(s); }
};

// The GPU decode of `file` against the CPU path: "" when coefficients and planes are equal;
// the largest RGBA difference from tjDecompress2 goes to *rgba_max_diff.
std::string check_file(const std::vector<uint8_t>& file, uint32_t bits, DeviceBuffers& buffers,
                       cudaStream_t stream, int* rgba_max_diff, bool cooperative = true,
                       Report* report = nullptr, int round_cap = 0, bool variants = true,
                       bool transfer_maps = true) {
  auto parsed = parse_baseline_jpeg(file);
  if (!parsed.ok()) return "parse: " + parsed.error().message();
  ParallelDecodeOptions copt;
  copt.subsequence_bits = bits;
  auto ref = decode_coefficients_parallel(file, *parsed, copt);
  if (!ref.ok()) return "cpu: " + ref.error().message();
  Options opt;
  opt.subsequence_bits = bits;
  opt.arithmetic = installed_arithmetic();
  opt.cooperative_sync = cooperative;
  opt.sync_round_cap = round_cap;
  opt.phase_variants = variants;
  opt.transfer_maps = transfer_maps;
  Report rep;
  auto planes = decode_to_planes(file, *parsed, opt, buffers, stream, &rep);
  if (report) *report = rep;
  if (!planes.ok()) return "gpu: " + planes.error().message();
  if (!planes->warnings.empty()) return "gpu: intact data reported: " + planes->warnings[0].message();
  std::vector<int16_t> coefs(ref->coefficients.size());
  if (cudaMemcpy(coefs.data(), planes->coefficients, coefs.size() * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
    return "copy coefficients";
  }
  for (size_t i = 0; i < coefs.size(); ++i) {
    if (coefs[i] != ref->coefficients[i]) {
      return "coefficient " + std::to_string(i) + ": gpu " + std::to_string(coefs[i]) + " cpu " +
             std::to_string(ref->coefficients[i]);
    }
  }
  for (int c = 0; c < parsed->component_count; ++c) {
    const uint32_t bw = ref->blocks_w[size_t(c)], bh = ref->blocks_h[size_t(c)];
    const uint16_t* q = parsed->quant[parsed->components[size_t(c)].quant].values.data();
    std::vector<uint8_t> cpu(size_t(bw) * 8 * bh * 8), gpu(cpu.size());
    for (uint32_t by = 0; by < bh; ++by) {
      for (uint32_t bx = 0; bx < bw; ++bx) {
        idct_islow_block(ref->block(c, bx, by), q, cpu.data() + (size_t(by) * 8 * bw + bx) * 8,
                         bw * 8, opt.arithmetic);
      }
    }
    if (cudaMemcpy(gpu.data(), planes->plane[c], gpu.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
      return "copy plane";
    }
    if (gpu != cpu) return "IDCT plane " + std::to_string(c) + " differs from the CPU IDCT";
  }
  // RGBA against tjDecompress2.
  const int w = parsed->width, h = parsed->height;
  std::vector<uint8_t> tj(size_t(w) * size_t(h) * 4), ours(tj.size());
  tjhandle t = tjInitDecompress();
  const int rc = tjDecompress2(t, file.data(), (unsigned long)file.size(), tj.data(), w, w * 4, h,
                               TJPF_RGBA, 0);
  tjDestroy(t);
  if (rc != 0) return "tjDecompress2 failed";
  uint8_t* d_rgba = nullptr;
  if (cudaMalloc(&d_rgba, tj.size()) != cudaSuccess) return "cudaMalloc";
  auto conv = planes_to_rgba(*parsed, *planes, d_rgba, size_t(w) * 4, stream);
  std::string result;
  if (!conv.ok()) {
    result = "convert: " + conv.error().message();
  } else if (cudaStreamSynchronize(stream) != cudaSuccess ||
             cudaMemcpy(ours.data(), d_rgba, ours.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
    result = "copy rgba";
  } else {
    int worst = 0;
    for (size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::abs(int(ours[i]) - int(tj[i])));
    *rgba_max_diff = std::max(*rgba_max_diff, worst);
  }
  cudaFree(d_rgba);
  return result;
}

TEST(OwnGpuJpeg, EqualsCpuPathOverQualitySamplingRestartContent) {
  SKIP_WITHOUT_GPU();
  DeviceBuffers buffers;
  Stream stream;
  struct S { const char* name; int comps, h, v; } samplings[] = {
      {"4:4:4", 3, 1, 1}, {"4:2:2", 3, 2, 1}, {"4:2:0", 3, 2, 2}, {"gray", 1, 1, 1}};
  const uint32_t sub_bits[] = {32, 100, 256, 1024};
  int worst = 0, cases = 0, walks = 0, coop_runs = 0, transfer_runs = 0;
  for (int q = 1; q <= 100; ++q) {
    for (const S& s : samplings) {
      for (int restart : {0, 1 + q % 7}) {
        for (bool noise : {false, true}) {
          const int w = 97 + q % 29, h = 61 + q % 19;
          const auto file = encode(w, h, s.comps, s.h, s.v, q, restart, noise, uint32_t(q));
          const uint32_t bits = sub_bits[size_t(cases) % std::size(sub_bits)];
          // Both synchronisation launches: one cooperative kernel, and the chain of round
          // kernels (with its cap of kLaunchedSyncRounds and the serial walk after it).
          // Every fifth picture caps the rounds at 1-3, so the serial walk finishes the job.
          const bool coop = (cases / std::size(sub_bits)) % 2 == 0;
          const int cap = cases % 5 == 4 ? 1 + cases % 3 : 0;
          // And with and without the block-phase variants of step 2, and with and without
          // step 3a's transfer maps (not on the capped pictures: they would leave the serial
          // walk nothing to do).
          const bool variants = (cases / 8) % 2 == 0;
          const bool transfer = cap == 0 && (cases / 16) % 2 == 0;
          ++cases;
          int diff = 0;
          Report rep;
          EXPECT_EQ(check_file(file, bits, buffers, stream.s, &diff, coop, &rep, cap, variants, transfer), "")
              << s.name << " q" << q << " restart " << restart << (noise ? " noise" : " screen")
              << (coop ? " cooperative" : " chain") << " cap " << cap
              << (variants ? " variants" : " no variants") << (transfer ? " transfer maps" : "");
          walks += rep.serial_sweep;
          coop_runs += rep.cooperative;
          transfer_runs += rep.transfer_passes > 0;
          EXPECT_EQ(diff, 0) << s.name << " q" << q << " restart " << restart;
          worst = std::max(worst, diff);
        }
      }
    }
  }
  std::printf("RGBA against tjDecompress2 over %d pictures: max difference %d; %d in one cooperative "
              "sync kernel, %d with transfer maps, %d finished by the serial walk\n", cases, worst,
              coop_runs, transfer_runs, walks);
  EXPECT_GT(walks, 0) << "the capped pictures should need the serial walk";
  EXPECT_GT(coop_runs, 0) << "the cooperative launch should be taken on small pictures";
  EXPECT_GT(transfer_runs, 0) << "the transfer maps should run with the cooperative launch";
}

// A 4K screen-like picture, with and without restart markers, at the default subsequence size.
TEST(OwnGpuJpeg, FourKScreenPicture) {
  SKIP_WITHOUT_GPU();
  DeviceBuffers buffers;
  Stream stream;
  for (int restart : {0, 240}) {
    const auto file = encode(3840, 2160, 3, 2, 2, 50, restart, false, 1);
    // cooperative + variants + transfer maps, the same without the maps, chain + variants, no
    // variants
    int rounds_with_maps = -1, rounds_without = -1;
    for (int mode = 0; mode < 4; ++mode) {
      const bool coop = mode != 2, variants = mode != 3, transfer = mode == 0;
      int diff = 0;
      Report rep;
      EXPECT_EQ(check_file(file, 1024, buffers, stream.s, &diff, coop, &rep, 0, variants, transfer), "")
          << "restart " << restart << (coop ? " cooperative" : " chain") << (variants ? " variants" : "")
          << (transfer ? " transfer maps" : "");
      EXPECT_EQ(diff, 0);
      std::printf("4K q50 4:2:0 restart %d: %zu bytes, RGBA max difference %d; sync: transfer maps "
                  "%d passes (%u starts found), %d rounds%s, %s%s\n",
                  restart, file.size(), diff, rep.transfer_passes, rep.transfer_resolved,
                  rep.sync_rounds, rep.serial_sweep ? " + serial walk" : "",
                  rep.cooperative ? "one cooperative kernel" : "chain of round kernels",
                  rep.variants ? ", block-phase variants" : "");
      if (mode == 0) {
        EXPECT_GT(rep.transfer_passes, 0);
        EXPECT_GT(rep.transfer_resolved, 0u);
        rounds_with_maps = rep.sync_rounds;
      }
      if (mode == 1) {
        EXPECT_EQ(rep.transfer_passes, 0);
        rounds_without = rep.sync_rounds;
      }
    }
    EXPECT_LE(rounds_with_maps, rounds_without) << "restart " << restart;
    if (rounds_without > 0) {
      EXPECT_LT(rounds_with_maps, rounds_without) << "restart " << restart;
    }
  }
}

std::string joined(const std::vector<Error>& warnings) {
  std::string s;
  for (const Error& w : warnings) s += (s.empty() ? "" : " | ") + w.reason();
  return s;
}

// Damaged or hostile data: the GPU decode of `data` with `opt` against the CPU reference of the
// same method at opt.subsequence_bits. They agree when both fail, or both decode to the same
// warnings (word for word but the stage) and coefficients.
struct ReferenceCheck {
  std::string mismatch;         // "" when they agree, else what differs
  std::string failed;           // both failed: their errors ("" otherwise)
  std::vector<Error> warnings;  // the GPU's, when it decoded
};

ReferenceCheck against_cpu_reference(std::span<const uint8_t> data, const BaselineJpeg& parsed,
                                     const Options& opt, DeviceBuffers& buffers, cudaStream_t stream) {
  ReferenceCheck r;
  auto cpu = decode_coefficients_parallel(data, parsed, ParallelDecodeOptions{opt.subsequence_bits});
  auto gpu = decode_to_planes(data, parsed, opt, buffers, stream);
  if (!cpu.ok() || !gpu.ok()) {
    if (!cpu.ok() && !gpu.ok())
      r.failed = "cpu: " + cpu.error().message() + "; gpu: " + gpu.error().message();
    else if (!cpu.ok())
      r.mismatch = "cpu failed, gpu decoded: " + cpu.error().message();
    else
      r.mismatch = "gpu failed, cpu decoded: " + gpu.error().message();
    return r;
  }
  r.warnings = gpu->warnings;
  if (joined(gpu->warnings) != joined(cpu->warnings)) {
    r.mismatch = "warnings: gpu '" + joined(gpu->warnings) + "' cpu '" + joined(cpu->warnings) + "'";
    return r;
  }
  std::vector<int16_t> coefs(cpu->coefficients.size());
  if (cudaMemcpy(coefs.data(), gpu->coefficients, coefs.size() * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
    r.mismatch = "copy coefficients";
    return r;
  }
  for (size_t i = 0; i < coefs.size(); ++i) {
    if (coefs[i] != cpu->coefficients[i]) {
      r.mismatch = "coefficient " + std::to_string(i) + ": gpu " + std::to_string(coefs[i]) + " cpu " +
                   std::to_string(cpu->coefficients[i]);
      break;
    }
  }
  return r;
}

// Broken entropy data: the GPU decoder reports exactly the damage the CPU reference reports
// (the same warnings, word for word but the stage) and produces its coefficients
// (compute-sanitizer on the GPU machine checks bounds). Bytes changed, bits flipped and scans
// cut short, with and without restart intervals.
TEST(OwnGpuJpeg, DamageAgreesWithTheCpuReference) {
  SKIP_WITHOUT_GPU();
  DeviceBuffers buffers;
  Stream stream;
  std::mt19937 rng(5);
  int damaged = 0, trials = 0;
  // PIXPATH_OWN_DAMAGE_TRIALS: fewer trials per restart setting, for compute-sanitizer's racecheck
  // (run.sh), under which the 200 take minutes.
  const char* env_trials = std::getenv("PIXPATH_OWN_DAMAGE_TRIALS");
  const int trials_each = env_trials && std::atoi(env_trials) > 0 ? std::min(200, std::atoi(env_trials)) : 200;
  for (int restart : {0, 4}) {
    const auto file = encode(160, 96, 3, 2, 2, 70, restart, false, 3);
    auto good = parse_baseline_jpeg(file);
    ASSERT_TRUE(good.ok());
    for (int trial = 0; trial < trials_each; ++trial) {
      const auto bad = damage_scan(file, good->scan_begin, good->scan_end, trial, rng);
      auto p = parse_baseline_jpeg(bad);
      if (!p.ok()) continue;
      ++trials;
      Options opt;
      opt.subsequence_bits = 16 + uint32_t(trial % 100);
      opt.cooperative_sync = trial % 2 == 0;  // and the chain (short subsequences: its cap, serial walk)
      opt.phase_variants = trial % 4 < 2;
      const auto r = against_cpu_reference(bad, *p, opt, buffers, stream.s);
      ASSERT_EQ(r.failed, "") << "restart " << restart << " trial " << trial;  // damage decodes, reported
      EXPECT_EQ(r.mismatch, "") << "restart " << restart << " trial " << trial;
      for (const Error& w : r.warnings) {
        EXPECT_EQ(w.severity(), Severity::Warning);
        EXPECT_EQ(w.stage(), "own gpu decode");
      }
      damaged += !r.warnings.empty();
    }
  }
  EXPECT_GT(damaged, trials / 2) << "the damage should show";
  std::printf("damaged inputs reported by both: %d of %d\n", damaged, trials);
}

// The project's damaged files (issue 15: nvJPEG decodes the bit-flipped one silently) are
// reported by the GPU decoder; the intact ones are not.
TEST(OwnGpuJpeg, DamagedFilesOfTheProjectAreReported) {
  SKIP_WITHOUT_GPU();
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest and run.sh set it)";
  DeviceBuffers buffers;
  Stream stream;
  struct Case {
    const char* file;
    const char* says;  // "" = intact
  } cases[] = {
      {"cjpeg-q75.jpg", ""},
      {"cjpeg-440-q75.jpg", ""},
      {"cjpeg-q75-bitflips.jpg", "4 extraneous bytes"},
      {"cjpeg-q75-truncated.jpg", "Premature end of JPEG data"},
  };
  for (const Case& c : cases) {
    const auto file = codecs::testing::slurp(std::string(root) + "/jpeg/" + c.file);
    ASSERT_FALSE(file.empty()) << c.file;
    auto p = parse_baseline_jpeg(file);
    ASSERT_TRUE(p.ok()) << c.file << ": " << p.error().message();
    auto gpu = decode_to_planes(file, *p, Options{}, buffers, stream.s);
    ASSERT_TRUE(gpu.ok()) << c.file << ": " << gpu.error().message();
    if (std::string(c.says).empty()) {
      EXPECT_TRUE(gpu->warnings.empty()) << c.file << ": " << joined(gpu->warnings);
    } else {
      EXPECT_NE(joined(gpu->warnings).find(c.says), std::string::npos)
          << c.file << ": " << joined(gpu->warnings);
    }
  }
}

// Fuzz findings (every file under tests/data/regressions/jpeg_baseline/ and regressions/jpeg/,
// so a new finding is covered once committed there): the GPU decode gives the CPU reference's
// coefficients and warnings, or fails where it fails, at several subsequence sizes and with
// both synchronisation launches. sync_never_converges needs the rounds' cap and the serial
// walk. run.sh runs this under compute-sanitizer memcheck and racecheck too.
TEST(OwnGpuJpeg, FuzzFoundInputsAgreeWithTheCpuReference) {
  SKIP_WITHOUT_GPU();
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest and run.sh set it)";
  DeviceBuffers buffers;
  Stream stream;
  int files = 0, decoded = 0;
  for (const char* sub : {"/regressions/jpeg_baseline", "/regressions/jpeg"}) {
    std::vector<std::filesystem::path> paths;
    for (const auto& e : std::filesystem::directory_iterator(std::string(root) + sub))
      if (e.is_regular_file()) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      const auto data = codecs::testing::slurp(path.string());
      ASSERT_FALSE(data.empty()) << path;
      ++files;
      auto parsed = parse_baseline_jpeg(data);
      if (!parsed.ok()) continue;  // refused on the host: never reaches the GPU
      for (uint32_t bits : {16u, 8 + uint32_t(data.size() % 512), 1024u}) {
        if (bits < 16) continue;
        for (bool coop : {true, false}) {
          const std::string what = path.filename().string() + " " + std::to_string(bits) + " bits" +
                                   (coop ? " cooperative" : " chain");
          Options opt;
          opt.subsequence_bits = bits;
          opt.cooperative_sync = coop;
          const auto r = against_cpu_reference(data, *parsed, opt, buffers, stream.s);
          EXPECT_EQ(r.mismatch, "") << what;
          decoded += r.failed.empty() && r.mismatch.empty();
        }
      }
    }
  }
  std::printf("fuzz-found inputs: %d files, %d GPU decodes agreeing with the CPU reference\n", files, decoded);
  EXPECT_GE(files, 2);
  EXPECT_GT(decoded, 0) << "sync_never_converges should parse and decode";
}

// The host side of the decode from plain data (no GPU needed): the input a route across the
// module's ABI would carry, and the warnings made from the kernels' damage words.
TEST(OwnJpegInput, MadeFromTheParseAndTheDamageWordsBecomeWarnings) {
  const auto file = encode(100, 60, 3, 2, 2, 75, 3, false, 2);
  auto p = parse_baseline_jpeg(file);
  ASSERT_TRUE(p.ok());
  auto in = make_own_jpeg_input(file, *p, 64);
  ASSERT_TRUE(in.ok()) << in.error().message();
  EXPECT_EQ(in->upsampling, Upsampling::H2V2);
  EXPECT_EQ(in->components, 3);
  EXPECT_EQ(in->sample_width[1], 50);
  EXPECT_EQ(in->sample_height[1], 30);
  EXPECT_EQ(in->quant[64 + 5], p->quant[p->components[1].quant].values[5]);
  EXPECT_TRUE(in->has_eoi);
  ASSERT_TRUE(in->tables);
  auto plan = plan_parallel_decode(file, *p, ParallelDecodeOptions{64});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(in->plan.sub_begin, plan->sub_begin);
  EXPECT_EQ(in->plan.scan_blocks, plan->scan_blocks);
  // 4:1:1: the colour conversion does not take it; the route would leave it to another decoder.
  const auto f411 = encode(100, 60, 3, 4, 1, 75, 0, false, 2);
  auto p411 = parse_baseline_jpeg(f411);
  ASSERT_TRUE(p411.ok());
  auto refused = make_own_jpeg_input(f411, *p411);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::Unsupported);
  // Damage words as the kernels leave them: intact, then a bad code in interval 2 of 3 more.
  DamageWords intact;
  EXPECT_TRUE(damage_warnings(*p, intact, "gpu decode").empty());
  DamageWords bad;
  bad.first_segment[0] = 2;
  bad.segments[0] = 4;
  const auto w = damage_warnings(*p, bad, "gpu decode");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].code(), ErrorCode::CorruptData);
  EXPECT_EQ(w[0].stage(), "gpu decode");
  EXPECT_EQ(w[0].reason(), "Corrupt JPEG data: bad Huffman code in restart interval 2 (MCUs 6..8) and 3 more");
}

}  // namespace
}  // namespace pixpath::cuda::own_jpeg
