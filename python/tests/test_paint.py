"""The paint engine, the recording player and the xpra client from Python."""
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import pixpath
from conftest import encode, pil_decode, screen_like

DATA = Path(os.environ.get("PIXPATH_TEST_DATA", Path(__file__).resolve().parents[2] / "tests/data"))


def rgb_of(bgrx):
    return bgrx[..., 2::-1]


def test_play_sample_recording_matches_references(tmp_path):
    progress = []
    r = pixpath.play(str(DATA / "sample.pxrec"), snapshot_dir=str(tmp_path), progress=progress.append)
    assert r["all"]["errors"] == 0 and r["all"]["skipped"] == 0 and r["all"]["painted"] > 50, r["errors"]
    assert progress and progress[-1]["events_done"] == progress[-1]["events_total"]
    backing = r["backing_object"]
    compared = 0
    for ref in sorted(DATA.glob("sample-window-*.png")):
        wid = int(ref.stem.rsplit("-", 1)[1])
        want = np.asarray(Image.open(ref).convert("RGB"))
        if wid in backing.windows():
            fb = np.asarray(backing.snapshot(wid))  # the framebuffer itself, no copy
            assert fb.shape == want.shape[:2] + (4,) and not fb.flags.writeable
            np.testing.assert_array_equal(rgb_of(fb), want)
        else:  # lost before the end: its snapshot taken before it went
            snap = tmp_path / f"window-{wid}-lost-1.png"
            np.testing.assert_array_equal(np.asarray(Image.open(snap).convert("RGB")), want)
        compared += 1
    assert compared >= 4


def test_paint_engine_draws_acks_and_copy_on_write():
    backing = pixpath.CpuBacking()
    acks = []
    src = screen_like(64, 48, seed=3)
    jpeg = encode(src, "JPEG", quality=90)
    png = encode(src[:16, :32], "PNG")
    with pixpath.PaintEngine(backing, decode_threads=2, on_ack=acks.append) as eng:
        eng.window_new(1, 100, 80)
        eng.submit(1, 0, 0, 64, 48, "jpeg", jpeg, sequence=1)
        eng.submit(1, 60, 60, 32, 16, "png", png, sequence=2)
        raw = np.ascontiguousarray(src[:10, :20, ::-1])  # BGR
        eng.submit(1, 80, 0, 20, 10, "rgb24", zlib.compress(raw.tobytes()), sequence=3, rowstride=60,
                   options={"rgb_format": "BGR", "zlib": 6})
        assert eng.wait_idle(10)
        assert [a["sequence"] for a in acks] == [1, 2, 3]
        assert all(a["decode_time_us"] > 0 for a in acks), acks
        snap = backing.snapshot(1)
        fb = np.asarray(snap)
        assert fb.shape == (80, 100, 4) and snap.format == "BGRX" and not fb.flags.writeable
        np.testing.assert_array_equal(rgb_of(fb[:48, :64]), pil_decode(jpeg, "RGB")[:, :, :])
        np.testing.assert_array_equal(rgb_of(fb[60:76, 60:92]), src[:16, :32])
        np.testing.assert_array_equal(rgb_of(fb[0:10, 80:100]), src[:10, :20])
        before = fb.copy()
        c0 = pixpath.counters()
        eng.submit(1, 0, 0, 64, 48, "jpeg", encode(255 - src, "JPEG", quality=90), sequence=4)
        assert eng.wait_idle(10)
        np.testing.assert_array_equal(fb, before)  # the snapshot kept its pixels
        assert pixpath.counters()["copies"] > c0["copies"]  # the backing copied (copy-on-write)
        assert not np.array_equal(np.asarray(backing.snapshot(1)), before)
        eng.submit(1, 0, 0, 64, 48, "jpeg", b"\xff\xd8garbage", sequence=5)
        assert eng.wait_idle(10)
        assert acks[-1]["sequence"] == 5 and acks[-1]["decode_time_us"] == -1 and "jpeg" in acks[-1]["message"]
        assert eng.stats()["acked"] == 5


def test_paint_engine_is_bound_to_its_thread():
    backing = pixpath.CpuBacking()
    eng = pixpath.PaintEngine(backing)
    errors = []

    def other():
        try:
            eng.run_ui_once()
        except pixpath.Error as e:
            errors.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert errors and errors[0].stage == "thread"
    eng.shutdown()


def test_paint_engine_callback_errors_are_raised():
    backing = pixpath.CpuBacking()

    def bad(ack):
        raise RuntimeError("from the callback")

    eng = pixpath.PaintEngine(backing, on_ack=bad)
    eng.window_new(1, 8, 8)
    eng.submit(1, 0, 0, 8, 8, "rgb24", bytes(8 * 8 * 3), sequence=1, rowstride=24, options={"rgb_format": "RGB"})
    with pytest.raises(RuntimeError, match="from the callback"):
        eng.wait_idle(10)
    eng.shutdown()


