"""Buffer-protocol flags, copy-on-write, lifetimes, release domains, decoding into caller
buffers, errors and counters."""
import gc
import mmap
import threading
import weakref

import numpy as np
import pytest

import pixpath
from conftest import encode, pil_decode


@pytest.fixture(scope="module")
def jpeg(rgb_picture):
    return encode(rgb_picture, "JPEG", quality=85)


def test_decoded_picture_is_writable_with_its_stride(jpeg):
    pic = pixpath.decode(jpeg)
    assert pic.writable and not pic.readonly and not pic.shared
    assert pic.stride >= pic.width * 3 and pic.stride % 64 == 0  # 64-byte aligned rows
    a = np.asarray(pic)
    assert a.flags.writeable and a.strides == (pic.stride, 3, 1) == pic.strides
    m = memoryview(pic)
    assert not m.readonly and m.shape == (97, 203, 3) and m.format == "B"
    before = pic.content_id
    a[0, 0] = (1, 2, 3)
    assert tuple(np.asarray(pic)[0, 0]) == (1, 2, 3)
    assert pic.content_id != before  # a writable export counts as a write


def test_read_only_picture_refuses_writable_views(rgb_picture):
    data = rgb_picture.tobytes()  # bytes: read-only memory owned by Python
    pic = pixpath.Picture.from_buffer(data, 203, 97, "RGB")
    assert pic.readonly and not pic.writable
    m = memoryview(pic)
    assert m.readonly
    with pytest.raises(TypeError):
        m[0] = 0
    a = np.asarray(pic)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0, 0] = 1
    with pytest.raises(ValueError):
        a.setflags(write=True)
    assert np.frombuffer(pic, np.uint8).size == 203 * 97 * 3  # a read-only request is fine
    import io
    with pytest.raises(TypeError, match="read-write"):  # our BufferError, as readinto reports it
        io.BytesIO(b"xyz").readinto(pic)  # asks for a writable buffer (PyBUF_WRITABLE)
    np.testing.assert_array_equal(a, rgb_picture)  # no copy made, same pixels
    w = pic.make_writable()
    assert w is not pic and w.writable
    np.asarray(w)[0, 0] = 0
    np.testing.assert_array_equal(np.asarray(pic), rgb_picture)  # the original is untouched


def test_writable_caller_buffer_is_shared_not_writable(rgb_picture):
    arr = rgb_picture.copy()
    pic = pixpath.Picture.from_buffer(arr, 203, 97)
    assert not pic.readonly and pic.shared and not pic.writable  # someone else owns the memory
    assert not np.asarray(pic).flags.writeable
    arr[0, 0] = 7
    assert (np.asarray(pic)[0, 0] == 7).all()  # a view, not a copy


def test_copy_on_write_with_crops(jpeg):
    pic = pixpath.decode(jpeg)
    c0 = pixpath.counters()
    crop = pic.crop(10, 20, 50, 30)
    assert pixpath.counters()["copies"] == c0["copies"]  # shares the storage
    assert crop.shape == (30, 50, 3) and crop.stride == pic.stride
    assert pic.shared and crop.shared and not pic.writable
    assert not np.asarray(pic).flags.writeable
    np.testing.assert_array_equal(np.asarray(crop), np.asarray(pic)[20:50, 10:60])
    w = crop.make_writable()  # shared: copies
    assert pixpath.counters()["copies"] == c0["copies"] + 1
    assert w.writable and w is not crop
    del crop, w
    gc.collect()
    assert pic.writable and np.asarray(pic).flags.writeable  # sole owner again
    assert pic.make_writable() is pic  # no copy when already writable


def test_crop_while_writable_export_lives_copies(jpeg):
    pic = pixpath.decode(jpeg)
    a = np.asarray(pic)
    assert a.flags.writeable
    c0 = pixpath.counters()
    crop = pic.crop(0, 0, 8, 8)  # a's owner may still write: the crop gets its own pixels
    assert pixpath.counters()["copies"] == c0["copies"] + 1
    assert not crop.shared and pic.writable
    original = pil_decode(jpeg, "RGB")[0, 0].copy()
    assert (original != 0).any()
    a[0, 0] = 0
    np.testing.assert_array_equal(np.asarray(crop)[0, 0], original)


