#!/usr/bin/env python3
"""seeds-ksyms-dwsec.py OUTDIR [KALLSYMS]: seed inputs of fuzz_ksyms and
fuzz_dwsec (tests/fuzz/make-corpus.sh) under OUTDIR/ksyms and OUTDIR/dwsec.
ksyms: kallsyms text (byte 1 first), from KALLSYMS's first lines when given
and readable and from hand-written lines, and KSYMS payloads (byte 0 first)
written here from format/pfile.md 4.11. dwsec: the inputs fuzz_dwsec.c
describes, with real zlib streams and true, false and hostile claims."""
import os
import struct
import sys
import zlib

out = sys.argv[1]
for d in ("ksyms", "dwsec"):
    os.makedirs(os.path.join(out, d), exist_ok=True)


def put(d, name, data):
    with open(os.path.join(out, d, name), "wb") as f:
        f.write(data)


def uleb(v):
    b = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        b.append(c | (0x80 if v else 0))
        if not v:
            return bytes(b)


def payload(syms, mods, bid=b""):
    """syms: (addr, type, module index, name) sorted; mods: names."""
    h = struct.pack("<B3xH2xI4x", len(bid), len(mods), len(syms)) + bid
    for i, m in enumerate(mods):
        h += struct.pack("<QQBB", 0xFFFFFFFFC0000000 + i * 0x10000, 0x8000, 0, len(m)) + m
    prev = 0
    cols = b""
    for a, _, _, _ in syms:
        cols += uleb(a - prev)
        prev = a
    cols += bytes(t for _, t, _, _ in syms)
    cols += b"".join(uleb(m) for _, _, m, _ in syms)
    cols += b"".join(n + b"\0" for _, _, _, n in syms)
    return h + cols


text = [
    b"ffffffff81000000 T _text\nffffffff81000010 t start\nffffffff81000020 W weak_one\n",
    b"ffffffffc0001000 t mod_fn\t[ext4]\nffffffffc0001100 T mod_two\t[ext4]\nffffffff81000000 T _stext\n",
    b"0000000000000000 T hidden\n0000000000000000 t also\n",
    b"ffffffff81000000 T a\nffffffff81000000 T a_alias\nffffffff81001000 D data\t[m]\n",
]
if len(sys.argv) > 2:
    try:
        with open(sys.argv[2], "rb") as f:
            text.append(b"".join(f.readline() for _ in range(300)))
    except OSError:
        pass
for i, t in enumerate(text):
    put("ksyms", "text-%d" % i, b"\x01" + t)
syms = [(0xFFFFFFFF81000000, ord("T"), 0, b"_text"), (0xFFFFFFFF81000010, ord("t"), 0, b"start"),
        (0xFFFFFFFFC0001000, ord("t"), 1, b"mod_fn"), (0xFFFFFFFFC0001100, ord("W"), 2, b"w")]
put("ksyms", "payload-0", b"\x00" + payload(syms, [b"ext4", b"xfs"], bytes(range(20))))
put("ksyms", "payload-1", b"\x00" + payload(syms[:2], []))
put("ksyms", "payload-2", b"\x00" + payload([], [b"only"]))

raw = bytes(range(256)) * 8 + b"DWARF" * 50


def sec(stream, claim, typ=1):
    return struct.pack("<HQB", len(stream), claim, typ) + stream


z = zlib.compress(raw)
put("dwsec", "true", b"\x00" + sec(z, len(raw)) + sec(zlib.compress(b"abc" * 90), 270))
put("dwsec", "cache", b"\x01" + sec(z, len(raw)) + sec(zlib.compress(b"x" * 5000), 5000))
put("dwsec", "short", b"\x00" + sec(z, len(raw) - 1) + sec(z, len(raw) + 1))
put("dwsec", "tib", b"\x00" + sec(z, 1 << 40) + sec(z, len(z) * 1032 + 1))
put("dwsec", "zdebug", b"\x04" + sec(z, len(raw)) + sec(z, 1 << 40))
put("dwsec", "here", b"\x02" + sec(raw[:300], 0) + sec(raw[:1000], 1 << 8))
put("dwsec", "zstd", b"\x00" + sec(z, len(raw), 2))
