#!/usr/bin/env python3
"""png.py - read PNG files for the tests, with the standard library only.

    png.py size FILE            width height
    png.py pixel FILE X Y       the pixel's colour as rrggbb
    png.py text FILE KEY        the text of the tEXt/iTXt chunk KEY
    png.py bbox FILE RRGGBB     x0 y0 x1 y1 of the pixels of that colour
                                (each channel within 2), or "none"
    png.py rowspan FILE RRGGBB Y  how many pixels of row Y have that colour
    png.py same A B             "same" when both decode to the same pixels

Decodes 8-bit greyscale, RGB, RGBA and grey+alpha, non-interlaced: what
cairo and Chromium write. Anything else is an error (exit 2).
"""
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    i = 8
    while i + 8 <= len(data):
        n, = struct.unpack(">I", data[i:i + 4])
        kind = data[i + 4:i + 8]
        body = data[i + 8:i + 8 + n]
        crc, = struct.unpack(">I", data[i + 8 + n:i + 12 + n])
        if zlib.crc32(kind + body) != crc:
            raise ValueError("bad CRC in chunk %r" % kind)
        yield kind, body
        i += 12 + n


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def decode(path):
    data = open(path, "rb").read()
    idat, text = b"", {}
    for kind, body in chunks(data):
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"tEXt":
            k, v = body.split(b"\0", 1)
            text[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"iTXt":
            k, rest = body.split(b"\0", 1)
            rest = rest[2:]
            _, rest = rest.split(b"\0", 1)
            _, v = rest.split(b"\0", 1)
            text[k.decode("latin-1")] = v.decode("utf-8")
    if depth != 8 or ctype not in CHANNELS or interlace:
        raise ValueError("unsupported PNG: depth %d, colour type %d" % (depth, ctype))
    bpp = CHANNELS[ctype]
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            line[x] = (line[x] + (0, a, b, (a + b) // 2, paeth(a, b, c))[f]) & 0xFF
        rows.append(line)
        prev = line
    def pixel(x, y):
        p = rows[y][x * bpp:(x + 1) * bpp]
        return (p[0], p[0], p[0]) if bpp <= 2 else (p[0], p[1], p[2])
    return w, h, pixel, text


def near(p, want):
    return all(abs(a - b) <= 2 for a, b in zip(p, want))


def main(argv):
    cmd, path = argv[1], argv[2]
    w, h, pixel, text = decode(path)
    if cmd == "size":
        print(w, h)
    elif cmd == "pixel":
        print("%02x%02x%02x" % pixel(int(argv[3]), int(argv[4])))
    elif cmd == "text":
        print(text.get(argv[3], ""))
    elif cmd in ("bbox", "rowspan"):
        want = bytes.fromhex(argv[3].lstrip("#"))
        if cmd == "rowspan":
            y = int(argv[4])
            print(sum(near(pixel(x, y), want) for x in range(w)))
            return 0
        xs, ys = [], []
        for y in range(h):
            for x in range(w):
                if near(pixel(x, y), want):
                    xs.append(x)
                    ys.append(y)
        print("%d %d %d %d" % (min(xs), min(ys), max(xs), max(ys)) if xs else "none")
    elif cmd == "same":
        w2, h2, pixel2, _ = decode(argv[3])
        same = (w, h) == (w2, h2) and all(pixel(x, y) == pixel2(x, y)
                                          for y in range(h) for x in range(w))
        print("same" if same else "different")
    else:
        raise SystemExit("png.py: unknown command " + cmd)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (ValueError, OSError, zlib.error) as e:
        print("png.py: %s" % e, file=sys.stderr)
        sys.exit(2)