def test_view_outlives_picture(jpeg):
    c0 = pixpath.counters()
    pic = pixpath.decode(jpeg)
    expected = np.asarray(pic).copy()
    view = np.asarray(pic)[5:10, 5:10]  # a numpy slice of the buffer export
    mv = memoryview(pic)
    ref = weakref.ref(pic)
    del pic
    gc.collect()
    assert ref() is not None  # kept alive by its exports
    assert pixpath.counters()["live_storages"] == c0["live_storages"] + 1
    np.testing.assert_array_equal(view, expected[5:10, 5:10])
    del view
    gc.collect()
    assert ref() is not None  # the memoryview still holds it
    mv.release()
    del mv
    gc.collect()
    assert ref() is None
    c1 = pixpath.counters()
    assert c1["live_storages"] == c0["live_storages"]
    assert c1["storages_released"] - c0["storages_released"] == c1["storages_created"] - c0["storages_created"]


def test_crop_keeps_storage_alive(jpeg):
    c0 = pixpath.counters()
    crop = pixpath.decode(jpeg).crop(1, 1, 4, 4)  # the parent is gone at once
    expected = pil_decode(jpeg, "RGB")[1:5, 1:5]
    np.testing.assert_array_equal(np.asarray(crop), expected)
    assert pixpath.counters()["live_storages"] == c0["live_storages"] + 1
    del crop
    assert pixpath.counters()["live_storages"] == c0["live_storages"]


def test_release_from_another_thread_runs_once_in_its_domain():
    domain = pixpath.ReleaseDomain("test-ui")
    c0 = pixpath.counters()
    pic = pixpath.Picture.allocate(64, 32, "RGBA", domain=domain)
    arr = np.asarray(pic)
    holder = [pic, arr]
    del pic, arr

    def drop():
        assert not domain.is_current
        holder.clear()  # the last references go on this thread
        gc.collect()

    t = threading.Thread(target=drop)
    t.start()
    t.join()
    c1 = pixpath.counters()
    assert domain.pending == 1  # queued, not released on the wrong thread
    assert c1["deferred_releases"] == c0["deferred_releases"] + 1
    assert c1["storages_released"] == c0["storages_released"]
    assert domain.drain() == 1  # the owner runs it
    c2 = pixpath.counters()
    assert c2["storages_released"] == c0["storages_released"] + 1
    assert c2["live_storages"] == c0["live_storages"]
    assert domain.drain() == 0  # exactly once
    assert domain.shutdown() == {"released": 0, "unreleased": []}


def test_release_on_owner_thread_is_immediate():
    domain = pixpath.ReleaseDomain("owner")
    c0 = pixpath.counters()
    pic = pixpath.Picture.allocate(8, 8, domain=domain)
    del pic
    assert domain.pending == 0
    assert pixpath.counters()["storages_released"] == c0["storages_released"] + 1


@pytest.mark.parametrize("kind", ["numpy", "numpy-padded", "bytearray", "mmap"])
def test_decode_into_caller_buffers(jpeg, kind):
    expected = pil_decode(jpeg, "RGB")
    h, w = expected.shape[:2]
    if kind == "numpy":
        out = np.zeros((h, w, 3), np.uint8)
    elif kind == "numpy-padded":
        out = np.zeros((h, w + 13, 4), np.uint8)[:, 3:w + 3, :]  # a strided window, RGBA
    elif kind == "bytearray":
        out = bytearray(h * w * 3)
    else:
        out = mmap.mmap(-1, h * (w * 3 + 5))
    c0 = pixpath.counters()
    stride = w * 3 + 5 if kind == "mmap" else 0
    r = pixpath.decode(jpeg, into=out, stride=stride)
    assert r is out
    assert pixpath.counters()["live_storages"] == c0["live_storages"]  # nothing allocated
    assert pixpath.counters()["copies"] == c0["copies"]  # written directly
    if kind == "numpy":
        np.testing.assert_array_equal(out, expected)
    elif kind == "numpy-padded":
        np.testing.assert_array_equal(out[..., :3], expected)
        assert (out[..., 3] == 255).all()
    elif kind == "bytearray":
        np.testing.assert_array_equal(np.frombuffer(out, np.uint8).reshape(h, w, 3), expected)
    else:
        got = np.frombuffer(out, np.uint8).reshape(h, w * 3 + 5)[:, : w * 3].reshape(h, w, 3)
        np.testing.assert_array_equal(got, expected)
        del got


