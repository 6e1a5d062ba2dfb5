// `pixpath play FILE [--backing cpu|gl|gl-window] [--decoder cpu|gpu|auto] [--pace recorded|max]
// [--snapshot-dir DIR] [--json] [--decode-threads N] [--video-threads N] [--progress]`: replays
// a recording (docs/recording-format.md) through the paint engine (paint::play_recording) into the backing
// made by name (paint::make_backing) and prints per-coding latency (play_report.h).
// Exit status: 0 ok, 1 the file could not be played, 2 bad arguments or some draws failed to
// decode (acked -1).
//
// Progress: on a terminal, one stderr line that rewrites itself; when stderr is not a
// terminal, nothing unless --progress (then one line per update).
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include "commands.h"
#include "gpu_route_options.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/paint/backing_registry.h"
#include "pixpath/paint/player.h"
#include "play_report.h"

namespace pixpath::tools {
namespace {

// `end_progress` runs once the play is over, before anything else is printed.
int run_play(const paint::PlayOptions& options, const std::string& backing_name, bool json,
             const std::function<void()>& end_progress) {
  auto backing = paint::make_backing(backing_name);
  if (!backing.ok()) {
    std::cerr << "pixpath play: " << backing.error().message() << "\n";
    return 1;
  }
  auto result = paint::play_recording(options, **backing);
  end_progress();
  if (!result.ok()) {
    std::cerr << "pixpath play: " << result.error().message() << "\n";
    return 1;
  }
  if (json)
    std::cout << play_result_json(*result).dump(2) << "\n";
  else
    print_play_table(*result, std::cout);
  return result->all.errors > 0 ? 2 : 0;
}

}  // namespace

void add_play_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "play", "Replay a recording (.pxrec) through the paint engine and print per-coding latency");
  struct Args {
    paint::PlayOptions options;
    std::string backing = "cpu";
    bool json = false;
    std::string decoder = "cpu";
    std::string gpu_routing = "measured";
    cuda::GpuDecoderOptions gpu;
    bool progress = false;
  };
  auto a = std::make_shared<Args>();
  a->options.file.clear();
  cmd->add_option("FILE", a->options.file, "Recording to play (pixpath record writes them)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--backing", a->backing,
                  "Window backing: cpu, gl (headless OpenGL), gl-window (X11, OpenGL) or x11 (X11 "
                  "shared memory, no OpenGL), when built")
      ->capture_default_str();
  cmd->add_option("--decoder", a->decoder,
                  "jpeg/jpega decoder: cpu, gpu (nvJPEG; an error without one) or auto (gpu "
                  "when the GPU module loads and the backing is gl)")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
      ->capture_default_str();
  cmd->add_option("--gpu-device", a->gpu.device,
                  "GPU for --decoder gpu/auto: index, cuda:N, PCI bus id or a name substring");
  const std::map<std::string, paint::Pace> paces{{"recorded", paint::Pace::Recorded},
                                                 {"max", paint::Pace::Max}};
  cmd->add_option("--pace", a->options.pace,
                  "recorded: at the recorded arrival times; max: as fast as it decodes")
      ->transform(CLI::CheckedTransformer(paces, CLI::ignore_case))
      ->default_str("recorded");
  cmd->add_option("--snapshot-dir", a->options.snapshot_dir,
                  "Write every window's final picture as DIR/window-WID.png");
  cmd->add_flag("--json", a->json, "Print the result as JSON on stdout");
  cmd->add_option("--decode-threads", a->options.decode_threads, "Decoder worker threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--video-threads", a->options.video_threads,
                  "Video threads: each window's video (h264, vp8, vp9) decodes on one of them, off "
                  "the UI thread; 0: min(4, cores)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  add_gpu_route_options(*cmd, a->options.gpu_max_batch, a->options.gpu_min_pixels, a->gpu_routing);
  cmd->add_flag("--progress", a->progress,
                "Print progress on stderr even when it is not a terminal");
  cmd->callback([a, &exit_code] {
    paint::PlayOptions options = a->options;
    options.gpu_route_by_measurement = a->gpu_routing == "measured";
    options.decoder = *paint::parse_decoder_choice(a->decoder);  // checked by IsMember above
    options.gpu_factory = cuda::gpu_draw_decoder_factory(a->gpu);
    const bool tty = ::isatty(STDERR_FILENO) == 1;
    bool printed = false;
    if (tty || a->progress) {
      options.progress = [tty, &printed](const paint::PlayProgress& p) {
        std::fprintf(stderr, "%s%lld/%lld events, %lld draws painted, %.1f s%s",
                     tty ? "\r\033[K" : "", static_cast<long long>(p.events_done),
                     static_cast<long long>(p.events_total), static_cast<long long>(p.draws_acked),
                     p.elapsed_s, tty ? "" : "\n");
        printed = true;
      };
    }
    exit_code = run_play(options, a->backing, a->json, [tty, &printed] {
      if (printed && tty) std::fprintf(stderr, "\n");  // end the line that rewrote itself
    });
  });
}

}  // namespace pixpath::tools
