"""GPU pictures: nvJPEG through the GPU module, exported with DLPack and
__cuda_array_interface__. Each test skips with the reason where there is no GPU (or no torch);
on the GPU machine run them through python/gpu-check (see its header)."""
import gc

import numpy as np
import pytest

import pixpath
from conftest import encode, pil_decode, screen_like


def gpu_reason():
    try:
        pixpath.gpu_info()
    except pixpath.Error as e:
        return f"no GPU decoder here: {e}"
    return None


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
    assert pixpath.counters()["kinds"]["cuda device"]["live_storages"] == c0["kinds"]["cuda device"]["live_storages"]


@needs_gpu
def test_cuda_array_interface_with_torch(jpeg):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    pic = pixpath.decode(jpeg, device="cuda")
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
