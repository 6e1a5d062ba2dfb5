// `pixpath decode INPUT -o OUTPUT [--size WxH --rgb-format F [--rowstride N]] [--gpu]`: one
// picture through the CPU decoders (codecs::decode_image_file), or with --gpu a JPEG through
// nvJPEG (the GPU module), brought back to host memory; written as PNG/PPM/PAM by OUTPUT's
// extension (codecs::write_image_file). CLI11 checks every value (option_values.h).
// A JPEG the GPU route refuses (paint::gpu_exactness_refusal: arithmetic coding, CMYK/YCCK, a
// colour picture the hardware JPEG engines do not decode, a truncated stream) or fails is
// decoded on the CPU, with a notice on stderr. The decoder's warnings (a damaged stream that still decoded)
// are printed on stderr and give exit status 3 (kDecodedWithWarnings): the output is written.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "option_values.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/cuda/gpu_jpeg.h"

namespace pixpath::tools {
namespace {

int fail(const Error& e) {
  std::cerr << "pixpath decode: " << e.message() << "\n";
  return 1;
}

// Writes the picture, prints the warnings; the exit status.
int finish(const codecs::DecodeResult& decoded, const std::string& input, const std::string& output,
           std::string_view how) {
  auto view = decoded.picture.read();
  if (!view.ok()) return fail(view.error());
  auto written = codecs::write_image_file(output, *view);
  if (!written.ok()) return fail(written.error());
  for (const auto& w : decoded.warnings) std::cerr << "pixpath decode: warning: " << w.message() << "\n";
  std::cout << "decoded " << input << " -> " << output << how;
  if (!decoded.warnings.empty())
    std::cout << " with " << decoded.warnings.size() << " warning" << (decoded.warnings.size() > 1 ? "s" : "")
              << " (damaged data: the picture may be incomplete)";
  std::cout << "\n";
  return decoded.warnings.empty() ? 0 : kDecodedWithWarnings;
}

// INPUT (a picture file, or raw rgb bytes) -> the CPU decoders -> OUTPUT. Returns the exit
// status.
int decode_on_cpu(const std::string& input, const std::string& output,
                  const std::optional<codecs::RawImageSpec>& raw, std::string_view how = "") {
  auto decoded = codecs::decode_image_file(input, raw);
  if (!decoded.ok()) return fail(decoded.error());
  return finish(*decoded, input, output, how);
}

// JPEG file -> nvJPEG -> host RGBA -> OUTPUT; what the GPU refuses or fails goes to the CPU.
// Returns the exit status.
int decode_on_gpu(const std::string& input, const std::string& output, const std::string& device) {
  auto bytes = codecs::read_file(input);
  if (!bytes.ok()) return fail(bytes.error());
  cuda::GpuDecoderOptions options;
  options.device = device;
  auto decoder = cuda::GpuJpegDecoder::create(options);
  if (!decoder.ok()) return fail(decoder.error());
  auto decoded = (*decoder)->decode_to_host(*bytes, {});
  if (!decoded.ok()) {
    std::cerr << "pixpath decode: notice: not on the GPU: " << decoded.error().message()
              << "; decoding on the CPU\n";
    return decode_on_cpu(input, output, std::nullopt, " (on the CPU)");
  }
  return finish(*decoded, input, output, " (on the GPU)");
}

}  // namespace

void add_decode_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "decode",
      "Decode a picture file (jpeg, png, webp, or raw rgb bytes with --size and --rgb-format) "
      "and write it as PNG/PPM (by OUTPUT's extension)");
  cmd->footer(
      "Exit status: 0 decoded; 1 failed (unreadable file, undecodable data, GPU unavailable "
      "with --gpu); 2 bad arguments; 3 decoded with warnings: the data is damaged (e.g. "
      "\"Premature end of JPEG file\", \"Corrupt JPEG data\"), the warnings are on stderr and "
      "the output, written anyway, may be incomplete.");
  struct Args {
    std::string input, output, gpu_device;
    RawInputOptions raw;
    bool gpu = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("INPUT", a->input, "Picture to decode")->required();
  cmd->add_option("-o,--output", a->output,
                  "Where to write the decoded picture (.png, .ppm/.pgm/.pnm or .pam)")
      ->required();
  auto [size, rgb_format] = add_raw_input_options(*cmd, a->raw);
  cmd->add_flag("--gpu", a->gpu,
                "Decode a JPEG on the GPU (nvJPEG); fails clearly without one. JPEG files only: "
                "raw rgb input is a CPU job. JPEGs the GPU cannot decode as the CPU does "
                "(arithmetic coding, CMYK/YCCK, progressive or extended colour, colour without "
                "hardware JPEG engines, truncated) or fails on are decoded on the CPU, with a "
                "notice on stderr")
      ->excludes(size)
      ->excludes(rgb_format);
  cmd->add_option("--gpu-device", a->gpu_device,
                  "GPU for --gpu: index, cuda:N, PCI bus id or a name substring");
  cmd->callback([a, &exit_code] {
    exit_code = a->gpu ? decode_on_gpu(a->input, a->output, a->gpu_device)
                       : decode_on_cpu(a->input, a->output, a->raw.spec());
  });
}

}  // namespace pixpath::tools
