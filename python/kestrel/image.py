"""Image pre-processing: camera frames and pictures into a model's input.

Pixels are uint8 arrays of shape (height, width, channels), channels
interleaved; a model input is a float32 (channels, height, width) array.
Pixel types are named as ncnn names them: a format ("RGB", "BGR", "GRAY",
"RGBA", "BGRA") or a conversion "FROM2TO" ("BGR2RGB", "RGBA2GRAY", ...).
Resize filters are TensorFlow's list: "nearest", "bilinear", "bicubic",
"lanczos3", "lanczos5", "gaussian", "mitchellcubic", "area".
"""
import numpy as np

from . import _kestrel

__all__ = ["convert", "crop", "flip", "from_pixels", "i420_to_pixels", "resize", "rotate90", "to_pixels",
           "yuv420sp2rgb", "yuv420sp_to_pixels"]


def _formats(pixel_type):
    """"BGR2RGB" -> ("BGR", "RGB"); "RGB" -> ("RGB", "RGB")."""
    parts = pixel_type.upper().split("2")
    if len(parts) == 1:
        return parts[0], parts[0]
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0], parts[1]
    raise _kestrel.Error(f"unknown pixel type '{pixel_type}' (a format such as RGB, or FROM2TO such as BGR2RGB)")


def _size(size):
    if size is None:
        return 0, 0
    width, height = size
    return int(width), int(height)


def _floats(values):
    return [] if values is None else [float(v) for v in np.ravel(values)]


def _pixels(pixels):
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8:
        raise _kestrel.Error(f"pixels must be uint8, got {pixels.dtype}")
    return pixels


def from_pixels(pixels, pixel_type, size=None, resize="bilinear", mean=None, norm=None, antialias=False):
    """A model input from pixels: converted as `pixel_type` says, resized to
    size=(width, height) as pixels (filter `resize`), then per channel
    (value - mean[c]) * norm[c] (ncnn's substract_mean_normalize)."""
    source, target = _formats(pixel_type)
    width, height = _size(size)
    return _kestrel._from_pixels(_pixels(pixels), source, target, width, height, resize, antialias,
                                 _floats(mean), _floats(norm))


def to_pixels(array, pixel_type=None, mean=None, norm=None):
    """Back to uint8 pixels (height, width, channels): value / norm[c] + mean[c],
    rounded and saturated; then converted when `pixel_type` is "FROM2TO"."""
    pixels = _kestrel._to_pixels(np.asarray(array, np.float32), _floats(mean), _floats(norm))
    if pixel_type is not None:
        pixels = convert(pixels, pixel_type)
    return pixels


def convert(pixels, pixel_type):
    """Between pixel formats: convert(pixels, "BGR2RGB"); gray is BT.601 luma."""
    source, target = _formats(pixel_type)
    return _kestrel._convert_pixels(_pixels(pixels), source, target)


def _frame(data):
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, np.uint8)
    return np.asarray(data)


def yuv420sp_to_pixels(data, width, height, nv21=True, to="RGB"):
    """A YUV420sp camera frame (bytes or uint8 array; NV21: V first, as
    Android cameras; NV12: U first) as RGB or BGR pixels (BT.601 video range,
    as OpenCV)."""
    return _kestrel._yuv420_to_pixels(_frame(data), width, height, "nv21" if nv21 else "nv12", to)


def yuv420sp2rgb(data, width, height, nv21=True):
    """ncnn's name: a YUV420sp frame as RGB pixels."""
    return yuv420sp_to_pixels(data, width, height, nv21, "RGB")


def i420_to_pixels(data, width, height, to="RGB"):
    """An I420 frame (Y, U and V planes) as RGB or BGR pixels."""
    return _kestrel._yuv420_to_pixels(_frame(data), width, height, "i420", to)


def resize(image, size, filter="bilinear", antialias=False, cubic_a=-0.5, exclude_outside=False):
    """Resizes (height, width[, channels]) uint8 or float32 to size=(width, height).
    antialias widens the kernel when downscaling (as PIL and
    tf.image.resize(antialias=True)); exclude_outside drops taps past the border
    and renormalizes (PIL, TF) instead of repeating the border (OpenCV)."""
    width, height = _size(size)
    return _kestrel._resize(np.asarray(image), width, height, filter, antialias, cubic_a, exclude_outside)


def crop(image, x, y, width, height):
    return _kestrel._crop(np.asarray(image), x, y, width, height)


def flip(image, horizontal=True, vertical=False):
    return _kestrel._flip(np.asarray(image), horizontal, vertical)


def rotate90(image, quarter_turns=1):
    """Quarter turns clockwise (negative: counter-clockwise)."""
    return _kestrel._rotate90(np.asarray(image), quarter_turns)
