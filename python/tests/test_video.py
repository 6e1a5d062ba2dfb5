"""Video from Python: pixpath.VideoDecoder (h264, vp8, vp9) and pixpath.read_recording().

The reference is pixpath's own player: tests/data/sample-video.pxrec (h264 and vp8 from a real
xpra 3.1.3 server) decoded draw by draw in Python must give the window pictures play() paints
on its CPU backing. GPU frames (device='cuda', NVDEC) are compared with the CPU frames on the
GPU machine and skip here with the reason."""
import gc
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import pixpath
from conftest import gpu_reason, pil_decode, wait_stream_releases

DATA = Path(os.environ.get("PIXPATH_TEST_DATA", Path(__file__).resolve().parents[2] / "tests/data"))
SAMPLE = DATA / "sample-video.pxrec"  # xpra 3.1.3: h264 4:4:4 and vp8
SAMPLE_420 = DATA / "sample-video-420.pxrec"  # synthetic 4:2:0 h264, vp8, vp9 (make_video_recording)

needs_video = pytest.mark.skipif(not pixpath.video_codings(), reason="built without libavcodec")


def stream_key(draw):
    return (draw["coding"], draw["w"], draw["h"], draw["options"].get("csc", "YUV420P"))


def video_draws(events):
    """Per window, its video streams in order: a list of (key, [draws])."""
    streams = {}
    for e in events:
        if e["type"] != "draw" or e["coding"] not in pixpath.video_codings():
            continue
        per_window = streams.setdefault(e["wid"], [])
        if not per_window or per_window[-1][0] != stream_key(e) or e["options"].get("frame") == 0:
            per_window.append((stream_key(e), []))
        per_window[-1][1].append(e)
    return streams


def test_read_recording_events():
    events = pixpath.read_recording(str(SAMPLE))
    types = {e["type"] for e in events}
    assert {"window-new", "draw"} <= types
    draws = [e for e in events if e["type"] == "draw"]
    assert {"h264", "vp8", "png"} <= {d["coding"] for d in draws}
    times = [e["time_us"] for e in events]
    assert times == sorted(times)
    first = next(d for d in draws if d["coding"] == "h264")
    assert first["options"]["csc"] in ("YUV420P", "YUV444P")
    assert first["options"]["frame"] == 0
    assert first["w"] > 0 and first["h"] > 0 and isinstance(first["data"], bytes)
    news = [e for e in events if e["type"] == "window-new"]
    assert all(e["w"] > 0 and e["h"] > 0 for e in news)


def test_read_recording_errors(tmp_path):
    with pytest.raises(pixpath.Error) as e:
        pixpath.read_recording(str(tmp_path / "missing.pxrec"))
    assert e.value.stage and e.value.reason
    damaged = tmp_path / "damaged.pxrec"
    damaged.write_bytes(SAMPLE.read_bytes()[:5000])
    with pytest.raises(pixpath.Error) as e:
        pixpath.read_recording(str(damaged))
    assert e.value.code == "Truncated"


@needs_video
@pytest.mark.parametrize("sample", [SAMPLE, SAMPLE_420], ids=["xpra31", "synthetic420"])
def test_video_frames_paint_what_the_player_paints(tmp_path, sample):
    """Every draw of a recording decoded in Python (video with VideoDecoder, png with decode())
    and placed in numpy windows gives exactly play()'s window pictures."""
    events = pixpath.read_recording(str(sample))
    windows = {}
    decoders = {}
    frames = 0
    for e in events:
        if e["type"] == "window-new":
            windows[e["wid"]] = np.zeros((e["h"], e["w"], 3), np.uint8)
            continue
        if e["type"] != "draw":
            continue
        x, y, w, h = e["x"], e["y"], e["w"], e["h"]
        if e["coding"] in pixpath.video_codings():
            key = stream_key(e)
            dec = decoders.get(e["wid"])
            if dec is None or e["options"].get("frame") == 0 or \
                    (dec.coding, dec.width, dec.height, dec.csc) != key:
                dec = decoders[e["wid"]] = pixpath.VideoDecoder(e["coding"], w, h, csc=key[3])
            pic = dec.decode(e["data"])
            if pic is None:
                continue
            frames += 1
            assert (pic.width, pic.height, pic.format, pic.channels) == (w, h, "RGB", 3)
            assert pic.writable
            pixels = np.asarray(pic)
        else:
            pixels = np.asarray(pixpath.decode(e["data"], e["coding"], format="RGB"))
        windows[e["wid"]][y:y + h, x:x + w] = pixels
    assert frames >= (100 if sample == SAMPLE else 36)
    pixpath.play(str(sample), pace="max", snapshot_dir=str(tmp_path))
    for wid, mine in windows.items():
        ref = pil_decode((tmp_path / f"window-{wid}.png").read_bytes(), "RGB")
        assert ref.shape == mine.shape
        diff = np.abs(ref.astype(int) - mine.astype(int))
        assert diff.max() == 0, f"window {wid}: {np.count_nonzero(diff)} values differ, at most {diff.max()}"


