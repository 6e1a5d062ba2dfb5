// `pixpath decode INPUT -o OUTPUT [--size WxH --rgb-format F [--rowstride N]] [--gpu]`: one
// picture through the CPU decoders (codecs::run_decode does the work and checks the values),
// or with --gpu a JPEG through nvJPEG (the GPU module), brought back to host memory to write.
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "pixpath/codecs/codec_commands.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/cuda/gpu_jpeg.h"

namespace pixpath::tools {
namespace {

// JPEG file -> nvJPEG -> host RGBA -> OUTPUT. Returns the exit status.
int decode_on_gpu(const std::string& input, const std::string& output, const std::string& device) {
  auto fail = [](const Error& e) {
    std::cerr << "pixpath decode: " << e.message() << "\n";
    return 1;
  };
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
    std::string input, output, size, rgb_format, rowstride, gpu_device;
    bool gpu = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("INPUT", a->input, "Picture to decode")->required();
  cmd->add_option("-o,--output", a->output, "Where to write the decoded picture")->required();
  cmd->add_option("--size", a->size, "Raw input: WxH");
  cmd->add_option("--rgb-format", a->rgb_format, "Raw input: byte order (BGRX, RGBA, RGB, ...)");
  cmd->add_option("--rowstride", a->rowstride, "Raw input: bytes per row (default: packed)");
  cmd->add_flag("--gpu", a->gpu, "Decode a JPEG on the GPU (nvJPEG); fails clearly without one");
  cmd->add_option("--gpu-device", a->gpu_device,
                  "GPU for --gpu: index, cuda:N, PCI bus id or a name substring");
  cmd->callback([a, &exit_code] {
    if (a->gpu) {
      if (!a->size.empty() || !a->rgb_format.empty()) {
        std::cerr << "pixpath decode: --gpu decodes JPEG files; raw rgb input is a CPU job\n";
        exit_code = 2;
        return;
      }
      exit_code = decode_on_gpu(a->input, a->output, a->gpu_device);
      return;
    }
    std::vector<std::string> args{a->input, "-o", a->output};
    if (!a->size.empty()) args.insert(args.end(), {"--size", a->size});
    if (!a->rgb_format.empty()) args.insert(args.end(), {"--rgb-format", a->rgb_format});
    if (!a->rowstride.empty()) args.insert(args.end(), {"--rowstride", a->rowstride});
    std::ostringstream err;
    exit_code = codecs::run_decode(args, std::cout, err);
    if (exit_code != 0) std::cerr << "pixpath decode: " << err.str();
  });
}

}  // namespace pixpath::tools
