#!/usr/bin/env python3
"""inline_check.py - checks pfsym's inline frames and source lines against
binutils' addr2line (tests/inline.bats).

Usage: pfdump -p -j RESOLVED.pf | inline_check.py [--demangle] [--addr2line PROG] BINARY...

BINARY may be RECORDED=LOCAL: the frames of module RECORDED (its path in the
recording) are checked against the file LOCAL (a copy with its DWARF, when the
recorded one was stripped, or the file under a --symfs root; a path relative
to the current directory: binutils 2.40's addr2line cannot follow the
.gnu_debugaltlink of a dwz -m file named by its absolute path, "DWARF error:
unable to read alt ref"). --addr2line
names binutils' addr2line for another architecture
(aarch64-linux-gnu-addr2line), or another program with its options and output
(a script running llvm-symbolizer --output-style=GNU, for clang's DWARF 5);
eu-addr2line reads every architecture.

For every address of BINARY that a frame of the resolved profile names, the
chain of frames pfsym wrote for it (the real function, then each inlined
function by depth) must equal what `addr2line -a -i -f -e BINARY ADDR`
prints (read innermost first), name by name and file:line by file:line; the
real function's name may carry a GCC clone suffix (.constprop.0, ...) that
the DWARF name lacks, and is the symbol table's (for C++ its demangled
signature) where addr2line prints the DWARF's bare DW_AT_name ("round_trip"
for "round_trip(std::vector<...>&, unsigned int)"): binutils 2.40 does so for
a function whose DWARF has no linkage name (a static C++ function) at an
address inside an inline chain, until one of its addresses without inline
frames was asked earlier in the same run, so its answer depends on which
addresses were sampled (pfsym names every address of a function alike).
Also checks that chains never cross: an inline frame's
stack node is always under the node of the same address one depth less, and
the node under a frame that has deeper inline frames is that address's next
depth. Prints one line per fault and "checked N addresses, M inline frames";
exits 1 on any fault, or when no address of a BINARY was checked.

Where binutils' addr2line disagrees, elfutils' eu-addr2line (the issue's
second reference) is asked for that address: if it gives pfsym's chain, the
address passes and is listed as "settled" (only when eu-addr2line knows the
file of every frame and finds as many frames as binutils: an eu-addr2line
that finds no unit for the address settles nothing). binutils misnames some inlined
glibc functions: for atol() inlined from <stdlib.h> into a C++ main it
names the inlined frame "main" (eu-addr2line and llvm-symbolizer name it
"atol"). At most a tenth of the addresses (and 5) may be settled this way,
so that the check stays one against binutils.

Padding between functions: binutils' addr2line names an int3 padding byte
after a function (rustc's code: a return address past a call to a function
that does not return lands there) by the DWARF unit around it, where pfsym
and eu-addr2line say "??". Such an address passes, listed as "padding", only
when it is outside every sized function symbol of BINARY (readelf -s), its
byte in the file is 0xcc (int3), pfsym gives it one frame with no name, file
or line, and eu-addr2line names nothing there either; it is not counted as
settled, so whether a sample lands there cannot tip the check.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
from perfdiff import cxx_name  # noqa: E402

INLINE = 0x10


def parse_gnu(out, eu=False):
    """addr2line -a -i -f output -> {addr: [(name, file, line)], innermost first}"""
    theirs, cur = {}, None
    i = 0
    while i < len(out):
        if re.fullmatch(r"0x[0-9a-f]+", out[i]):
            cur = int(out[i], 16)
            theirs[cur] = []
            i += 1
            continue
        name, loc = out[i], out[i + 1] if i + 1 < len(out) else "??:0"
        if eu and " inlined at " in name:
            name = name.rsplit(" inlined at ", 1)[0]
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        if eu:
            loc = re.sub(r"(:\d+):\d+$", r"\1", loc)  # drop the column
        fn, _, line = loc.rpartition(":")
        theirs[cur].append((name, fn, int(line) if line.isdigit() else 0))
        i += 2
    return theirs


def bare_name(name):
    """a demangled signature's unqualified name: "void ns::f<int>(int) const" -> "f<int>"."""
    name, depth = cxx_name(name), 0
    for k in range(len(name) - 1, 0, -1):  # the last "::" outside <>
        if name[k] == ">":
            depth += 1
        elif name[k] == "<":
            depth -= 1
        elif depth == 0 and name[k - 1:k + 1] == "::":
            return name[k + 1:]
    return name


