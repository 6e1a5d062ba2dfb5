"""Every coding pixpath decodes, against Pillow's decode of the same bytes (Pillow on Debian
uses the same libjpeg-turbo, libwebp and zlib, so the pixels must be identical)."""
import zlib

import numpy as np
import pytest
from PIL import Image

import pixpath
from conftest import encode, pil_decode, screen_like


def test_codings_listed():
    assert set(pixpath.codings()) >= {"jpeg", "jpega", "png", "png/L", "png/P", "webp", "rgb24", "rgb32"}
    assert "libjpeg-turbo" in pixpath.libraries()


@pytest.mark.parametrize("subsampling", [0, 1, 2])  # 4:4:4, 4:2:2, 4:2:0
def test_jpeg_matches_pillow(rgb_picture, subsampling):
    data = encode(rgb_picture, "JPEG", quality=85, subsampling=subsampling)
    pic = pixpath.decode(data)  # recognised by content
    assert (pic.width, pic.height, pic.format, pic.channels) == (203, 97, "RGB", 3)
    assert pic.shape == (97, 203, 3)
    np.testing.assert_array_equal(np.asarray(pic), pil_decode(data, "RGB"))
    # other packed orders are the same pixels
    bgra = np.asarray(pixpath.decode(data, "jpeg", format="BGRA"))
    np.testing.assert_array_equal(bgra[..., [2, 1, 0]], pil_decode(data, "RGB"))
    assert (bgra[..., 3] == 255).all()


def test_gray_jpeg(rgb_picture):
    gray = np.asarray(Image.fromarray(rgb_picture).convert("L"))
    data = encode(gray, "JPEG", quality=90)
    np.testing.assert_array_equal(np.asarray(pixpath.decode(data, format="GRAY8")), pil_decode(data))
    np.testing.assert_array_equal(np.asarray(pixpath.decode(data)), pil_decode(data, "RGB"))


def test_jpega_matches_pillow(rgba_picture):
    colour = encode(np.ascontiguousarray(rgba_picture[..., :3]), "JPEG", quality=90)
    alpha = encode(np.ascontiguousarray(rgba_picture[..., 3]), "JPEG", quality=90)
    pic = pixpath.decode(colour + alpha, "jpega", alpha_offset=len(colour))
    assert pic.format == "RGBA"
    a = np.asarray(pic)
    np.testing.assert_array_equal(a[..., :3], pil_decode(colour, "RGB"))
    np.testing.assert_array_equal(a[..., 3], pil_decode(alpha, "L"))


def test_png_rgb_rgba_gray_palette(rgb_picture, rgba_picture):
    for arr, mode in ((rgb_picture, "RGB"), (rgba_picture, "RGBA")):
        data = encode(arr, "PNG")
        pic = pixpath.decode(data, "png")
        assert pic.format == mode
        np.testing.assert_array_equal(np.asarray(pic), pil_decode(data, mode))
    gray = np.asarray(Image.fromarray(rgb_picture).convert("L"))
    data = encode(gray, "PNG")
    np.testing.assert_array_equal(np.asarray(pixpath.decode(data, "png/L")), pil_decode(data, "RGB"))
    np.testing.assert_array_equal(np.asarray(pixpath.decode(data, "png/L", format="L")), gray)
    pal = Image.fromarray(rgb_picture).quantize(64)
    import io
    buf = io.BytesIO()
    pal.save(buf, "PNG")
    data = buf.getvalue()
    np.testing.assert_array_equal(np.asarray(pixpath.decode(data, "png/P")), pil_decode(data, "RGB"))


@pytest.mark.parametrize("lossless", [False, True])
def test_webp_matches_pillow(rgb_picture, rgba_picture, lossless):
    for arr, mode in ((rgb_picture, "RGB"), (rgba_picture, "RGBA")):
        data = encode(arr, "WEBP", quality=80, lossless=lossless, exact=True)
        pic = pixpath.decode(data, "webp")
        assert pic.format == mode
        np.testing.assert_array_equal(np.asarray(pic), pil_decode(data, mode))
        if lossless:
            np.testing.assert_array_equal(np.asarray(pic), arr)


@pytest.mark.parametrize("coding,rgb_format,bpp", [("rgb24", "RGB", 3), ("rgb24", "BGR", 3),
                                                   ("rgb32", "BGRX", 4), ("rgb32", "RGBA", 4),
                                                   ("rgb32", "BGRA", 4)])
@pytest.mark.parametrize("compression", ["none", "zlib", "lz4"])
def test_rgb_codings_match_pillow_raw(rgba_picture, coding, rgb_format, bpp, compression):
    h, w = rgba_picture.shape[:2]
    order = {"R": 0, "G": 1, "B": 2, "A": 3, "X": 3}
    raw_px = rgba_picture[..., [order[c] for c in rgb_format]]
    rowstride = w * bpp + 8  # padded rows, as servers send
    raw = np.zeros((h, rowstride), np.uint8)
    raw[:, : w * bpp] = raw_px.reshape(h, w * bpp)
    data = raw.tobytes()
    kw = {}
    if compression == "zlib":
        data, kw = zlib.compress(data, 6), {"zlib": 6}
    elif compression == "lz4":
        lz4_block = pytest.importorskip("lz4.block", reason="python3-lz4 (scripts/setup) is not installed")
        data, kw = lz4_block.compress(data), {"lz4": 1}
    pic = pixpath.decode(data, coding, width=w, height=h, rowstride=rowstride, rgb_format=rgb_format, **kw)
    alpha = "A" in rgb_format
    mode = "RGBA" if alpha else "RGB"
    expected = np.asarray(Image.frombytes(mode, (w, h), raw.tobytes(), "raw", rgb_format, rowstride))
    assert pic.format == mode
    np.testing.assert_array_equal(np.asarray(pic), expected)


def test_pnm(rgb_picture):
    data = encode(rgb_picture, "PPM")
    np.testing.assert_array_equal(np.asarray(pixpath.decode(data)), rgb_picture)


def test_inspect(rgb_picture):
    data = encode(rgb_picture, "JPEG", quality=80, subsampling=2)
    info = pixpath.inspect(data)
    assert (info["coding"], info["width"], info["height"], info["has_alpha"]) == ("jpeg", 203, 97, False)
