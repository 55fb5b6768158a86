"""Image quality against an exact reference, for the benchmarks (run with the thumbor venv's
Python, which has Pillow).

The reference is the full decode, resized with Lanczos to the served image's size in one step:
no shrink-on-load, no second resampling. PSNR is over the R, G and B samples together. Both
sides are compared in sRGB: an image that embeds an ICC profile is transformed from it first, so
an answer that kept a Display P3 photo's profile and one that converted it to sRGB are judged
alike."""
import io, math

from PIL import Image, ImageChops, ImageCms

_srgb = ImageCms.createProfile("sRGB")


def rgb(image):
    """The image as sRGB samples: through its embedded profile where it has one."""
    icc = image.info.get("icc_profile")
    if icc:
        try:
            return ImageCms.profileToProfile(image, ImageCms.ImageCmsProfile(io.BytesIO(icc)), _srgb, outputMode="RGB")
        except ImageCms.PyCMSError:
            pass
    return image.convert("RGB")

_full = {}


def full_decode(path):
    """The source decoded at full size, as RGB (kept for the next comparison with it)."""
    if path not in _full:
        _full.clear()
        with Image.open(path) as image:
            _full[path] = rgb(image)
    return _full[path]


def psnr(served, path):
    """PSNR in dB of `served` (encoded bytes) against the exact reference made from `path`."""
    with Image.open(io.BytesIO(served)) as image:
        image = rgb(image)
        reference = full_decode(path).resize(image.size, Image.LANCZOS)
        histogram = ImageChops.difference(image, reference).histogram()
    squares = sum(count * (value % 256) ** 2 for value, count in enumerate(histogram))
    mse = squares / (image.size[0] * image.size[1] * 3)
    return float("inf") if mse == 0 else 10 * math.log10(255 ** 2 / mse)


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
