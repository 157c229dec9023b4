#!/usr/bin/python3
# The preprocessing fixtures of peak's vision tests, made with PIL alone
# (Debian's python3-pil 9.4), independent of peak's own resize: the source picture
# resized as Hugging Face's processors resize it (PIL's Image.resize with no
# reducing_gap): Gemma3ImageProcessor with resample BILINEAR, SmolVLM's
# (Idefics3's) with LANCZOS for a picture it does not split, to 32 x 32, each
# saved as a binary PPM ("P6\n32 32\n255\n", then the RGB pixels row by row).
# Run with /usr/bin/python3 from anywhere; the outputs are committed, so the
# tests need no PIL.
#   gemma3_32.ppm    ../png/photo_256x192.png (gradients, noise and edges, made by
#                    ../png/make_png_images.py) resized to 32 x 32, bilinear
#   smolvlm_32.ppm   the same, Lanczos
import os

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "png", "photo_256x192.png")
SIZE = 32

source = Image.open(SOURCE)
assert source.mode == "RGB", source.mode
for name, resample in (("gemma3", Image.BILINEAR), ("smolvlm", Image.LANCZOS)):
    resized = source.resize((SIZE, SIZE), resample)
    assert resized.mode == "RGB" and resized.size == (SIZE, SIZE)
    with open(os.path.join(HERE, f"{name}_{SIZE}.ppm"), "wb") as out:
        out.write(b"P6\n%d %d\n255\n" % resized.size + resized.tobytes())
