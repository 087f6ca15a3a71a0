#!/usr/bin/env python3
"""Says whether a PNG drew something: decodes it (8-bit RGB/RGBA, standard library only) and
prints the number of distinct colours and the share of pixels unlike the most common one.
Exits 1 when the image looks blank (fewer than MIN_COLOURS colours or MIN_INK of ink)."""
import struct
import sys
import zlib

MIN_COLOURS = 8
MIN_INK = 0.05


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    position, idat = 8, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    if depth != 8 or colour not in (2, 6):
        sys.exit(f"{path}: only 8-bit RGB or RGBA PNGs are checked (depth {depth}, colour type {colour})")
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        previous = line
        for i in range(0, stride, channels):
            yield bytes(line[i:i + 3])


def main():
    counts = {}
    for pixel in pixels(sys.argv[1]):
        counts[pixel] = counts.get(pixel, 0) + 1
    total = sum(counts.values())
    ink = 1 - max(counts.values()) / total
    print(f"{len(counts)} colours, {ink:.1%} of pixels unlike the background")
    sys.exit(0 if len(counts) >= MIN_COLOURS and ink >= MIN_INK else 1)


if __name__ == "__main__":
    main()
