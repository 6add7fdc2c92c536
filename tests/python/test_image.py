"""kestrel.image against independent references: OpenCV (pixel formats, YUV
frames, bilinear and area resizing), PIL and PyTorch (antialiased filters),
NumPy (each filter's formula, nearest, geometry)."""
import numpy as np
import pytest

import kestrel
from kestrel import image

cv2 = pytest.importorskip("cv2")


def noise(h, w, c, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


def smooth(h, w, c, seed=0):
    """A photo-like image (gradients and blurred noise): no ringing past 0..255 for PIL's 8-bit passes."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 255 / w), (y * 255 / h), ((x + y) * 127 / (w + h))], -1)[..., :c]
    blur = cv2.GaussianBlur(noise(h, w, c, seed).astype(np.float32), (0, 0), 3).reshape(h, w, c)
    return np.clip(base * 0.6 + blur * 0.4, 20, 235).astype(np.uint8)


def max_diff(a, b):
    return int(np.abs(a.astype(np.int32) - b.astype(np.int32)).max())


FORMATS = ["RGB", "BGR", "GRAY", "RGBA", "BGRA"]
CHANNELS = {"RGB": 3, "BGR": 3, "GRAY": 1, "RGBA": 4, "BGRA": 4}
# Every conversion between the formats that OpenCV has a code for (all of them but none).
CV_CONVERSIONS = {f"{a}2{b}": getattr(cv2, f"COLOR_{a}2{b}") for a in FORMATS for b in FORMATS
                  if hasattr(cv2, f"COLOR_{a}2{b}")}
SIZES = [(37, 53), (36, 52)]  # odd and even


def test_opencv_has_every_conversion_but_the_identities():
    assert len(CV_CONVERSIONS) == len(FORMATS) * (len(FORMATS) - 1)


@pytest.mark.parametrize("pixel_type", sorted(CV_CONVERSIONS))
@pytest.mark.parametrize("h,w", SIZES)
def test_pixel_conversions_match_opencv(pixel_type, h, w):
    source = pixel_type.split("2")[0]
    pixels = noise(h, w, CHANNELS[source])
    want = cv2.cvtColor(pixels[..., 0] if source == "GRAY" else pixels, CV_CONVERSIONS[pixel_type])
    got = image.convert(pixels, pixel_type)
    assert got.shape[:2] == want.shape[:2]
    assert max_diff(got.reshape(want.shape), want) <= 1


@pytest.mark.parametrize("pixel_type", FORMATS)
def test_a_format_to_itself_is_a_copy(pixel_type):
    pixels = noise(5, 7, CHANNELS[pixel_type])
    np.testing.assert_array_equal(image.convert(pixels, pixel_type), pixels)


@pytest.mark.parametrize("layout,code_rgb,code_bgr", [
    ("nv21", cv2.COLOR_YUV2RGB_NV21, cv2.COLOR_YUV2BGR_NV21),
    ("nv12", cv2.COLOR_YUV2RGB_NV12, cv2.COLOR_YUV2BGR_NV12),
    ("i420", cv2.COLOR_YUV2RGB_I420, cv2.COLOR_YUV2BGR_I420),
])
def test_yuv420_frames_match_opencv(layout, code_rgb, code_bgr):
    w, h = 64, 48
    frame = noise(h * 3 // 2, w, 1, seed=3)[..., 0]
    for to, code in (("RGB", code_rgb), ("BGR", code_bgr)):
        if layout == "i420":
            got = image.i420_to_pixels(frame, w, h, to=to)
        else:
            got = image.yuv420sp_to_pixels(frame.tobytes(), w, h, nv21=layout == "nv21", to=to)
        assert max_diff(got, cv2.cvtColor(frame, code)) <= 1
    np.testing.assert_array_equal(image.yuv420sp2rgb(frame, w, h), image.yuv420sp_to_pixels(frame, w, h))


def cv_resize(pixels, size, interpolation):
    """OpenCV's resize, (h, w, 1) kept as such (OpenCV drops a single channel)."""
    return cv2.resize(pixels, size, interpolation=interpolation).reshape(size[1], size[0], pixels.shape[2])


@pytest.mark.parametrize("size", [(640, 360), (224, 224), (333, 277), (2100, 1200), (95, 1300)])
@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("h,w", [(540, 960), (541, 961)])
def test_bilinear_matches_opencv_linear(size, channels, h, w):
    pixels = noise(h, w, channels)
    want = cv_resize(pixels, size, cv2.INTER_LINEAR)
    assert max_diff(image.resize(pixels, size, "bilinear"), want) <= 1


@pytest.mark.parametrize("size", [(640, 360), (224, 224), (333, 277), (480, 270), (100, 59)])
@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("h,w", [(540, 960), (541, 961)])
def test_area_downscale_matches_opencv_area(size, channels, h, w):
    pixels = noise(h, w, channels, seed=1)
    want = cv_resize(pixels, size, cv2.INTER_AREA)
    assert max_diff(image.resize(pixels, size, "area"), want) <= 1


PIL = pytest.importorskip("PIL.Image")


@pytest.mark.parametrize("filter,pil_filter", [("bilinear", PIL.BILINEAR), ("bicubic", PIL.BICUBIC),
                                               ("lanczos3", PIL.LANCZOS)])
@pytest.mark.parametrize("size", [(160, 90), (97, 131), (700, 500)])
def test_antialiased_filters_match_pil(filter, pil_filter, size):
    # Float planes: PIL's "F" mode resamples without rounding between its passes.
    plane = noise(120, 200, 1, seed=2)[..., 0].astype(np.float32)
    want = np.asarray(PIL.fromarray(plane, mode="F").resize(size, pil_filter))
    got = image.resize(plane, size, filter, antialias=True, exclude_outside=True, cubic_a=-0.5)
    np.testing.assert_allclose(got, want, atol=2e-3 * 255)
    # 8-bit pixels of a smooth picture: within one level.
    pixels = smooth(120, 200, 3)
    want8 = np.asarray(PIL.fromarray(pixels).resize(size, pil_filter))
    assert max_diff(image.resize(pixels, size, filter, antialias=True, exclude_outside=True), want8) <= 1


@pytest.mark.parametrize("size", [(100, 60), (40, 30), (50, 20)])
def test_area_matches_pil_box_at_whole_factors(size):
    pixels = noise(120, 200, 3, seed=4)
    want = np.asarray(PIL.fromarray(pixels).resize(size, PIL.BOX))
    assert max_diff(image.resize(pixels, size, "area"), want) <= 1


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(50, 30), (77, 41), (300, 250)])
def test_antialias_matches_pytorch_interpolate(mode, size):
    plane = np.random.default_rng(5).standard_normal((120, 200)).astype(np.float32)
    want = torch.nn.functional.interpolate(torch.from_numpy(plane)[None, None], size=(size[1], size[0]), mode=mode,
                                           align_corners=False, antialias=True)[0, 0].numpy()
    got = image.resize(plane, size, mode, antialias=True, exclude_outside=True, cubic_a=-0.5)
    np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("size", [(50, 30), (300, 250)])