def replay_through_engine(path, tmp_path):
    """A recording's draws submitted one by one to PaintEngine, their options as
    read_recording() gives them (the dict -> DrawOptions -> dict round trip of
    python/src/draw_options.cc): every draw is acked and the windows equal what play() paints.
    Returns the option keys the recording's draws carried."""
    events = pixpath.read_recording(str(path))
    backing = pixpath.CpuBacking()
    acks = []
    keys = set()
    with pixpath.PaintEngine(backing, on_ack=acks.append) as eng:
        for e in events:
            if e["type"] == "window-new":
                eng.window_new(e["wid"], e["w"], e["h"])
            elif e["type"] == "draw":
                keys |= set(e["options"])
                eng.submit(e["wid"], e["x"], e["y"], e["w"], e["h"], e["coding"], e["data"],
                           sequence=e["sequence"], rowstride=e["rowstride"], options=e["options"])
        assert eng.wait_idle(20)
        draws = sum(e["type"] == "draw" for e in events)
        assert len(acks) == draws and all(a["decode_time_us"] > 0 for a in acks), \
            [a for a in acks if a["decode_time_us"] <= 0][:3]
        pixpath.play(str(path), pace="max", snapshot_dir=str(tmp_path))
        for wid in backing.windows():
            ref = pil_decode((tmp_path / f"window-{wid}.png").read_bytes(), "RGB")
            fb = np.asarray(backing.snapshot(wid))[..., 2::-1]  # BGRX -> RGB
            np.testing.assert_array_equal(fb, ref)
    return keys


@needs_video
def test_paint_engine_takes_recorded_video_draws(tmp_path):
    keys = replay_through_engine(SAMPLE, tmp_path)
    assert {"csc", "frame"} <= keys, keys


@pytest.mark.parametrize("name, carried", [
    ("sample.pxrec", {"rgb_format", "lz4", "store", "delta", "bucket", "flush"}),  # 3.1: deltas
    ("sample-xpra6.pxrec", {"rgb_format", "lz4", "quality", "flush"}),  # 6.x: jpeg, webp, rgb24
])
def test_paint_engine_takes_recorded_picture_draws(tmp_path, name, carried):
    """The same for the 3.1 and 6.x sample sessions: a delta draw whose store/delta/bucket were
    lost in the round trip would paint wrong pixels."""
    keys = replay_through_engine(DATA / name, tmp_path)
    assert carried <= keys, keys


@needs_video
@pytest.mark.parametrize("fmt,channels,order", [("RGB", 3, (0, 1, 2)), ("BGR", 3, (2, 1, 0)),
                                                  ("RGBA", 4, (0, 1, 2)), ("BGRX", 4, (2, 1, 0))])
def test_video_formats(fmt, channels, order):
    wid_streams = video_draws(pixpath.read_recording(str(SAMPLE)))
    key, draws = next(iter(wid_streams.values()))[0]
    ref = pixpath.VideoDecoder(key[0], key[1], key[2], csc=key[3])
    dec = pixpath.VideoDecoder(key[0], key[1], key[2], csc=key[3], format=fmt)
    assert dec.format == fmt and dec.device == "cpu"
    assert fmt in repr(dec) and key[0] in repr(dec)
    for d in draws[:5]:
        a, b = ref.decode(d["data"]), dec.decode(d["data"])
        if a is None:
            assert b is None
            continue
        a, b = np.asarray(a), np.asarray(b)
        assert b.shape == (key[2], key[1], channels)
        assert np.array_equal(b[..., list(order)], a)
        if channels == 4:
            assert (b[..., 3] == 255).all()


@needs_video
def test_frames_outlive_their_decoder_and_buffers_are_released():
    wid_streams = video_draws(pixpath.read_recording(str(SAMPLE)))
    key, draws = next(iter(wid_streams.values()))[0]
    gc.collect()
    before = pixpath.counters()
    dec = pixpath.VideoDecoder(key[0], key[1], key[2], csc=key[3], threads=2)
    kept = [dec.decode(d["data"]) for d in draws]
    kept += dec.flush()
    kept = [k for k in kept if k is not None]
    stats = dec.stats()
    assert stats["packets"] == len(draws) and stats["frames"] == len(kept)
    assert not stats["gpu_requested"] and not stats["gpu"]
    del dec
    gc.collect()
    # The decoder's frame buffers went back with it; the RGB pictures are our own storage.
    after = pixpath.counters()
    assert after["video_buffers"]["live"] == before["video_buffers"]["live"]
    assert after["video_buffers"]["made"] > before["video_buffers"]["made"]
    assert all(np.asarray(k).shape[0] == key[2] for k in kept)
    del kept
    gc.collect()
    assert pixpath.counters()["live_storages"] == before["live_storages"]


