#!/usr/bin/env python3
"""chdr_forge.py ELF SECTION SIZE: sets the inflated size that the compressed
section SECTION (SHF_COMPRESSED, ELF64 little endian) of ELF claims in its
Elf64_Chdr (ch_size, 8 bytes at offset 8) to SIZE, in place: a file that lies
about what its zlib stream holds (tests/bounds.bats). Prints the section's
compressed size (bytes after the header). Written from the ELF gABI."""
import struct
import sys

path, name, size = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3], 0)
with open(path, "r+b") as f:
    elf = f.read()
    assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1, "not ELF64 LE"
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)

    def shdr(i):
        return struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)

    strtab_off = shdr(shstrndx)[4]
    for i in range(shnum):
        sh_name, _, flags, _, off, sz = shdr(i)[:6]
        end = elf.index(b"\0", strtab_off + sh_name)
        if elf[strtab_off + sh_name:end] != name:
            continue
        assert flags & 0x800, "not SHF_COMPRESSED"
        f.seek(off + 8)
        f.write(struct.pack("<Q", size))
        print(sz - 24)
        sys.exit(0)
sys.exit("no section " + name.decode())