def test_plain_bicubic_matches_pytorch_with_its_coefficient(size):
    plane = np.random.default_rng(6).standard_normal((120, 200)).astype(np.float32)
    want = torch.nn.functional.interpolate(torch.from_numpy(plane)[None, None], size=(size[1], size[0]),
                                           mode="bicubic", align_corners=False)[0, 0].numpy()
    got = image.resize(plane, size, "bicubic", cubic_a=-0.75)
    np.testing.assert_allclose(got, want, atol=1e-4)


# Each filter's formula, written out again in NumPy, for the filters no library here has.
def lanczos(r):
    return lambda x: np.where(np.abs(x) < r, np.sinc(x) * np.sinc(x / r), 0.0)


def mitchell(x):
    x = np.abs(x)
    inner = (7 / 6 * x - 2) * x * x + 8 / 9
    outer = ((-7 / 18 * x + 2) * x - 10 / 3) * x + 16 / 9
    return np.where(x < 1, inner, np.where(x < 2, outer, 0.0))


FORMULAS = {
    "lanczos5": (lanczos(5), 5.0),
    "gaussian": (lambda x: np.where(np.abs(x) < 1.5, np.exp(-x * x / (2 * 0.5**2)), 0.0), 1.5),
    "mitchellcubic": (mitchell, 2.0),
    "lanczos3": (lanczos(3), 3.0),
}