@needs_video
def test_threads_share_one_decoder_one_packet_at_a_time():
    """Two threads feeding one decoder: each decode() holds the decoder alone (no crash, every
    packet counted), with the GIL released while decoding."""
    wid_streams = video_draws(pixpath.read_recording(str(SAMPLE)))
    key, draws = next(iter(wid_streams.values()))[0]
    dec = pixpath.VideoDecoder(key[0], key[1], key[2], csc=key[3])
    dec.decode(draws[0]["data"])  # the key frame first
    errors = []

    def feed(part):
        for d in part:
            try:
                dec.decode(d["data"])
            except pixpath.Error as e:  # P frames out of order may be reported as damaged
                errors.append(e)

    rest = draws[1:]
    ts = [threading.Thread(target=feed, args=(rest[i::2],)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert dec.stats()["packets"] == len(draws)
    assert all(e.coding == key[0] for e in errors)


@needs_video
def test_video_errors():
    with pytest.raises(pixpath.Error) as e:
        pixpath.VideoDecoder("mpeg2", 64, 64)
    assert e.value.code == "Unsupported" and e.value.coding == "mpeg2"
    with pytest.raises(pixpath.Error) as e:
        pixpath.VideoDecoder("h264", 100000, 64)
    assert e.value.coding == "h264" and e.value.reason
    with pytest.raises(pixpath.Error) as e:
        pixpath.VideoDecoder("h264", 64, 64, format="GRAY8")
    assert e.value.code == "Unsupported"
    with pytest.raises(pixpath.Error) as e:
        pixpath.VideoDecoder("h264", 64, 64, device="tpu")
    assert e.value.code == "InvalidArgument"
    wid_streams = video_draws(pixpath.read_recording(str(SAMPLE)))
    key, draws = next(iter(wid_streams.values()))[0]
    dec = pixpath.VideoDecoder(key[0], key[1], key[2], csc=key[3])
    with pytest.raises(pixpath.Error) as e:
        dec.decode(bytes(range(256)) * 8)
    assert e.value.coding == key[0] and e.value.stage and e.value.reason
    # A decoder whose stream said a different size: the frame's size is refused, not painted.
    wrong = pixpath.VideoDecoder(key[0], key[1] + 16, key[2], csc=key[3])
    with pytest.raises(pixpath.Error) as e:
        for d in draws[:3]:
            wrong.decode(d["data"])
    assert e.value.coding == key[0]


GPU_REASON = "built without libavcodec" if not pixpath.video_codings() else gpu_reason()
needs_gpu = pytest.mark.skipif(GPU_REASON is not None, reason=str(GPU_REASON))


def test_video_on_cuda_without_gpu_fails_cleanly():
    if gpu_reason() is None:
        pytest.skip("a GPU is present: the failure path is not reachable here")
    with pytest.raises(pixpath.Error) as e:
        pixpath.VideoDecoder("h264", 64, 64, device="cuda")
    assert e.value.code == "Unavailable" and e.value.reason


@needs_gpu
@pytest.mark.parametrize("coding", ["h264", "vp8", "vp9"])
def test_nvdec_frames_through_dlpack(coding):
    """NVDEC frames as RGBA CUDA pictures: torch reads them through DLPack without a copy, and
    they are the CPU path's frames within the GPU conversion's rounding. A stream NVDEC does not
    take comes back on the CPU with a DecodeWarning naming the reason (not a failure)."""
    torch = pytest.importorskip("torch")
    draws = [e for e in pixpath.read_recording(str(SAMPLE_420))
             if e["type"] == "draw" and e["coding"] == coding]
    w, h = draws[0]["w"], draws[0]["h"]
    cpu = pixpath.VideoDecoder(coding, w, h, format="RGBA")
    gc.collect()
    before = pixpath.counters()["video_buffers"]["live"]
    gpu = pixpath.VideoDecoder(coding, w, h, device="cuda")
    assert gpu.device.startswith("cuda") and gpu.format == "RGBA"
    compared, on_gpu = 0, 0
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for d in draws:
            a, b = cpu.decode(d["data"]), gpu.decode(d["data"])
            if a is None or b is None:
                continue
            if b.device.startswith("cuda"):
                t = torch.from_dlpack(b)
                assert t.is_cuda and tuple(t.shape) == (h, w, 4)
                got = t.cpu().numpy()
                on_gpu += 1
                del t
            else:
                got = np.asarray(b)
            diff = np.abs(got.astype(int) - np.asarray(a).astype(int))
            assert diff.max() <= 1, f"{coding}: frame {compared} differs by up to {diff.max()}"
            compared += 1
            del b
    s = gpu.stats()
    assert compared >= len(draws) - 2
    if s["gpu"]:
        assert on_gpu == compared == s["gpu_frames"]
    else:  # NVDEC refused the stream: said once, with the reason
        msgs = [str(c.message) for c in caught if issubclass(c.category, pixpath.DecodeWarning)]
        assert len(msgs) == 1 and s["gpu_note"] and s["gpu_note"] in msgs[0], (msgs, s)
        print(f"{coding}: decoded on the CPU: {s['gpu_note']}")
    # Both decoders go (each holds its reference frames: 2-4 buffers), then every frame is
    # freed once torch's stream and pixpath's releaser thread are done with it.
    del a, cpu, gpu
    gc.collect()
    torch.cuda.synchronize()
    wait_stream_releases()
    c = pixpath.counters()
    assert c["video_buffers"]["live"] == before, c
