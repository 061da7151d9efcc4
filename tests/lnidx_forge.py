#!/usr/bin/env python3
"""lnidx_forge.py XXH3 MODE FILE: changes one field of a pfsym line index
file (libpfsym/lnidx.c's layout) in place and writes its hash again with
XXH3 (build/tests/xxh3-64), so that only the loader's checks of counts and
offsets can reject it. MODE "rehash" changes nothing but the hash (the
control: such a file must still be used). Prints what it changed; exits 3
when FILE has nothing the mode could change (a CU without nodes, say)."""
import struct
import subprocess
import sys

HDR = struct.Struct("<8sIIQQQQQQ")  # magic order n_cus key[2] n_ar strs_size payload_size hash
CU = struct.Struct("<QQQQII")  # off at n_segs n_rows n_nodes comp_dir
NODE = struct.Struct("<IIIIII")  # name linkage call_file call_line parent depth
SEG = struct.Struct("<QQII")  # lo hi node pad
ROW = struct.Struct("<QIIII")  # addr file line end pad


def main():
    xxh, mode, path = sys.argv[1:4]
    b = bytearray(open(path, "rb").read())
    magic, order, n_cus, k0, k1, n_ar, strs_size, pay, _ = HDR.unpack_from(b, 0)
    assert magic == b"PFLNIDX1" and order == 0x01020304 and pay == len(b) - 64
    cu0 = 64 + 24 * n_ar
    cus = [list(CU.unpack_from(b, cu0 + 40 * i)) for i in range(n_cus)]

    def put_cu(i):
        CU.pack_into(b, cu0 + 40 * i, *cus[i])

    def patch(rec, at, field, value):
        """sets field number `field` of the struct.Struct rec at offset at"""
        v = list(rec.unpack_from(b, at))
        v[field] = value
        rec.pack_into(b, at, *v)

    def unit_at(pred):  # the first unit that pred accepts, and where its nodes start
        i = first(pred)
        return i, 64 + cus[i][1]

    def first(pred):
        for i, c in enumerate(cus):
            if pred(c):
                return i
        sys.exit(3)

    if mode == "rehash":
        pass
    elif mode == "n_ar-huge":
        struct.pack_into("<Q", b, 32, 1 << 60)
    elif mode == "strs-huge":
        struct.pack_into("<Q", b, 40, pay + 1)
    elif mode == "strs-unterminated":
        b[-1] = ord("x")
    elif mode == "cu-at-past-end":
        cus[0][1] = pay
        put_cu(0)
    elif mode == "cu-at-unaligned":
        cus[0][1] += 4
        put_cu(0)
    elif mode == "cu-nodes-huge":
        cus[0][4] = 0xFFFFFFFF
        put_cu(0)
    elif mode == "cu-rows-huge":
        cus[0][3] = 1 << 62
        put_cu(0)
    elif mode == "cu-order":
        if n_cus < 2:
            sys.exit(3)
        cus[1][0] = cus[0][0]
        put_cu(1)
    elif mode == "cu-dir-past-end":
        cus[0][5] = strs_size + 1
        put_cu(0)
    elif mode == "node-name-past-end":
        patch(NODE, unit_at(lambda c: c[4] > 0)[1], 0, strs_size + 5)
    elif mode == "node-parent-forward":
        patch(NODE, unit_at(lambda c: c[4] > 0)[1], 4, 0)  # node 0 inlined into itself: a cycle
    elif mode == "seg-node-past-end":
        i, at = unit_at(lambda c: c[2] > 0)
        patch(SEG, at + 24 * cus[i][4], 2, cus[i][4])
    elif mode == "row-file-past-end":
        i, at = unit_at(lambda c: c[3] > 0)
        patch(ROW, at + 24 * (cus[i][4] + cus[i][2]), 1, 0xFFFFFFFF)
    elif mode == "rows-unsorted":
        i, at = unit_at(lambda c: c[3] > 1)
        patch(ROW, at + 24 * (cus[i][4] + cus[i][2]), 0, 0xFFFFFFFFFFFFFFFF)
    else:
        sys.exit("lnidx_forge.py: unknown mode " + mode)
    h = subprocess.run([xxh], input=bytes(b[:56] + b[64:]), capture_output=True, check=True)
    struct.pack_into("<Q", b, 56, int(h.stdout, 16))
    open(path, "wb").write(b)
    print(mode)


main()
