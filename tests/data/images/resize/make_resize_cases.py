#!/usr/bin/python3
# The resampling cases of tests/image/test_resize.cpp: source pictures and what
# PIL's Image.resize (Debian's python3-pil) makes of them with each filter, as
# binary PPM files. Run with Debian's python3 from this folder; the outputs are
# committed, so the tests need no PIL.
#   <name>.ppm                      a source picture
#   <name>-<filter>-<W>x<H>.ppm     PIL's resize of it to W x H
import random

from PIL import Image

FILTERS = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS}


def picture(width, height, seed):
    """Gradients with noise and a few hard edges, so every filter's overshoot shows."""
    rng = random.Random(seed)
    data = bytearray()
    for y in range(height):
        for x in range(width):
            edge = 255 if (x // 5 + y // 4) % 3 == 0 else 0
            r = (x * 255 // max(width - 1, 1) + rng.randrange(-20, 21)) % 256
            g = (y * 255 // max(height - 1, 1) + rng.randrange(-20, 21)) % 256
            data += bytes((r, g, edge ^ rng.randrange(0, 64)))
    return Image.frombytes("RGB", (width, height), bytes(data))


CASES = [
    ("small", 37, 23, [(11, 7), (80, 50), (37, 9), (12, 23), (1, 1), (36, 24)]),
    ("photo", 150, 100, [(28, 28), (64, 48)]),
    ("dot", 1, 1, [(5, 3)]),
]

for seed, (name, width, height, sizes) in enumerate(CASES):
    source = picture(width, height, seed)
    source.save(f"{name}.ppm")
    for filter_name, filter_id in FILTERS.items():
        for w, h in sizes:
            source.resize((w, h), filter_id).save(f"{name}-{filter_name}-{w}x{h}.ppm")
