#!/usr/bin/python3
# The preprocessing fixture of peak's SmolVLM (Idefics3) vision tests, made with
# PIL alone (Debian's python3-pil 9.4), independent of peak's own resize: the
# source picture cut into tiles and an overview as Hugging Face's
# SmolVLMImageProcessor (Idefics3's) does it, for a small configuration (tiles
# of 32 pixels, the longest edge 96):
#   1. resize: the longest edge to `longest_edge`, the other side
#      int(longest / aspect ratio), made even (_resize_output_size_rescale_to_max_len);
#   2. resize_for_vision_encoder: each side rounded up to a multiple of the
#      tile, the short one from the long one's aspect first;
#   3. split_image: tiles row by row, then the whole resized to one tile
#      (the overview, last); a picture of one tile is not split;
# every resize PIL's Image.resize with resample LANCZOS and no reducing_gap.
# Saved as one binary PPM, the frames stacked top to bottom ("P6\n32 320\n255\n"
# for 3 x 3 tiles and the overview). Run with /usr/bin/python3 from anywhere;
# the output is committed, so the tests need no PIL.
#   smolvlm_32_96.ppm   ../png/photo_256x192.png (256 x 192) -> 96 x 72 -> 96 x 96
#                       -> 3 x 3 tiles of 32, then the overview
import math
import os

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "png", "photo_256x192.png")
TILE = 32
LONGEST_EDGE = 96


def resize_longest_edge(image, max_len):
    width, height = image.size
    aspect_ratio = width / height
    if width >= height:
        width = max_len
        height = int(width / aspect_ratio)
        if height % 2 != 0:
            height += 1
    else:
        height = max_len
        width = int(height * aspect_ratio)
        if width % 2 != 0:
            width += 1
    return image.resize((max(width, 1), max(height, 1)), Image.LANCZOS)


def resize_for_vision_encoder(image, tile):
    width, height = image.size
    aspect_ratio = width / height
    if width >= height:
        width = math.ceil(width / tile) * tile
        height = int(width / aspect_ratio)
        height = math.ceil(height / tile) * tile
    else:
        height = math.ceil(height / tile) * tile
        width = int(height * aspect_ratio)
        width = math.ceil(width / tile) * tile
    return image.resize((width, height), Image.LANCZOS)


def split_image(image, tile):
    width, height = image.size
    frames = []
    if height > tile or width > tile:
        rows, cols = math.ceil(height / tile), math.ceil(width / tile)
        tile_h, tile_w = math.ceil(height / rows), math.ceil(width / cols)
        for r in range(rows):
            for c in range(cols):
                x, y = c * tile_w, r * tile_h
                frames.append(image.crop((x, y, min(x + tile_w, width), min(y + tile_h, height))))
        if (width, height) != (tile, tile):
            image = image.resize((tile, tile), Image.LANCZOS)
    frames.append(image)
    return frames


source = Image.open(SOURCE)
assert source.mode == "RGB", source.mode
frames = split_image(resize_for_vision_encoder(resize_longest_edge(source, LONGEST_EDGE), TILE), TILE)
assert len(frames) == 10 and all(f.size == (TILE, TILE) for f in frames)
with open(os.path.join(HERE, f"smolvlm_{TILE}_{LONGEST_EDGE}.ppm"), "wb") as out:
    out.write(b"P6\n%d %d\n255\n" % (TILE, TILE * len(frames)) + b"".join(f.tobytes() for f in frames))
