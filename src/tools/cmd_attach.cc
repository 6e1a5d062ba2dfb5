// `pixpath attach URL [--headless] [--snapshot-dir DIR] [--snapshot-interval S]
// [--exit-after S] [--encoding E] [--encodings LIST] [--quality Q] [--speed S] [--password-file F]
// [--packet-encoder auto|rencodeplus|bencode] [--steal=yes|no] [--decode-threads N]
// [--video-threads N] [--json] [--progress] [--backing auto|x11|gl-window]`: a live view of an
// xpra session (attach_session.h does the work).
#include <iostream>
#include <memory>

#include "commands.h"
#include "gpu_route_options.h"
#include "attach_session.h"
#include "limit_options.h"

namespace pixpath::tools {

// Options shared by attach and record.
void add_session_options(CLI::App& cmd, AttachOptions& o) {
  cmd.add_option("URL", o.url,
                 "The xpra session: tcp://HOST:PORT/, ssl://HOST[:PORT]/ (TLS, verified), "
                 "ws://HOST[:PORT]/ or wss://HOST[:PORT]/ (websocket), ssh://[USER@]HOST[:PORT]/[N] "
                 "(the system ssh runs `xpra _proxy` there), socket:///PATH (a local Unix socket) "
                 "or :N (the local session on display N, found as `xpra attach :N` finds it)")
      ->required();
  cmd.add_option("--ssl-ca-certs", o.transport.tls.ca_certs,
                 "ssl://, wss://: verify the server's certificate against the authorities in this "
                 "PEM file (or directory), e.g. the server's own certificate (default: the "
                 "system's trust store)");
  cmd.add_option("--ssl-server-verify-mode", o.ssl_verify_mode,
                 "ssl://, wss://: required (default) verifies the certificate and the host name; "
                 "none (as --ssl-insecure) does not (xpra's option; optional means required here)")
      ->check(CLI::IsMember({"none", "optional", "required"}))
      ->capture_default_str();
  cmd.add_flag("--ssl-insecure", o.ssl_insecure,
               "ssl://, wss://: do NOT verify the server's certificate or host name (encrypted, but "
               "to whoever answers; a warning says so)");
  cmd.add_option("--ssl-server-hostname", o.transport.tls.server_name,
                 "ssl://, wss://: the name the server's certificate must carry (default: the host "
                 "of the URL: a DNS name against its DNS names, an IP address against its IP "
                 "addresses)");
  cmd.add_option("--ssh", o.transport.ssh.command,
                 "ssh://: the ssh command and its options, split like a shell command, e.g. "
                 "\"ssh -p 2222 -i KEY -o StrictHostKeyChecking=no\" (auto: ssh -x)")
      ->capture_default_str();
  cmd.add_option("--remote-xpra", o.transport.ssh.remote_xpra,
                 "ssh://: the xpra command on the remote host, tried in order (repeat the option; "
                 "default: xpra on its PATH, $XDG_RUNTIME_DIR/xpra/run-xpra, /usr/local/bin/xpra)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_option("--socket-dir", o.transport.ssh.socket_dir,
                 "ssh://: the socket directory the remote xpra looks for its session in");
  cmd.add_option("--encoding", o.encoding,
                 "Preferred coding (rgb24 is lossless; a 3.1 server still picks rgb24 for windows "
                 "narrower than ~2048 px unless it runs with XPRA_ENCODING_STRICT_MODE=1)")
      ->capture_default_str();
  cmd.add_option("--quality", o.quality, "Lossy coding quality 1..100 (default: the server's)")
      ->check(CLI::Range(1, 100));
  cmd.add_option("--speed", o.speed,
                 "Encoding speed 1..100 (default: the server's, tuned as it goes): lower asks "
                 "the server for more compression, higher for less encoding time")
      ->check(CLI::Range(1, 100));
  cmd.add_option("--password-file", o.password_file,
                 "File holding the password (else the XPRA_PASSWORD environment variable; "
                 "never on the command line)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--decode-threads", o.decode_threads, "Decoder worker threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd.add_option("--video-threads", o.video_threads,
                 "Video threads: each window's video (h264, vp8, vp9) decodes on one of them, off the "
                 "UI thread; 0: min(4, cores)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  add_gpu_route_options(cmd, o.gpu_max_batch, o.gpu_min_pixels, o.gpu_routing);
  cmd.add_option("--exit-after", o.exit_after_s, "End the session after S seconds (0: run until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--snapshot-dir", o.snapshot_dir,
                 "Write each window as DIR/<wid>-<title>.png (every --snapshot-interval and at exit)");
  cmd.add_option("--snapshot-interval", o.snapshot_interval_s,
                 "Seconds between snapshots (0: only at exit and when a window is lost)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--connect-timeout", o.connect_timeout_s,
                 "Seconds to connect (TCP, TLS handshake, websocket upgrade) and to wait for the "
                 "server's hello")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_flag("--steal", o.steal,
               "Take the session over from another client (default yes, as xpra's own client; "
               "--steal=no opts out, which xpra 6.x refuses): a server started with "
               "--sharing=yes keeps both clients")
      ->capture_default_str();
  cmd.add_option("--packet-encoder", o.packet_encoder,
                 "Packet encoding: auto (rencodeplus for xpra 4+; bencode once if the server "
                 "cannot read it, as xpra 3.1), rencodeplus or bencode")
      ->check(CLI::IsMember({"auto", "rencodeplus", "bencode"}))
      ->capture_default_str();
  cmd.add_option("--encodings", o.encodings,
                 "Offer only these codings, comma-separated (default: every coding this build "
                 "paints, scroll included; a list offers scroll only where it names it; xpra 6.x "
                 "sends an xterm as jpeg when png and webp are not offered)")
      ->delimiter(',');
  cmd.add_option("--decoder", o.decoder,
                 "jpeg/jpega decoder: cpu, gpu (nvJPEG; fails without one) or auto (gpu when "
                 "the GPU module loads and the backing is GL)")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
      ->capture_default_str();
  cmd.add_flag("--json", o.json, "Print the session summary as JSON on stdout");
  add_limit_options(cmd, o.limits);
  cmd.add_flag("--progress", o.progress,
               "Status lines on stderr even when it is not a terminal (every 5 s)");
}

void add_attach_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "attach",
      "Attach to an xpra server: paint every window (in X11 windows when a display is "
      "available: shared memory or OpenGL, --backing; else headless), ack every draw, snapshot windows as PNG; Ctrl-C "
      "disconnects cleanly");
  auto o = std::make_shared<AttachOptions>();
  o->command = "attach";
  o->headless = false;
  add_session_options(*cmd, *o);
  cmd->add_flag("--headless", o->headless,
                "Paint into memory only (CPU backing), even where a display is available");
  cmd->add_option("--backing", o->backing,
                  "Windows (where DISPLAY is set): x11 (X11 shared memory, no OpenGL; keyboard, "
                  "pointer, moves, resizes and closes go to the server), gl-window (OpenGL; "
                  "the same window behaviour and input), or auto: x11 when the GL renderer is a software one (llvmpipe, "
                  "softpipe, swrast) or GL is missing, else gl-window")
      ->check(CLI::IsMember({"auto", "x11", "gl-window"}))
      ->capture_default_str();
  cmd->callback([o, &exit_code] { exit_code = run_attach_session(*o, std::cout, std::cerr); });
}

}  // namespace pixpath::tools
