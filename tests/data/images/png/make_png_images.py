#!/usr/bin/python3
"""Writes the PNG test corpus of tests/image/test_png.cpp and test_inflate.cpp.

    /usr/bin/python3 tests/data/images/png/make_png_images.py

Needs Debian's python3-pil (9.4) and ImageMagick's `convert`; the outputs are
committed, so the tests need neither. See README.md beside this script for what
is written and in which format.

Every image starts as an array of samples at the file's bit depth. Its expected
pixels are computed from that array by the rules of src/image/image.h (8-bit RGB,
or RGBA when the file has alpha or tRNS; low depths scaled by 255 / (2^depth - 1),
16-bit samples keeping their high byte), never by decoding a PNG. The files come
from three encoders: PIL, ImageMagick (libpng underneath) and the small writer
below, which gives exact control over filters, interlacing, zlib level and IDAT
splitting. Each written file is decoded again by PIL and must give the expected
pixels, a check on the writer and on the expectations alike.
"""

import io
import os
import random
import struct
import subprocess
import tempfile
import zlib

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ZLIB_DIR = os.path.join(HERE, "zlib")

GREY, RGB, PALETTE, GREY_ALPHA, RGBA = 0, 2, 3, 4, 6
SAMPLES = {GREY: 1, RGB: 3, PALETTE: 1, GREY_ALPHA: 2, RGBA: 4}
DEPTHS = {GREY: (1, 2, 4, 8, 16), RGB: (8, 16), PALETTE: (1, 2, 4, 8), GREY_ALPHA: (8, 16), RGBA: (8, 16)}
TYPE_NAMES = {GREY: "grey", RGB: "rgb", PALETTE: "pal", GREY_ALPHA: "ga", RGBA: "rgba"}

# Adam7 (PNG specification 8.2): x origin, y origin, x step, y step of each pass.
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


class Source:
    """An image as samples: rows[y][x] is a tuple of SAMPLES[colour_type] ints
    below 2^depth; palette: (r, g, b) triples; trns: a grey value, an (r, g, b)
    triple or a list of palette alphas, at the file's depth."""

    def __init__(self, width, height, colour_type, depth, rows, palette=None, trns=None):
        self.width, self.height = width, height
        self.colour_type, self.depth = colour_type, depth
        self.rows, self.palette, self.trns = rows, palette, trns


# ---------------------------------------------------------------------------
# Source arrays
# ---------------------------------------------------------------------------


def pattern(width, height, colour_type, depth, seed, palette_size=None):
    """Samples mixing gradients (for the filters to predict) and noise."""
    rng = random.Random(seed)
    top = (palette_size if colour_type == PALETTE else 1 << depth) - 1
    rows = []
    for y in range(height):
        row = []
        for x in range(width):
            pixel = []
            for c in range(SAMPLES[colour_type]):
                if rng.random() < 0.3:
                    v = rng.randint(0, top)
                else:
                    v = ((x * (c + 1) * 37 + y * 23 + c * 11) * (top + 1) // 97) % (top + 1)
                pixel.append(v)
            row.append(tuple(pixel))
        rows.append(row)
    return rows


def random_palette(size, seed):
    rng = random.Random(seed)
    return [(rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)) for _ in range(size)]


def make_source(width, height, colour_type, depth, seed, palette_size=None, trns=None):
    palette = None
    if colour_type == PALETTE:
        palette_size = palette_size or (1 << depth)
        palette = random_palette(palette_size, seed + 1)
    rows = pattern(width, height, colour_type, depth, seed, palette_size)
    return Source(width, height, colour_type, depth, rows, palette, trns)


# ---------------------------------------------------------------------------
# Expected pixels (src/image/image.h's convention)
# ---------------------------------------------------------------------------


def to_8bit(v, depth):
    return v >> 8 if depth == 16 else v * 255 // ((1 << depth) - 1)


