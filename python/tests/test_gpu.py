"""GPU pictures: nvJPEG through the GPU module, exported with DLPack and
__cuda_array_interface__. Each test skips with the reason where there is no GPU (or no torch);
on the GPU machine run them through python/stage-gpu (see its header)."""
import gc

import numpy as np
import pytest

import pixpath
from conftest import encode, gpu_reason, pil_decode, screen_like, wait_stream_releases

REASON = gpu_reason()
needs_gpu = pytest.mark.skipif(REASON is not None, reason=str(REASON))


@pytest.fixture(scope="module")
def jpeg():
    return encode(screen_like(640, 360, seed=5), "JPEG", quality=90, subsampling=0)


def test_cuda_request_fails_cleanly_without_gpu(jpeg):
    if REASON is None:
        pytest.skip("a GPU is present: the failure path is not reachable here")
    with pytest.raises(pixpath.Error) as e:
        pixpath.decode(jpeg, device="cuda")
    assert e.value.code == "Unavailable" and e.value.coding


@needs_gpu
def test_gpu_picture_exports(jpeg):
    pic = pixpath.decode(jpeg, device="cuda")
    assert pic.device.startswith("cuda:") and pic.format == "RGBA" and pic.shape == (360, 640, 4)
    assert pic.__dlpack_device__()[0] == 2
    with pytest.raises(BufferError):
        memoryview(pic)  # host views of device memory are refused
    cai = pic.__cuda_array_interface__
    assert cai["shape"] == (360, 640, 4) and cai["typestr"] == "|u1" and cai["version"] == 3
    assert cai["strides"] == (pic.stride, 4, 1) and cai["data"][0] != 0


@needs_gpu
def test_dlpack_round_trip_with_torch(jpeg):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    expected = pil_decode(jpeg, "RGB")
    c0 = pixpath.counters()
    pic = pixpath.decode(jpeg, device="cuda")
    t = torch.from_dlpack(pic)  # no copy: the same device memory
    assert t.is_cuda and t.dtype == torch.uint8 and tuple(t.shape) == (360, 640, 4)
    assert t.data_ptr() == pic.__cuda_array_interface__["data"][0]
    host = t.cpu().numpy()
    # nvJPEG's IDCT differs from libjpeg-turbo's by at most a few levels
    assert np.abs(host[..., :3].astype(int) - expected.astype(int)).max() <= 8
    assert (host[..., 3] == 255).all()
    # on a side stream: __dlpack__ makes that stream wait for the decode
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        pic2 = pixpath.decode(jpeg, device="cuda")
        t2 = torch.from_dlpack(pic2)
        total = t2.to(torch.int64).sum()
    s.synchronize()
    assert int(total) == int(host.astype(np.int64).sum())
    # the tensor keeps the storage alive after the picture object is gone
    del pic, pic2
    gc.collect()
    assert torch.equal(t.cpu(), torch.from_numpy(host))
    del t, t2
    gc.collect()
    torch.cuda.synchronize()
    wait_stream_releases()
    assert pixpath.counters()["kinds"]["cuda device"]["live_storages"] == c0["kinds"]["cuda device"]["live_storages"]


@needs_gpu
def test_dlpack_memory_outlives_the_consumers_queued_kernels():
    """The consumer drops its tensor while its kernels reading it are still queued (PyTorch
    calls the deleter at once): the memory must not go back to pixpath's pool, where the next
    decode would overwrite it under those kernels, until the consumer's stream is done."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    first = encode(screen_like(1920, 1080, seed=11), "JPEG", quality=90, subsampling=0)
    other = encode(screen_like(1920, 1080, seed=12), "JPEG", quality=90, subsampling=0)
    expected = int(torch.from_dlpack(pixpath.decode(first, device="cuda")).to(torch.int64).sum())
    torch.cuda.synchronize()
    wait_stream_releases()
    c0 = pixpath.counters()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        pic = pixpath.decode(first, device="cuda")
        t = torch.from_dlpack(pic)  # __dlpack__(stream=s)
        torch.cuda._sleep(400_000_000)  # ~0.2 s of GPU time queued before the read
        total = t.to(torch.int64).sum()
    del t, pic  # the deleter runs now, long before the read
    gc.collect()
    c1 = pixpath.counters()
    assert c1["pending_stream_releases"] == 1, "the release did not wait for the consumer's stream"
    assert c1["kinds"]["cuda device"]["live_storages"] == c0["kinds"]["cuda device"]["live_storages"] + 1
    # Decodes that would take the freed memory and overwrite it while the stream still sleeps.
    for _ in range(8):
        p = pixpath.decode(other, device="cuda")
        stream = p.__cuda_array_interface__["stream"]
        if stream is not None:
            torch.cuda.ExternalStream(stream).synchronize()  # this decode has written
        del p
    assert s.query() is False, "the consumer's stream finished too early for this test to mean anything"
    s.synchronize()
    assert int(total) == expected
    wait_stream_releases()
    assert pixpath.counters()["kinds"]["cuda device"]["live_storages"] == c0["kinds"]["cuda device"]["live_storages"]


@needs_gpu
def test_cuda_array_interface_v3_stream():
    """Version 3: 'stream' is a stream of pixpath's that waits for the decode (the consumer
    synchronises on it), None once nothing is pending."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    jpeg = encode(screen_like(1920, 1080, seed=13), "JPEG", quality=90, subsampling=0)
    expected = torch.from_dlpack(pixpath.decode(jpeg, device="cuda")).cpu()
    pic = pixpath.decode(jpeg, device="cuda")
    cai = pic.__cuda_array_interface__
    assert cai["version"] == 3
    stream = cai["stream"]
    assert stream is None or (isinstance(stream, int) and stream not in (0, 1, 2))
    if stream is not None:  # as the interface asks of consumers (torch.as_tensor does not)
        torch.cuda.ExternalStream(stream).synchronize()
    t = torch.as_tensor(pic, device="cuda")
    assert torch.equal(t.cpu(), expected)


@needs_gpu
def test_cuda_array_interface_with_torch(jpeg):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    pic = pixpath.decode(jpeg, device="cuda")
    stream = pic.__cuda_array_interface__["stream"]
    if stream is not None:  # torch.as_tensor ignores the interface's stream: synchronise first
        torch.cuda.ExternalStream(stream).synchronize()
    t = torch.as_tensor(pic, device="cuda")  # through __cuda_array_interface__
    assert t.data_ptr() == pic.__cuda_array_interface__["data"][0]
    ref = torch.from_dlpack(pixpath.decode(jpeg, device="cuda"))
    assert torch.equal(t, ref)


@needs_gpu
def test_dlpack_versioned_and_legacy_capsules(jpeg):
    pic = pixpath.decode(jpeg, device="cuda")
    legacy = pic.__dlpack__(stream=-1)
    assert "dltensor" in repr(legacy)
    versioned = pic.__dlpack__(stream=-1, max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    with pytest.raises(pixpath.Error):
        pic.__dlpack__(stream=0)  # ambiguous, refused as the array API says
    del legacy, versioned  # unconsumed capsules release their reference
    gc.collect()


@needs_gpu
def test_gpu_decode_many_keeps_device_memory_flat(jpeg):
    for _ in range(20):
        pixpath.decode(jpeg, device="cuda")
    c0 = pixpath.counters()
    for _ in range(500):
        pixpath.decode(jpeg, device="cuda")
    gc.collect()
    c1 = pixpath.counters()
    assert c1["kinds"]["cuda device"]["live_storages"] == c0["kinds"]["cuda device"]["live_storages"]