XPRA = shutil.which("xpra")
# Words put before the server's command line. scripts/test-python-wheel runs this suite in a
# mount namespace where the system's copies of the libraries the wheel carries are masked (the
# server's Xvfb needs some of them) and starts the server, system software that is not under
# test, back in the machine's own mount namespace: "nsenter --mount=<its namespace> --".
SERVER_PREFIX = shlex.split(os.environ.get("PIXPATH_TEST_SERVER_PREFIX", ""))


def _stop_xvfb(display, runtime_dir):
    """Stops the Xvfb that xpra started for `display`, if it is still running. xpra 3.1 starts
    it in a session of its own (setsid), so signalling xpra's process group misses it: xpra
    kills it on a clean exit, but not when it is killed or has not finished starting. Its
    lock file names its pid; it is signalled only if it inherited this server's
    XDG_RUNTIME_DIR (once ours is gone, another test may hold the display number)."""
    try:
        pid = int(Path(f"/tmp/.X{display}-lock").read_text().strip())
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return
    if f"XDG_RUNTIME_DIR={runtime_dir}".encode() not in environ:
        return
    for sig, wait in ((15, 2.0), (9, 2.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.time() + wait
        while time.time() < deadline and _running(pid):
            time.sleep(0.05)


def _running(pid):
    try:  # a zombie (state Z) has stopped; its parent reaps it
        return not Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[-1].startswith("Z")
    except OSError:
        return False


@pytest.fixture
def xpra_server():
    """Debian's xpra 3.1 on a unix socket under its own Xvfb, running xterm; stopped after."""
    if XPRA is None:
        pytest.skip("xpra is not installed (scripts/setup installs it)")
    d = Path(tempfile.mkdtemp(prefix="pixpath-py-xpra-"))
    sock = d / "server.sock"
    display = 200 + os.getpid() % 300
    while Path(f"/tmp/.X11-unix/X{display}").exists() or Path(f"/tmp/.X{display}-lock").exists():
        display += 1
    (d / "run").mkdir()
    env = dict(os.environ, XDG_RUNTIME_DIR=str(d / "run"))
    env.pop("DISPLAY", None)
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    args = SERVER_PREFIX + [
            XPRA, "start", f":{display}", "--daemon=no", "--mdns=no", "--pulseaudio=no",
            "--notifications=no", "--webcam=no", "--printing=no", "--dbus-control=no",
            "--systemd-run=no", "--html=off", "--file-transfer=no", "--open-files=no",
            "--clipboard=no", "--av-sync=no", "--bell=no", "--cursors=no", "--system-tray=no",
            "--exit-with-children=no", "--speaker=no", "--microphone=no", "--dbus-proxy=no",
            "--start-new-commands=no", f"--bind={sock}", f"--socket-dirs={d}", f"--socket-dir={d}",
            f"--log-dir={d}", "--start=xterm -geometry 60x10 -e 'seq 1 100000 | while read l; do echo $l; sleep 0.05; done'"]
    log = open(d / "server.log", "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    deadline = time.time() + 30
    try:
        while b"xpra is ready." not in (d / "server.log").read_bytes():
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("xpra did not start:\n" + (d / "server.log").read_text()[-2000:])
            time.sleep(0.1)
        yield f"socket://{sock}"
    finally:
        try:
            os.killpg(proc.pid, 15)
            proc.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
        _stop_xvfb(display, d / "run")
        log.close()
        shutil.rmtree(d, ignore_errors=True)


def test_attach_paints_and_calls_back(xpra_server):
    windows, acks, ends = [], [], []
    painted = threading.Event()

    def on_ack(a):
        acks.append(a)
        if a["decode_time_us"] > 0:
            painted.set()

    client = pixpath.attach(xpra_server, on_window=windows.append, on_ack=on_ack, on_end=ends.append)
    with client:
        assert painted.wait(30), f"no painted draw: windows {windows}, acks {acks[:5]}"
        wid = next(w["wid"] for w in windows if w["event"] == "new")
        assert any(w["wid"] == wid for w in client.windows())
        fb = np.asarray(client.snapshot(wid))
        assert fb.ndim == 3 and fb.shape[2] == 4 and not fb.flags.writeable
        # The xterm's text, not a blank framebuffer. The first painted draw may be the xterm's
        # background alone (seen under ASan, where everything is slower): wait for the text.
        deadline = time.monotonic() + 30
        while fb[..., :3].std() == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
            fb = np.asarray(client.snapshot(wid))
        assert fb[..., :3].std() > 0, "the window stayed one colour for 30 s"
        assert client.stats()["acks_painted"] > 0
        stats = client.stop()
    assert stats["acks"] == stats["draws_submitted"] and stats["outstanding"] == 0
    assert all(a["delivery"] in ("sent", "after-close") for a in acks)
    assert ends and client.closed


def test_attach_failure_raises():
    with pytest.raises(pixpath.Error) as e:
        pixpath.attach("socket:///nonexistent/pixpath.sock", timeout=5)
    assert e.value.coding == "xpra" or e.value.coding
