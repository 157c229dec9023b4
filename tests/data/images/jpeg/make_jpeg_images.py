#!/usr/bin/python3
"""Makes the JPEG corpus that tests/image/test_jpeg.cpp decodes, and its reference pixels.

Run with Debian's python3-pil 9.4 (libjpeg-turbo 2.1.5), ImageMagick's convert and
libjpeg-turbo-progs (cjpeg, jpegtran) installed:

    /usr/bin/python3 tests/data/images/jpeg/make_jpeg_images.py

It writes NAME.jpg, NAME.ppm (the pixels PIL decodes, binary PPM) and corpus.txt into
its own folder; README.md there gives the format and the cases.
"""

import io
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- sources


def photo(width, height, seed):
    """A photo-like picture: smooth colour waves, a few hard-edged discs and a diagonal
    edge for high frequencies, and seeded noise so that rare (long) Huffman codes occur."""
    rng = random.Random(seed)
    discs = [(rng.uniform(0, width), rng.uniform(0, height), rng.uniform(2, max(3, width / 4)),
              (rng.randrange(256), rng.randrange(256), rng.randrange(256))) for _ in range(4)]
    out = bytearray()
    for y in range(height):
        for x in range(width):
            r = 128 + 90 * math.sin(x / 11.0 + y / 23.0)
            g = 128 + 80 * math.cos(x / 17.0 - y / 9.0)
            b = 128 + 100 * math.sin((x + y) / 31.0)
            for cx, cy, radius, colour in discs:
                if (x - cx) ** 2 + (y - cy) ** 2 < radius * radius:
                    r, g, b = colour
            if x > 2 * y + width / 3:
                r, g, b = 255 - r, g * 0.5, b
            noise = rng.randint(-14, 14)
            out += bytes(max(0, min(255, int(v) + noise)) for v in (r, g, b))
    return Image.frombytes("RGB", (width, height), bytes(out))


# ---------------------------------------------------------------- JPEG segments


def segments(data):
    """(marker, whole segment bytes) pairs; a SOS segment carries its entropy-coded data."""
    assert data[:2] == b"\xff\xd8"
    out = [(0xD8, data[:2])]
    pos = 2
    while pos < len(data):
        assert data[pos] == 0xFF, pos
        marker = data[pos + 1]
        if marker == 0xD9:
            out.append((marker, data[pos:pos + 2]))
            break
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        end = pos + 2 + length
        if marker == 0xDA:
            while not (data[end] == 0xFF and data[end + 1] != 0 and not 0xD0 <= data[end + 1] <= 0xD7):
                end += 1
        out.append((marker, data[pos:end]))
        pos = end
    return out


def join(segs):
    return b"".join(s for _, s in segs)


def markers(data):
    return [m for m, _ in segments(data)]


# ---------------------------------------------------------------- tools


def run(*args):
    subprocess.run(args, check=True)


def cjpeg(source, *switches):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.pnm")  # P6 for RGB, P5 for grey
        out = os.path.join(tmp, "out.jpg")
        source.save(src, "PPM")
        run("cjpeg", *switches, "-outfile", out, src)
        return open(out, "rb").read()


def jpegtran(data, *switches, scans=None):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.jpg")
        out = os.path.join(tmp, "out.jpg")
        open(src, "wb").write(data)
        extra = []
        if scans is not None:
            script = os.path.join(tmp, "scans.txt")
            open(script, "w").write(scans)
            extra = ["-scans", script]
        run("jpegtran", *switches, *extra, "-outfile", out, src)
        return open(out, "rb").read()


def pil(source, **options):
    buffer = io.BytesIO()
    source.save(buffer, "JPEG", **options)
    return buffer.getvalue()


def reference(data, transpose=False):
    image = Image.open(io.BytesIO(data))
    if transpose:
        image = ImageOps.exif_transpose(image)
    return image.convert("RGB")


# ---------------------------------------------------------------- corpus