def test_decode_into_refuses_bad_buffers(jpeg):
    with pytest.raises(pixpath.Error) as e:
        pixpath.decode(jpeg, into=np.zeros((10, 10, 3), np.uint8))
    assert (e.value.coding, e.value.stage, e.value.code) == ("jpeg", "into", "InvalidArgument")
    assert "shape" in e.value.reason
    with pytest.raises(pixpath.Error, match="holds"):
        pixpath.decode(jpeg, into=bytearray(100))
    with pytest.raises(BufferError):
        pixpath.decode(jpeg, into=b"x" * (203 * 97 * 3))  # bytes are read-only
    ro = np.zeros((97, 203, 3), np.uint8)
    ro.setflags(write=False)
    with pytest.raises((BufferError, ValueError)):
        pixpath.decode(jpeg, into=ro)


def test_errors_carry_coding_stage_reason(jpeg):
    with pytest.raises(pixpath.Error) as e:
        pixpath.decode(jpeg[:20], "jpeg")
    err = e.value
    assert err.coding == "jpeg" and err.stage and err.reason and err.code
    assert str(err).startswith("jpeg ")
    with pytest.raises(pixpath.Error) as e:
        pixpath.decode(b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "png")
    assert e.value.coding == "png"
    with pytest.raises(pixpath.Error) as e:
        pixpath.decode(b"hello")
    assert e.value.code == "Unsupported" and "coding=" in e.value.reason
    with pytest.raises(pixpath.Error) as e:
        pixpath.decode(b"x", "h265")
    assert e.value.coding == "h265" and "known" in e.value.reason
    with pytest.raises(pixpath.Error, match="packed"):
        pixpath.decode(jpeg, format="YUV420P")


def test_truncated_jpeg_warns(jpeg):
    with pytest.warns(pixpath.DecodeWarning):
        pic = pixpath.decode(jpeg[: len(jpeg) * 2 // 3])
    assert pic.shape == (97, 203, 3)


def test_convert_and_tobytes(jpeg):
    pic = pixpath.decode(jpeg)
    bgrx = pic.convert("BGRX")
    a = np.asarray(bgrx)
    np.testing.assert_array_equal(a[..., [2, 1, 0]], np.asarray(pic))
    assert pic.tobytes() == np.ascontiguousarray(np.asarray(pic)).tobytes()
    assert pic.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(pic), np.asarray(pic))


def test_host_picture_has_no_cuda_array_interface(jpeg):
    assert not hasattr(pixpath.decode(jpeg), "__cuda_array_interface__")


def test_counters_flat_after_many_decodes():
    # Small pictures keep this fast; it checks that every decode's storage is released.
    tiny = encode(np.full((8, 8, 3), 200, np.uint8), "JPEG", quality=90)
    png = encode(np.full((4, 4, 4), 100, np.uint8), "PNG")
    out = np.empty((8, 8, 3), np.uint8)
    for _ in range(100):  # warm-up: thread-local handles, allocator pools
        pixpath.decode(tiny)
    gc.collect()
    c0 = pixpath.counters()
    n = 100_000
    for i in range(n // 4):
        pixpath.decode(tiny)
        np.asarray(pixpath.decode(png))
        pixpath.decode(tiny, into=out)
        pixpath.decode(tiny).crop(0, 0, 4, 4)
    gc.collect()
    c1 = pixpath.counters()
    assert c1["live_storages"] == c0["live_storages"]
    assert c1["live_bytes"] == c0["live_bytes"]
    assert c1["storages_created"] - c0["storages_created"] == 3 * n // 4
    assert c1["storages_released"] - c0["storages_released"] == 3 * n // 4
    assert c1["copies"] == c0["copies"]
