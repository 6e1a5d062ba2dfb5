// `pixpath decode INPUT -o OUTPUT [--size WxH --rgb-format F [--rowstride N]] [--gpu]`: one
// picture through the CPU decoders (codecs::read_image_file), or with --gpu a JPEG through
// nvJPEG (the GPU module), brought back to host memory; written as PNG/PPM/PAM by OUTPUT's
// extension (codecs::write_image_file). CLI11 checks every value (option_values.h).
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

// INPUT (a picture file, or raw rgb bytes) -> the CPU decoders -> OUTPUT. Returns the exit
// status.
int decode_on_cpu(const std::string& input, const std::string& output,
                  const std::optional<codecs::RawImageSpec>& raw) {
  auto picture = codecs::read_image_file(input, raw);
  if (!picture.ok()) return fail(picture.error());
  auto view = picture->read();
  if (!view.ok()) return fail(view.error());
  auto written = codecs::write_image_file(output, *view);
  if (!written.ok()) return fail(written.error());
  std::cout << "decoded " << input << " -> " << output << "\n";
  return 0;
}

// JPEG file -> nvJPEG -> host RGBA -> OUTPUT. Returns the exit status.
int decode_on_gpu(const std::string& input, const std::string& output, const std::string& device) {
  auto bytes = codecs::read_file(input);
  if (!bytes.ok()) return fail(bytes.error());
  cuda::GpuDecoderOptions options;
  options.device = device;
  auto decoder = cuda::GpuJpegDecoder::create(options);
  if (!decoder.ok()) return fail(decoder.error());
  auto decoded = (*decoder)->decode_to_host(*bytes, {});
  if (!decoded.ok()) return fail(decoded.error());
  for (const auto& w : decoded->warnings) std::cerr << "pixpath decode: " << w.message() << "\n";
  auto view = decoded->picture.read();
  if (!view.ok()) return fail(view.error());
  auto written = codecs::write_image_file(output, *view);
  if (!written.ok()) return fail(written.error());
  return 0;
}

}  // namespace

void add_decode_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "decode",
      "Decode a picture file (jpeg, png, webp, or raw rgb bytes with --size and --rgb-format) "
      "and write it as PNG/PPM (by OUTPUT's extension)");
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
                "raw rgb input is a CPU job")
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