def reference_weights(kernel, radius, n_in, n_out, antialias):
    """A dense (n_out, n_in) matrix: the kernel at each input center, taps outside dropped, rows normalized."""
    scale = n_in / n_out
    stretch = scale if antialias and scale > 1 else 1.0
    centers = (np.arange(n_out) + 0.5) * scale - 0.5
    w = kernel((np.arange(n_in)[None, :] - centers[:, None]) / stretch)
    w[np.abs(np.arange(n_in)[None, :] - centers[:, None]) >= radius * stretch] = 0
    return w / w.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("filter", sorted(FORMULAS))
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("size", [(47, 29), (350, 170)])
def test_filters_match_their_formulas(filter, antialias, size):
    plane = np.random.default_rng(7).standard_normal((90, 150))
    kernel, radius = FORMULAS[filter]
    wy = reference_weights(kernel, radius, 90, size[1], antialias)
    wx = reference_weights(kernel, radius, 150, size[0], antialias)
    want = wy @ plane @ wx.T
    got = image.resize(plane.astype(np.float32), size, filter, antialias=antialias, exclude_outside=True)
    np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("size", [(224, 224), (333, 277), (700, 35)])
def test_nearest_takes_the_sample_under_each_center(size):
    pixels = noise(140, 210, 3, seed=8)
    rows = np.minimum((2 * np.arange(size[1]) + 1) * 140 // (2 * size[1]), 139)
    cols = np.minimum((2 * np.arange(size[0]) + 1) * 210 // (2 * size[0]), 209)
    np.testing.assert_array_equal(image.resize(pixels, size, "nearest"), pixels[rows][:, cols])


def test_crop_flip_and_rotation_move_pixels_as_numpy_does():
    pixels = noise(7, 11, 3, seed=9)
    np.testing.assert_array_equal(image.crop(pixels, 2, 1, 5, 4), pixels[1:5, 2:7])
    np.testing.assert_array_equal(image.flip(pixels), pixels[:, ::-1])
    np.testing.assert_array_equal(image.flip(pixels, horizontal=False, vertical=True), pixels[::-1])
    for turns in range(-4, 5):
        np.testing.assert_array_equal(image.rotate90(pixels, turns), np.rot90(pixels, -turns))
    floats = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_array_equal(image.rotate90(floats, 1), np.rot90(floats, -1))


def test_from_pixels_converts_resizes_and_normalizes_as_ncnn_describes():
    pixels = noise(300, 400, 3, seed=10)  # BGR, as OpenCV decodes
    mean, norm = [123.7, 116.3, 103.5], [1 / 58.4, 1 / 57.1, 1 / 57.4]
    got = image.from_pixels(pixels, "BGR2RGB", size=(224, 160), mean=mean, norm=norm)
    rgb = cv2.resize(cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB), (224, 160), interpolation=cv2.INTER_LINEAR)
    want = (rgb.astype(np.float32) - np.float32(mean)) * np.float32(norm)
    assert got.shape == (3, 160, 224) and got.dtype == np.float32
    np.testing.assert_allclose(got, want.transpose(2, 0, 1), atol=1.0 / 57.0 + 1e-5)
    # Without resize the values are exact; back to pixels undoes it.
    plain = image.from_pixels(pixels, "BGR", mean=mean, norm=norm)
    np.testing.assert_allclose(plain, ((pixels - np.float32(mean)) * np.float32(norm)).transpose(2, 0, 1), rtol=1e-6)
    np.testing.assert_array_equal(image.to_pixels(plain, mean=mean, norm=norm), pixels)
    np.testing.assert_array_equal(image.to_pixels(plain, "BGR2RGB", mean=mean, norm=norm), pixels[..., ::-1])


def test_bad_images_are_kestrel_errors():
    with pytest.raises(kestrel.Error, match="have 3 channels"):
        image.convert(noise(4, 4, 4), "RGB2BGR")
    with pytest.raises(kestrel.Error, match="must be uint8"):
        image.convert(np.zeros((4, 4, 3), np.float32), "RGB2BGR")
    with pytest.raises(kestrel.Error, match="even"):
        image.yuv420sp2rgb(np.zeros(15 * 3, np.uint8), 5, 6)
    with pytest.raises(kestrel.Error, match="needs 72 bytes"):
        image.yuv420sp2rgb(np.zeros(10, np.uint8), 8, 6)
    with pytest.raises(kestrel.Error, match="unknown resize filter 'cubicle'"):
        image.resize(noise(4, 4, 3), (2, 2), "cubicle")
    with pytest.raises(kestrel.Error, match="not inside"):
        image.crop(noise(4, 4, 3), 2, 2, 3, 3)
    with pytest.raises(kestrel.Error, match="mean has 2 values for 3 channels"):
        image.from_pixels(noise(4, 4, 3), "RGB", mean=[1, 2])
    with pytest.raises(kestrel.Error, match="unknown pixel format 'RGBX'"):
        image.from_pixels(noise(4, 4, 3), "RGB2RGBX")


def interp_net(filter_index, out_w, out_h, antialias, cubic_a=-0.5):
    net = kestrel.Net()
    net.load_param_mem("7767517\n2 2\nInput in 0 1 data\n"
                       f"Interp resize 1 1 data y 0=4 3={out_h} 4={out_w} 7={filter_index} 8={int(antialias)} "
                       f"10={cubic_a}\n")
    net.load_model_mem(b"")
    return net


@pytest.mark.parametrize("mode,index", [("bilinear", 1), ("bicubic", 2)])
@pytest.mark.parametrize("size", [(50, 30), (300, 250)])
def test_the_interp_layer_resamples_with_the_filters_as_pytorch(mode, index, size):
    x = np.random.default_rng(11).standard_normal((3, 120, 200)).astype(np.float32)
    want = torch.nn.functional.interpolate(torch.from_numpy(x)[None], size=(size[1], size[0]), mode=mode,
                                           align_corners=False, antialias=True)[0].numpy()
    session = interp_net(index, size[0], size[1], antialias=True).create_session()
    session.set_input("data", x)
    np.testing.assert_allclose(session.get("y"), want, atol=1e-4)


def test_the_interp_layer_takes_every_filter_of_the_formulas():
    x = np.random.default_rng(12).standard_normal((2, 90, 150))
    for filter, index in [("lanczos5", 4), ("gaussian", 5), ("mitchellcubic", 6)]:
        kernel, radius = FORMULAS[filter]
        wy = reference_weights(kernel, radius, 90, 40, True)
        wx = reference_weights(kernel, radius, 150, 61, True)
        want = np.stack([wy @ plane @ wx.T for plane in x])
        session = interp_net(index, 61, 40, antialias=True).create_session()
        session.set_input("data", x.astype(np.float32))
        np.testing.assert_allclose(session.get("y"), want, atol=1e-4, err_msg=filter)


def test_the_interp_layer_refuses_unknown_filters():
    with pytest.raises(kestrel.Error, match=r"filter \(param 7\) must be 0-7"):
        interp_net(9, 10, 10, False)
