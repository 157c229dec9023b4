#!/usr/bin/python3
# The preprocessing fixture of peak's Gemma 3 vision tests, made with PIL alone
# (Debian's python3-pil 9.4), independent of peak's own resize: the source picture
# resized as Hugging Face's Gemma3ImageProcessor resizes (PIL's Image.resize with
# resample BILINEAR and no reducing_gap), to 32 x 32, saved as a binary PPM
# ("P6\n32 32\n255\n", then the RGB pixels row by row). Run with /usr/bin/python3
# from anywhere; the output is committed, so the tests need no PIL.
#   gemma3_32.ppm   ../png/photo_256x192.png (gradients, noise and edges, made by
#                   ../png/make_png_images.py) resized to 32 x 32
import os

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "png", "photo_256x192.png")
SIZE = 32

source = Image.open(SOURCE)
assert source.mode == "RGB", source.mode
resized = source.resize((SIZE, SIZE), Image.BILINEAR)
assert resized.mode == "RGB" and resized.size == (SIZE, SIZE)
with open(os.path.join(HERE, f"gemma3_{SIZE}.ppm"), "wb") as out:
    out.write(b"P6\n%d %d\n255\n" % resized.size + resized.tobytes())
