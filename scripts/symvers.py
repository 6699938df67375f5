#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write the Module.symvers of a kernel from its vmlinux.

usage: scripts/symvers.py VMLINUX > Module.symvers

A distribution kernel whose headers package is gone still ships its
vmlinuz: scripts/extract-vmlinux gives back an ELF vmlinux (without a symbol
table, with its sections), and its export tables hold all that modpost needs
to build a module against it:

  __ksymtab, __ksymtab_gpl   struct kernel_symbol { s32 value_offset,
                             name_offset, namespace_offset } (x86-64 has
                             PREL32 relocations: each offset is relative to
                             the field itself)
  __kcrctab, __kcrctab_gpl   u32 CRC of each symbol, the same index as in
                             the matching ksymtab (CONFIG_MODVERSIONS; a
                             kernel without it has none, and the CRCs are
                             written as 0, as its own Module.symvers has
                             them)
  __ksymtab_strings          the names and namespaces

Output lines are modpost's: CRC, symbol, "vmlinux", export kind, namespace,
separated by tabs.
"""
import struct
import sys


def sections(elf):
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        sys.exit("symvers: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
            for i in range(shnum)]
    names_off = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name_end = elf.index(b"\0", names_off + h[0])
        name = elf[names_off + h[0]:name_end].decode()
        out[name] = (h[3], h[4], h[5])  # addr, file offset, size
    return out


def cstring(elf, secs, addr):
    saddr, soff, ssize = secs["__ksymtab_strings"]
    if not saddr <= addr < saddr + ssize:
        sys.exit("symvers: a string outside __ksymtab_strings: is this vmlinux?")
    start = soff + addr - saddr
    return elf[start:elf.index(b"\0", start)].decode()


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1], "rb") as f:
        elf = f.read()
    secs = sections(elf)
    for need in ("__ksymtab", "__ksymtab_strings"):
        if need not in secs:
            sys.exit(f"symvers: no {need} section: not a vmlinux")
    crcs = "__kcrctab" in secs
    n = 0
    for suffix, kind in (("", "EXPORT_SYMBOL"), ("_gpl", "EXPORT_SYMBOL_GPL")):
        if "__ksymtab" + suffix not in secs:
            continue
        taddr, toff, tsize = secs["__ksymtab" + suffix]
        _, coff, csize = secs["__kcrctab" + suffix] if crcs else (0, 0, tsize // 3)
        if tsize % 12 or csize * 3 != tsize:
            sys.exit(f"symvers: __ksymtab{suffix} ({tsize} bytes) and "
                     f"__kcrctab{suffix} ({csize} bytes) do not match")
        for i in range(tsize // 12):
            _, name_rel, ns_rel = struct.unpack_from("<iii", elf, toff + 12 * i)
            entry = taddr + 12 * i
            name = cstring(elf, secs, entry + 4 + name_rel)
            ns = cstring(elf, secs, entry + 8 + ns_rel) if ns_rel else ""
            crc, = struct.unpack_from("<I", elf, coff + 4 * i) if crcs else (0,)
            print(f"0x{crc:08x}\t{name}\tvmlinux\t{kind}\t{ns}")
            n += 1
    if not n:
        sys.exit("symvers: no exported symbol found")


if __name__ == "__main__":
    main()