def expected_pixels(src):
    """(channels, bytes): RGB or RGBA rows top to bottom."""
    t, d = src.colour_type, src.depth
    alpha = t in (GREY_ALPHA, RGBA) or src.trns is not None
    out = bytearray()
    for row in src.rows:
        for p in row:
            if t == GREY:
                g = to_8bit(p[0], d)
                px = [g, g, g] + ([0 if p[0] == src.trns else 255] if alpha else [])
            elif t == RGB:
                px = [to_8bit(v, d) for v in p] + ([0 if tuple(p) == tuple(src.trns) else 255] if alpha else [])
            elif t == PALETTE:
                px = list(src.palette[p[0]])
                if alpha:
                    px.append(src.trns[p[0]] if p[0] < len(src.trns) else 255)
            elif t == GREY_ALPHA:
                g = to_8bit(p[0], d)
                px = [g, g, g, to_8bit(p[1], d)]
            else:
                px = [to_8bit(v, d) for v in p]
            out += bytes(px)
    return (4 if alpha else 3), bytes(out)


def write_expected(name, src):
    channels, pixels = expected_pixels(src)
    if channels == 3:
        header = b"P6\n%d %d\n255\n" % (src.width, src.height)
        path = os.path.join(HERE, name + ".ppm")
    else:
        header = b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % (src.width, src.height)
        path = os.path.join(HERE, name + ".pam")
    with open(path, "wb") as f:
        f.write(header + pixels)