def same_chain(got, want):
    if len(got) != len(want):
        return False
    for d, (g, w) in enumerate(zip(got, want)):
        gname = g[0]
        if d == 0:  # a clone's suffix, as the symbol table or its demangling has it
            gname = re.sub(r"( \[clone [^\]]*\])+$", "", gname)
            gname = re.sub(r"\.(constprop|isra|part|cold|lto_priv)\.\d+.*$", "", gname)
        # line 0: no line known (addr2line then may still name the CU's file)
        same_loc = (g[1], g[2]) == (w[1], w[2]) or (g[2] == 0 and w[2] == 0)
        if d == 0 and gname != w[0] and "(" not in w[0] and "(" in gname:
            gname = bare_name(gname)  # addr2line's DW_AT_name (docstring)
        if gname != w[0] or not same_loc:
            return False
    return True


def main():
    args = sys.argv[1:]
    demangle = False
    a2l = "addr2line"
    while args and args[0] in ("--demangle", "--addr2line"):
        if args[0] == "--demangle":
            demangle = True
            args = args[1:]
        else:
            a2l = args[1]
            args = args[2:]
    bins = args
    strings, frames, stacks = {}, {}, {}
    for ln in sys.stdin:
        o = json.loads(ln)
        t = o.get("type")
        if t == "prof_string":
            strings[o["id"]] = o.get("text", "")
        elif t == "prof_frame":
            frames[o["id"]] = o
        elif t == "prof_stack":
            stacks[o["id"]] = o
    faults = []

    def fkey(f):
        return (f.get("dso"), f.get("file_off"))

    def depth(f):
        return f.get("inline_depth", 0)

    # chains per address: depth -> frame
    chains = {}
    for f in frames.values():
        if "dso" not in f or "addr" not in f:
            continue
        chains.setdefault(fkey(f), {})[depth(f)] = f
    for key, ch in chains.items():
        if sorted(ch) != list(range(len(ch))):
            faults.append("%s %s: depths %s are not 0..n" % (key[0], key[1], sorted(ch)))

    # chains never cross
    for s in stacks.values():
        f = frames[s["frame"]]
        p = stacks.get(s.get("parent")) if s.get("parent") is not None else None
        pf = frames[p["frame"]] if p else None
        if "inline" in f.get("flags", ""):
            if not pf or fkey(pf) != fkey(f) or depth(pf) != depth(f) - 1:
                faults.append("stack %d: inline frame %s (depth %d) not under its caller at the same address"
                              % (s["id"], f.get("name"), depth(f)))
        if pf is not None and "dso" in pf and "addr" in pf:
            ch = chains.get(fkey(pf), {})
            if depth(pf) + 1 in ch and (fkey(f) != fkey(pf) or depth(f) != depth(pf) + 1):
                faults.append("stack %d: under %s (depth %d) comes %s, not its inline frame"
                              % (s["id"], pf.get("name"), depth(pf), f.get("name")))

    def func_ranges(path):
        """[(start, end)] of the sized FUNC symbols of path (readelf -sW)."""
        out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True, check=True).stdout
        r = []
        for ln in out.splitlines():
            x = ln.split()
            if len(x) >= 8 and x[3] == "FUNC" and x[6] != "UND":
                try:
                    v, n = int(x[1], 16), int(x[2], 0)
                except ValueError:
                    continue
                if n > 0:
                    r.append((v, v + n))
        return r

    def byte_at(path, addr):
        """The byte of path's file image at address addr (PT_LOAD), or None."""
        out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout
        for ln in out.splitlines():
            x = ln.split()
            if len(x) >= 6 and x[0] == "LOAD":
                off, va, fsz = int(x[1], 16), int(x[2], 16), int(x[4], 16)
                if va <= addr < va + fsz:
                    with open(path, "rb") as fh:
                        fh.seek(off + addr - va)
                        c = fh.read(1)
                    return c[0] if c else None
        return None

    n_addr = n_inl = 0
    for b in bins:
        rec, _, b = b.partition("=") if "=" in b else (b, "", b)
        mine = {}
        for key, ch in chains.items():
            dso = strings.get(ch[0]["dso"]) if isinstance(ch[0]["dso"], int) else ch[0]["dso"]
            if dso == rec:
                mine[int(ch[0]["addr"], 16)] = ch
        if not mine:
            faults.append("%s: no address resolved" % b)
            continue
        addrs = sorted(mine)
        cmd = [a2l, "-a", "-i", "-f", "-e", b] + (["-C"] if demangle else []) + ["0x%x" % a for a in addrs]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
        theirs = parse_gnu(out)
        settled = []
        ranges = None
        for a in addrs:
            ch = mine[a]
            want = list(reversed(theirs.get(a, [])))  # outermost first
            got = []
            for d in range(len(ch)):
                f = ch[d]
                nm = f.get("name")
                nm = strings.get(nm, nm) if isinstance(nm, int) else nm
                sf = f.get("src_file")
                sf = strings.get(sf, sf) if isinstance(sf, int) else sf
                got.append((nm or "??", sf or "??", f.get("line", 0)))
            n_addr += 1
            n_inl += len(ch) - 1
            if want and want[0][0] == "??" and want[0][1] == "??":
                want_cmp = []  # no DWARF for it: no lines, no inline frames
                if len(got) != 1 or got[0][1] != "??" or got[0][2] != 0:
                    faults.append("%s 0x%x: addr2line knows nothing, pfsym has %s" % (b, a, got))
                continue
            if same_chain(got, want):
                continue
            cmd = ["eu-addr2line", "-a", "-i", "-f", "-e", b] + (["-C"] if demangle else []) + ["0x%x" % a]
            # check=False: an eu-addr2line that finds nothing (exit 1) is a fault below
            eu = parse_gnu(subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.splitlines(), eu=True)
            eu_want = list(reversed(eu.get(a, [])))
            if got == [("??", "??", 0)] and all(f[0] == "??" for f in eu_want):
                if ranges is None:
                    ranges = func_ranges(b)
                if not any(lo <= a < hi for lo, hi in ranges) and byte_at(b, a) == 0xcc:
                    print("padding: %s 0x%x: int3 outside every function; addr2line %s, eu-addr2line and pfsym ??"
                          % (b, a, want))
                    continue
            # eu-addr2line settles a name, never a chain it cannot see: it
            # must know every frame's file and give binutils' depth
            if (eu_want and len(eu_want) == len(want) and all(f[1] != "??" for f in eu_want)
                    and same_chain(got, eu_want)):
                settled.append("%s 0x%x: addr2line %s, eu-addr2line and pfsym %s" % (b, a, want, got))
            else:
                faults.append("%s 0x%x: pfsym %s, addr2line %s, eu-addr2line %s" % (b, a, got, want, eu_want))
        for t in settled:
            print("settled: " + t[:2000])
        if len(settled) > max(5, len(addrs) // 10):
            faults.append("%s: %d of %d addresses settled by eu-addr2line, too many" % (b, len(settled), len(addrs)))
    for f in faults[:40]:
        print(f[:2000])
    print("checked %d addresses, %d inline frames, %d faults" % (n_addr, n_inl, len(faults)))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