corpus = []  # (jpg name, ppm name)
written = {}  # ppm name -> pixels


def add(name, data, transpose=False, same_as=None):
    """Writes NAME.jpg and, unless it shares SAME_AS's reference, NAME.ppm."""
    open(os.path.join(HERE, name + ".jpg"), "wb").write(data)
    pixels = reference(data, transpose)
    ppm = (same_as or name) + ".ppm"
    if same_as is None:
        with open(os.path.join(HERE, ppm), "wb") as f:
            f.write(b"P6\n%d %d\n255\n" % pixels.size)
            f.write(pixels.tobytes())
        written[ppm] = pixels
    else:
        assert written[ppm].tobytes() == pixels.tobytes(), name
    corpus.append((name + ".jpg", ppm))


def read(name):
    return open(os.path.join(HERE, name + ".jpg"), "rb").read()


def exif(orientation, big_endian):
    """An APP1 Exif payload whose IFD0 holds two other tags before Orientation (0x0112)."""
    e = ">" if big_endian else "<"
    entries = [(0x010F, 2, 4, b"cam\0"), (0x011A, 5, 1, struct.pack(e + "I", 26)),
               (0x0112, 3, 1, struct.pack(e + "HH", orientation, 0))]
    ifd = struct.pack(e + "H", len(entries))
    for tag, kind, count, value in entries:
        ifd += struct.pack(e + "HHI", tag, kind, count) + value
    ifd += struct.pack(e + "I", 0)
    return b"Exif\0\0" + (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", 8) + ifd


def main():
    small = photo(32, 24, 1)
    odd = photo(17, 33, 2)
    large = photo(256, 192, 3)
    grey = photo(33, 21, 4).convert("L")

    # Sampling factors (PIL: 0 = 4:4:4, 1 = 4:2:2, 2 = 4:2:0), JFIF YCbCr.
    add("s444", pil(small, quality=90, subsampling=0))
    add("s422", pil(small, quality=90, subsampling=1))
    add("s420", pil(small, quality=90, subsampling=2))
    add("s440", cjpeg(small, "-quality", "90", "-sample", "1x2,1x1,1x1"))
    add("s411", cjpeg(small, "-quality", "90", "-sample", "4x1,1x1,1x1"))
    add("s420_odd", pil(odd, quality=90, subsampling=2))
    add("s422_odd", pil(odd, quality=90, subsampling=1))
    add("s440_odd", cjpeg(odd, "-quality", "90", "-sample", "1x2,1x1,1x1"))
    add("s411_odd", cjpeg(odd, "-quality", "90", "-sample", "4x1,1x1,1x1"))
    add("s420_chroma_2x1_1x2", cjpeg(odd, "-quality", "90", "-sample", "2x2,2x1,1x2"))
    add("s4x2", cjpeg(odd, "-quality", "90", "-sample", "4x2,1x1,1x1"))
    add("s1x4", cjpeg(odd, "-quality", "90", "-sample", "1x4,1x1,1x1"))
    add("s444_2x1_mcu", cjpeg(small, "-quality", "90", "-sample", "2x1,2x1,2x1"))
    add("s_chroma_finer_than_luma", cjpeg(odd, "-quality", "90", "-sample", "1x1,2x2,2x2"))
    add("s3x1", cjpeg(odd, "-quality", "90", "-sample", "3x1,1x1,1x1"))

    # Tiny and odd sizes: a chroma plane 1 or 2 samples wide is replicated, 3 or more is
    # interpolated ("fancy" upsampling).
    for w, h in [(1, 1), (2, 2), (3, 5), (4, 4), (5, 5), (7, 3), (9, 2)]:
        add("s420_%dx%d" % (w, h), pil(photo(w, h, 10 + w), quality=90, subsampling=2))
    add("s422_3x3", pil(photo(3, 3, 30), quality=90, subsampling=1))
    add("s422_5x4", pil(photo(5, 4, 31), quality=90, subsampling=1))
    add("s440_3x3", cjpeg(photo(3, 3, 32), "-quality", "90", "-sample", "1x2,1x1,1x1"))

    # Grey.
    add("grey", pil(grey, quality=75))
    add("grey_1x1", pil(photo(1, 1, 5).convert("L"), quality=75))
    add("grey_sampled_2x2", cjpeg(grey, "-quality", "75", "-grayscale", "-sample", "2x2"))

    # Quality: 10, 50, 95, 100; 16-bit quantization tables (SOF1, extended sequential).
    for q in (10, 50, 95, 100):
        add("q%d" % q, pil(small, quality=q, subsampling=2))
    q2 = cjpeg(small, "-quality", "2")
    assert 0xC1 in markers(q2), "16-bit tables should make an extended (SOF1) file"
    assert any(m == 0xDB and s[4] >> 4 == 1 for m, s in segments(q2)), "no 16-bit DQT"
    add("q2_16bit_tables", q2)
    baseline = pil(odd, quality=80, subsampling=2)
    add("baseline", baseline)
    add("baseline_as_sof1", bytes(b if i != baseline.index(b"\xff\xc0") + 1 else 0xC1
                                  for i, b in enumerate(baseline)), same_as="baseline")

    # Huffman tables made for the picture.
    add("optimized", pil(small, quality=90, subsampling=2, optimize=True))

    # Non-interleaved sequential scans (one component per scan).
    add("sequential_3_scans", jpegtran(baseline, scans="0;\n1;\n2;\n"), same_as="baseline")

    # Progressive.
    add("progressive_pil", pil(small, quality=90, subsampling=2, progressive=True))
    add("progressive", jpegtran(baseline, "-progressive"), same_as="baseline")
    script = """
        0: 0-0, 0, 2;
        1, 2: 0-0, 0, 1;
        0: 0-0, 2, 1;
        0: 1-2, 0, 3;
        0: 3-63, 0, 2;
        1: 1-63, 0, 0;
        2: 1-63, 0, 1;
        0: 1-2, 3, 2;
        0: 1-63, 2, 1;
        0, 1, 2: 0-0, 1, 0;
        2: 1-63, 1, 0;
        0: 1-63, 1, 0;
    """
    add("progressive_successive", jpegtran(baseline, scans=script), same_as="baseline")
    add("progressive_grey", jpegtran(pil(grey, quality=75), "-progressive"), same_as="grey")
    add("progressive_restart", jpegtran(baseline, "-progressive", "-restart", "2B"), same_as="baseline")
    add("progressive_s411", jpegtran(read("s411_odd"), "-restart", "1", scans=script), same_as="s411_odd")
    add("progressive_s440", jpegtran(read("s440_odd"), "-progressive"), same_as="s440_odd")
    add("progressive_successive_restart", jpegtran(baseline, "-restart", "1", scans=script),
        same_as="baseline")

    # Restart intervals: every 2 MCUs, every MCU row, every MCU; grey.
    add("restart_2", jpegtran(baseline, "-restart", "2B"), same_as="baseline")
    add("restart_row", jpegtran(baseline, "-restart", "1"), same_as="baseline")
    add("restart_1", jpegtran(baseline, "-restart", "1B"), same_as="baseline")
    add("restart_grey", jpegtran(pil(grey, quality=75), "-restart", "3B"), same_as="grey")
    add("restart_s411", cjpeg(odd, "-quality", "90", "-sample", "4x1,1x1,1x1", "-restart", "1B"),
        same_as="s411_odd")

    # RGB without a colour transform: cjpeg -rgb writes Adobe APP14 (transform 0) and the
    # component ids 'R', 'G', 'B'. Variants: ids 1, 2, 3 (the Adobe flag alone says RGB);
    # no APP14 (the ids alone say RGB); a JFIF APP0 added (JFIF wins: YCbCr).
    rgb = cjpeg(small, "-quality", "90", "-rgb")
    add("rgb_adobe", rgb)
    segs = segments(rgb)
    assert not any(m == 0xE0 for m, _ in segs) and any(m == 0xEE for m, _ in segs)

    def renumber(segs, ids):
        out = []
        for m, s in segs:
            if m in (0xC0, 0xC1, 0xC2):
                s = bytearray(s)
                for i, cid in enumerate(ids):
                    s[10 + 3 * i] = cid
                s = bytes(s)
            if m == 0xDA:
                s = bytearray(s)
                for i, cid in enumerate(ids[:s[4]]):
                    s[5 + 2 * i] = cid
                s = bytes(s)
            out.append((m, s))
        return out

    add("rgb_adobe_ids_123", join(renumber(segs, [1, 2, 3])), same_as="rgb_adobe")
    add("rgb_ids_only", join([(m, s) for m, s in segs if m != 0xEE]), same_as="rgb_adobe")
    jfif = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    add("rgb_adobe_with_jfif", join(segs[:1] + [(0xE0, jfif)] + segs[1:]))

    # Markers anywhere before use: quantization tables after SOF, Huffman tables between
    # scans (jpegtran writes them so), COM and APPn segments, fill bytes (0xFF) before
    # markers, bytes after EOI.
    segs = segments(jpegtran(baseline, "-progressive"))
    sof = [(m, s) for m, s in segs if m == 0xC2]
    dqt = [(m, s) for m, s in segs if m == 0xDB]
    app = [(m, s) for m, s in segs if 0xE0 <= m <= 0xEF]
    after = segs[segs.index(sof[0]) + 1:]
    moved = [segs[0], (0xFE, b"\xff\xfe\x00\x07hello")] + app + sof
    moved += [(0xEF, b"\xff\xef\x00\x04\x01\x02")] + dqt
    moved += [(m, b"\xff\xff\xff" + s if m in (0xDA, 0xC4) else s) for m, s in after]
    add("markers_anywhere", join(moved) + b"trailing bytes", same_as="baseline")

    # EXIF orientations 2-8 (little- and big-endian TIFF) and an undefined value (9),
    # each an APP1 segment added to the same file of a picture that is not square.
    upright = segments(pil(photo(21, 13, 6), quality=90, subsampling=2))
    for orientation in range(2, 10):
        payload = exif(orientation, big_endian=orientation % 2 == 1)
        app1 = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
        add("exif_%d" % orientation, join(upright[:2] + [(0xE1, app1)] + upright[2:]), transpose=True)

    # A larger picture, so that long Huffman codes occur; its progressive transcode.
    big = pil(large, quality=92, subsampling=2)
    add("photo_420", big)
    add("photo_420_progressive", jpegtran(big, "-progressive", "-restart", "5B"), same_as="photo_420")

    # Refused: arithmetic coding, CMYK.
    arithmetic = jpegtran(baseline, "-arithmetic")
    assert 0xC9 in markers(arithmetic)
    open(os.path.join(HERE, "arithmetic.jpg"), "wb").write(arithmetic)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.ppm")
        small.save(src)
        run("/usr/bin/convert", src, "-colorspace", "CMYK", "-quality", "80", os.path.join(HERE, "cmyk.jpg"))
    assert Image.open(os.path.join(HERE, "cmyk.jpg")).mode == "CMYK"

    with open(os.path.join(HERE, "corpus.txt"), "w") as f:
        f.write("# Written by make_jpeg_images.py: file, reference pixels (binary PPM), largest\n"
                "# allowed difference of any sample from the reference.\n")
        for jpg, ppm in corpus:
            f.write("%s %s 0\n" % (jpg, ppm))
    total = sum(os.path.getsize(os.path.join(HERE, n)) for n in os.listdir(HERE))
    print("%d files, %d bytes" % (len(os.listdir(HERE)), total), file=sys.stderr)


if __name__ == "__main__":
    main()