# ---------------------------------------------------------------------------
# A PNG writer with exact control
# ---------------------------------------------------------------------------


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pack_row(pixels, depth):
    samples = [v for p in pixels for v in p]
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for v in samples:
        acc = acc << depth | v
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_row(kind, row, prior, bpp):
    out = bytearray([kind])
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        predictor = (0, a, b, (a + b) // 2, paeth(a, b, c))[kind]
        out.append((x - predictor) & 0xFF)
    return bytes(out)


def passes(src, interlace):
    """The sub-images of scanlines: the image, or Adam7's non-empty passes."""
    if not interlace:
        return [src.rows]
    result = []
    for x0, y0, dx, dy in ADAM7:
        sub = [row[x0::dx] for row in src.rows[y0::dy]]
        if sub and sub[0]:
            result.append(sub)
    return result


def scanlines(src, interlace, filters):
    """The filtered image data. filters: a filter type for every row, or "cycle"
    (row r of every pass uses (r + pass) % 5, so each filter meets each pass)."""
    bpp = max(1, SAMPLES[src.colour_type] * src.depth // 8)
    data = bytearray()
    for p, sub in enumerate(passes(src, interlace)):
        prior = bytes(len(pack_row(sub[0], src.depth)))
        for r, pixels in enumerate(sub):
            row = pack_row(pixels, src.depth)
            kind = (r + p) % 5 if filters == "cycle" else filters
            data += filter_row(kind, row, prior, bpp)
            prior = row
    return bytes(data)


def ihdr(src, interlace):
    return chunk(b"IHDR", struct.pack(">IIBBBBB", src.width, src.height, src.depth, src.colour_type, 0, 0, interlace))


def write_png(src, interlace=False, filters="cycle", level=6, idat_size=None, before_idat=(), idat_gap=None,
              after_iend=b"", data=None, compressed=None):
    """The PNG of src. idat_size: IDAT chunks of at most this many bytes;
    before_idat: extra chunks after PLTE/tRNS; idat_gap: a chunk between the
    first and second IDAT; data / compressed: image data to use instead."""
    if data is None:
        data = scanlines(src, interlace, filters)
    if compressed is None:
        compressed = zlib.compress(data, level)
    out = b"\x89PNG\r\n\x1a\n" + ihdr(src, interlace)
    if src.palette is not None:
        out += chunk(b"PLTE", b"".join(bytes(c) for c in src.palette))
    if src.trns is not None:
        if src.colour_type == GREY:
            out += chunk(b"tRNS", struct.pack(">H", src.trns))
        elif src.colour_type == RGB:
            out += chunk(b"tRNS", struct.pack(">HHH", *src.trns))
        else:
            out += chunk(b"tRNS", bytes(src.trns))
    out += b"".join(before_idat)
    step = idat_size or max(1, len(compressed))
    pieces = [compressed[i : i + step] for i in range(0, len(compressed), step)] or [b""]
    for i, piece in enumerate(pieces):
        out += chunk(b"IDAT", piece)
        if i == 0 and idat_gap is not None:
            out += idat_gap
    return out + chunk(b"IEND", b"") + after_iend


# ---------------------------------------------------------------------------
# Checks on what is written
# ---------------------------------------------------------------------------


def png_header(png):
    """(width, height, depth, colour type, interlace) of a PNG's IHDR."""
    assert png[12:16] == b"IHDR"
    w, h, d, t, _, _, i = struct.unpack(">IIBBBBB", png[16:29])
    return w, h, d, t, i


def pil_view(png, src):
    """The expected-format pixels PIL decodes from png (the RGB part, and the
    alpha where PIL can tell it)."""
    im = Image.open(io.BytesIO(png))
    im.load()
    t, d = src.colour_type, src.depth
    trns = im.info.get("transparency")
    out = bytearray()
    for y in range(src.height):
        for x in range(src.width):
            v = im.getpixel((x, y))
            if im.mode in ("I", "I;16"):  # 16-bit grey: the full value
                px = [v >> 8] * 3 + ([0 if v == trns else 255] if trns is not None else [])
            elif im.mode in ("1", "L"):
                px = [255 if (im.mode == "1" and v) else v] * 3
                if trns is not None:
                    px.append(0 if v == to_8bit(trns, d) else 255)
            elif im.mode == "P":
                pal = im.getpalette()
                px = pal[3 * v : 3 * v + 3]
                if isinstance(trns, bytes):
                    px.append(trns[v] if v < len(trns) else 255)
                elif trns is not None:
                    px.append(0 if v == trns else 255)
            elif im.mode == "RGB":
                px = list(v)
                if trns is not None:
                    # At depth 16 PIL keeps only high bytes: alpha from the source.
                    full = tuple(src.rows[y][x]) if d == 16 else tuple(v)
                    px.append(0 if full == tuple(trns) else 255)
            elif im.mode == "LA":
                px = [v[0]] * 3 + [v[1]]
            else:
                px = list(v)
                if t == GREY_ALPHA:  # PIL keeps 16-bit grey+alpha as RGBA
                    px = [v[0]] * 3 + [v[3]]
            out += bytes(px)
    return bytes(out)


def filter_types(png):
    """The set of filter types of a PNG's scanlines."""
    at, data = 8, b""
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        if kind == b"IDAT":
            data += png[at + 8 : at + 8 + length]
        at += 12 + length
    w, h, d, t, interlace = png_header(png)
    raw = zlib.decompress(data)
    types, offset = set(), 0
    for x0, y0, dx, dy in ADAM7 if interlace else ((0, 0, 1, 1),):
        pw, ph = max(0, (w - x0 + dx - 1) // dx), max(0, (h - y0 + dy - 1) // dy)
        if pw and ph:
            row = (pw * SAMPLES[t] * d + 7) // 8 + 1
            types.update(raw[offset + r * row] for r in range(ph))
            offset += ph * row
    return types


INDEPENDENT_FILTERS = set()  # the filter types met in files of PIL and ImageMagick


def save(name, png, src, expect_header=None):
    """Writes name.png and its expected pixels, after checking that PIL reads
    png as those pixels and (if given) that IHDR says what was asked for."""
    if expect_header is not None:
        assert png_header(png) == expect_header, (name, png_header(png), expect_header)
    _, pixels = expected_pixels(src)
    assert pil_view(png, src) == pixels, name
    if name.startswith(("pil_", "magick_", "apng_", "photo_")):
        INDEPENDENT_FILTERS.update(filter_types(png))
    with open(os.path.join(HERE, name + ".png"), "wb") as f:
        f.write(png)
    write_expected(name, src)


def save_own(name, src, interlace=False, **options):
    png = write_png(src, interlace, **options)
    if isinstance(options.get("filters"), int):
        assert filter_types(png) == {options["filters"]}, name
    save(name, png, src, (src.width, src.height, src.depth, src.colour_type, int(interlace)))


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------


def own_writer_cases():
    seed = 100
    # Every colour type at every depth, odd sizes, straight and interlaced
    # (including images smaller than the 8 x 8 Adam7 pattern).
    for t in (GREY, RGB, PALETTE, GREY_ALPHA, RGBA):
        for d in DEPTHS[t]:
            for w, h in ((1, 1), (7, 3), (19, 11)):
                for interlace in (False, True):
                    seed += 1
                    name = "%s%d_%dx%d%s" % (TYPE_NAMES[t], d, w, h, "_adam7" if interlace else "")
                    save_own(name, make_source(w, h, t, d, seed), interlace)
    # Thin images: a column and a row, widths that leave low-depth rows with a
    # partial last byte.
    for t, d in ((GREY, 1), (GREY, 2), (GREY, 4), (PALETTE, 1), (PALETTE, 4), (RGB, 8), (RGBA, 16)):
        for w, h in ((1, 9), (13, 1), (3, 5), (9, 2)):
            for interlace in (False, True):
                seed += 1
                name = "%s%d_%dx%d%s" % (TYPE_NAMES[t], d, w, h, "_adam7" if interlace else "")
                save_own(name, make_source(w, h, t, d, seed), interlace)
    # Each filter type alone, at 2, 3, 6 and 8 bytes per pixel and below one.
    for t, d in ((GREY, 2), (GREY_ALPHA, 8), (RGB, 8), (RGB, 16), (RGBA, 16)):
        for f in range(5):
            seed += 1
            save_own("filter%d_%s%d" % (f, TYPE_NAMES[t], d), make_source(19, 11, t, d, seed), filters=f)
            save_own("filter%d_%s%d_adam7" % (f, TYPE_NAMES[t], d), make_source(13, 9, t, d, seed), True, filters=f)
    # Every zlib level, 0 being stored blocks.
    for level in range(10):
        save_own("zlib%d_rgb8" % level, make_source(19, 11, RGB, 8, 300 + level), level=level)
    # Palettes: shorter than the depth allows, with a full or a short tRNS.
    save_own("pal4_short_palette", make_source(21, 9, PALETTE, 4, 401, palette_size=5))
    save_own("pal8_short_palette", make_source(21, 9, PALETTE, 8, 402, palette_size=3))
    alphas = [random.Random(403).randint(0, 255) for _ in range(16)]
    save_own("pal4_trns", make_source(21, 9, PALETTE, 4, 404, trns=alphas))
    save_own("pal4_trns_short", make_source(21, 9, PALETTE, 4, 405, trns=alphas[:6]))
    save_own("pal2_trns_adam7", make_source(13, 11, PALETTE, 2, 406, trns=alphas[:3]), True)
    save_own("pal8_trns_short_palette", make_source(21, 9, PALETTE, 8, 407, palette_size=40, trns=alphas[:7]))
    # Grey and RGB tRNS at every depth; the value placed in the image. At depth
    # 16 its neighbours share the high byte, so only comparing all 16 bits keeps
    # them opaque.
    for d in DEPTHS[GREY]:
        src = make_source(17, 6, GREY, d, 500 + d)
        key = (1 << d) - 2 if d > 1 else 1
        src.rows[1][3] = src.rows[4][16] = (key,)
        if d == 16:
            src.rows[2][5], src.rows[3][6] = (key ^ 1,), (key ^ 0x10,)
        src.trns = key
        save_own("grey%d_trns" % d, src)
    for d in DEPTHS[RGB]:
        src = make_source(17, 6, RGB, d, 510 + d)
        key = (3, (1 << d) - 5, 77)
        src.rows[0][0] = src.rows[5][9] = key
        if d == 16:
            src.rows[1][1], src.rows[2][2] = (key[0] ^ 1, key[1], key[2]), (key[0], key[1], key[2] ^ 2)
        src.trns = key
        save_own("rgb%d_trns" % d, src)
    src = make_source(11, 7, GREY, 4, 520, trns=9)
    src.rows[3][3] = (9,)
    save_own("grey4_trns_adam7", src, True)
    # IDAT in many tiny chunks (one byte, seven bytes), one of them empty, an
    # interlaced image in 3-byte chunks.
    save_own("idat_split_1byte", make_source(12, 7, GREY, 8, 601), idat_size=1)
    save_own("idat_split_7bytes", make_source(19, 11, GREY, 4, 602), idat_size=7)
    save_own("idat_split_empty_chunk", make_source(19, 11, RGBA, 8, 603), idat_size=50, idat_gap=chunk(b"IDAT", b""))
    save_own("idat_split_3bytes_adam7", make_source(13, 9, PALETTE, 4, 604), True, idat_size=3)
    # Chunks to skip: text, gamma, a private ancillary chunk; bytes after IEND.
    extras = (chunk(b"gAMA", struct.pack(">I", 45455)), chunk(b"tEXt", b"Comment\0skipped"),
              chunk(b"prVt", bytes(range(40))))
    save_own("ancillary_chunks", make_source(9, 9, RGB, 8, 701), before_idat=extras, after_iend=b"junk after IEND")


def pil_cases():
    """Files written by PIL's own PNG encoder (adaptive filters, its zlib use)."""

    def from_pil(name, im, src, **params):
        buf = io.BytesIO()
        im.save(buf, "PNG", **params)
        save(name, buf.getvalue(), src)

    w, h = 19, 11
    for mode, t in (("L", GREY), ("RGB", RGB), ("RGBA", RGBA), ("LA", GREY_ALPHA)):
        src = make_source(w, h, t, 8, 800 + t)
        im = Image.frombytes(mode, (w, h), bytes(v for row in src.rows for p in row for v in p))
        from_pil("pil_%s" % mode.lower(), im, src, optimize=True)
    src = make_source(w, h, GREY, 1, 811)
    im = Image.frombytes("L", (w, h), bytes(255 * p[0] for row in src.rows for p in row)).convert("1")
    from_pil("pil_1bit", im, src)
    src = make_source(w, h, GREY, 16, 812)
    im = Image.new("I", (w, h))
    im.putdata([p[0] for row in src.rows for p in row])
    from_pil("pil_i16", im, src)
    src = make_source(w, h, PALETTE, 8, 813, palette_size=200, trns=[random.Random(814).randint(0, 255) for _ in range(200)])
    im = Image.frombytes("P", (w, h), bytes(p[0] for row in src.rows for p in row))
    im.putpalette([v for c in src.palette for v in c])
    from_pil("pil_palette_trns", im, src, transparency=bytes(src.trns))
    src = make_source(w, h, GREY, 8, 815, trns=42)
    src.rows[0][0] = (42,)
    im = Image.frombytes("L", (w, h), bytes(p[0] for row in src.rows for p in row))
    from_pil("pil_grey_trns", im, src, transparency=42)
    # An APNG of three frames: PIL stores the first as the default (IDAT) image.
    frames = [make_source(w, h, RGB, 8, 820 + i) for i in range(3)]
    ims = [Image.frombytes("RGB", (w, h), bytes(v for row in f.rows for p in row for v in p)) for f in frames]
    buf = io.BytesIO()
    ims[0].save(buf, "PNG", save_all=True, append_images=ims[1:], duration=100, loop=0)
    assert b"acTL" in buf.getvalue() and b"fdAT" in buf.getvalue()
    save("apng_default_image", buf.getvalue(), frames[0])
    # A larger photo-like picture (smooth gradients, fine noise, a few hard
    # edges): dynamic Huffman blocks with long codes, all five filters.
    save("photo_256x192", photo_png(256, 192, 900), photo_source(256, 192, 900))


def photo_source(width, height, seed):
    rng = random.Random(seed)
    rows = []
    for y in range(height):
        row = []
        for x in range(width):
            base = (x * 255 // width, y * 255 // height, (x + y) * 255 // (width + height))
            edge = 60 if (x // 40 + y // 30) % 2 else 0
            row.append(tuple(max(0, min(255, b + edge - 30 + int(rng.gauss(0, 2)))) for b in base))
        rows.append(row)
    return Source(width, height, RGB, 8, rows)


def photo_png(width, height, seed):
    src = photo_source(width, height, seed)
    im = Image.frombytes("RGB", (width, height), bytes(v for row in src.rows for p in row for v in p))
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=9)
    return buf.getvalue()


def magick_cases():
    """Files written by ImageMagick through libpng: adaptive filters, Adam7."""

    def netpbm(src):
        """src as PGM/PPM/PAM (maxval 2^depth - 1), ImageMagick's input."""
        top = (1 << src.depth) - 1
        n = SAMPLES[src.colour_type]
        data = b"".join(pack_row(row, 16 if src.depth == 16 else 8) for row in src.rows)
        if n == 1:
            return b"P5\n%d %d\n%d\n" % (src.width, src.height, top) + data
        if n == 3:
            return b"P6\n%d %d\n%d\n" % (src.width, src.height, top) + data
        tupltype = b"GRAYSCALE_ALPHA" if n == 2 else b"RGB_ALPHA"
        return b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %d\nTUPLTYPE %s\nENDHDR\n" % (
            src.width, src.height, n, top, tupltype) + data

    def convert(src, *options):
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, "in.pam")
            with open(source, "wb") as f:
                f.write(netpbm(src))
            target = os.path.join(tmp, "out.png")
            subprocess.run(["convert", source, "-define", "png:exclude-chunks=date,time", "-define",
                            "png:bit-depth=%d" % src.depth, "-define", "png:color-type=%d" % src.colour_type]
                           + list(options) + ["PNG:" + target], check=True)
            with open(target, "rb") as f:
                return f.read()

    # libpng's adaptive filtering: every row gets the filter type that suits it
    # best. (ImageMagick 6.9.11's png:compression-filter 1 to 4 wrote unfiltered
    # rows, so the single filter types come from the writer above.)
    kinds = ((GREY, 8), (GREY, 16), (RGB, 8), (RGB, 16), (GREY_ALPHA, 8), (RGBA, 8), (RGBA, 16))
    seed = 1000
    for t, d in kinds:
        seed += 1
        src = make_source(17, 9, t, d, seed)
        save("magick_%s%d" % (TYPE_NAMES[t], d), convert(src), src, (17, 9, d, t, 0))
        for w, h in ((17, 9), (5, 3)):
            seed += 1
            src = make_source(w, h, t, d, seed)
            png = convert(src, "-interlace", "PNG")
            save("magick_adam7_%s%d_%dx%d" % (TYPE_NAMES[t], d, w, h), png, src, (w, h, d, t, 1))
    # Low-depth grey, interlaced.
    for d in (1, 2, 4):
        seed += 1
        src = make_source(19, 7, GREY, d, seed)
        png = convert(src, "-interlace", "PNG")
        save("magick_adam7_grey%d" % d, png, src, (19, 7, d, GREY, 1))


# ---------------------------------------------------------------------------
# Refused files (test_png.cpp says why each is refused)
# ---------------------------------------------------------------------------


def write_bad(name, png):
    with open(os.path.join(HERE, "bad_" + name + ".png"), "wb") as f:
        f.write(png)


def bad_cases():
    # Index 5 into a PLTE of 5 entries, at row 4.
    src = make_source(10, 6, PALETTE, 4, 1101, palette_size=5)
    src.rows[3][7] = (5,)
    write_bad("palette_index", write_png(src))
    # A 10 x 40 RGB image whose data stops in its 12th row.
    src = make_source(10, 40, RGB, 8, 1102)
    data = scanlines(src, False, "cycle")
    write_bad("too_little_data", write_png(src, data=data[: 11 * 31 + 17]))
    # The data of a 41st row after the 40 that IHDR promises.
    write_bad("too_much_data", write_png(src, data=data + data[:31]))
    # Filter type 5 at the start of row 3.
    bad = bytearray(data)
    bad[2 * 31] = 5
    write_bad("filter_type", write_png(src, data=bytes(bad)))
    # A decompression bomb: 64 x 64 grey (4160 bytes of data), whose 8 KiB of
    # zlib stream inflate to 8 MiB.
    src = make_source(64, 64, GREY, 8, 1103)
    write_bad("bomb", write_png(src, compressed=zlib.compress(bytes(8 << 20), 9)))
    # IDAT, then a text chunk, then IDAT again.
    src = make_source(20, 20, RGB, 8, 1104)
    write_bad("idat_not_consecutive", write_png(src, idat_size=200, idat_gap=chunk(b"tEXt", b"a\0b")))
    # A zlib stream whose Adler-32 is wrong.
    compressed = bytearray(zlib.compress(scanlines(src, False, "cycle")))
    compressed[-1] ^= 1
    write_bad("adler", write_png(src, compressed=bytes(compressed)))


# ---------------------------------------------------------------------------
# zlib streams for test_inflate.cpp
# ---------------------------------------------------------------------------


def zlib_payload():
    """34000 bytes: words (short matches), runs (length 258 and distance 1),
    random bytes (literals, long codes), and copies of earlier text from nearly
    32 KiB back."""
    rng = random.Random(1200)
    words = ["peak", "image", "inflate", "huffman", "deflate", "window", "distance", "literal", "the", "of", "a"]
    out = bytearray()
    while len(out) < 34000:
        kind = rng.random()
        if kind < 0.7:
            out += (" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) + ".\n").encode()
        elif kind < 0.8:
            out += bytes([rng.randint(0, 255)]) * rng.randint(3, 700)
        elif kind < 0.85:
            out += bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 40)))
        elif len(out) > 32768:
            start = len(out) - 32768 + rng.randint(0, 100)
            out += out[start : start + rng.randint(3, 300)]
    return bytes(out[:34000])


def zlib_streams():
    """payload.bin, streams of it (or of its first bytes) made by Python's zlib,
    and streams.txt: each stream's file and the length of payload it inflates to."""
    os.makedirs(ZLIB_DIR, exist_ok=True)
    payload = zlib_payload()

    def compress(data, level=6, wbits=15, mem_level=8, strategy=zlib.Z_DEFAULT_STRATEGY, flush_at=()):
        c = zlib.compressobj(level, zlib.DEFLATED, wbits, mem_level, strategy)
        out, start = b"", 0
        for cut in flush_at:
            out += c.compress(data[start:cut]) + c.flush(zlib.Z_FULL_FLUSH)
            start = cut
        return out + c.compress(data[start:]) + c.flush()

    # name: (stream, length of payload it holds). Stored streams hold a prefix
    # (they cost what they hold).
    streams = {"level%d" % level: (zlib.compress(payload, level), len(payload)) for level in range(1, 10)}
    streams["level0"] = (zlib.compress(payload[:3000], 0), 3000)
    streams["stored_flushes"] = (compress(payload[:3000], level=0, flush_at=(0, 5, 2000)), 3000)
    streams["fixed"] = (compress(payload, strategy=zlib.Z_FIXED), len(payload))
    streams["huffman_only"] = (compress(payload[:8000], strategy=zlib.Z_HUFFMAN_ONLY), 8000)
    streams["rle"] = (compress(payload, strategy=zlib.Z_RLE), len(payload))
    streams["window512"] = (compress(payload, wbits=9), len(payload))
    streams["small_blocks"] = (compress(payload, mem_level=1), len(payload))
    streams["flushes"] = (compress(payload, flush_at=(0, 1000, 1001, 20000)), len(payload))
    streams["empty"] = (zlib.compress(b""), 0)
    streams["one_byte"] = (zlib.compress(payload[:1], 9), 1)
    for name in os.listdir(ZLIB_DIR):
        os.remove(os.path.join(ZLIB_DIR, name))
    with open(os.path.join(ZLIB_DIR, "payload.bin"), "wb") as f:
        f.write(payload)
    with open(os.path.join(ZLIB_DIR, "streams.txt"), "w") as listing:
        for name, (data, length) in sorted(streams.items()):
            assert zlib.decompress(data) == payload[:length], name
            with open(os.path.join(ZLIB_DIR, name + ".zz"), "wb") as f:
                f.write(data)
            listing.write("%s.zz %d\n" % (name, length))


def main():
    for name in os.listdir(HERE):
        if name.endswith((".png", ".ppm", ".pam")):
            os.remove(os.path.join(HERE, name))
    own_writer_cases()
    pil_cases()
    magick_cases()
    assert INDEPENDENT_FILTERS == {0, 1, 2, 3, 4}, INDEPENDENT_FILTERS
    bad_cases()
    zlib_streams()


if __name__ == "__main__":
    main()
