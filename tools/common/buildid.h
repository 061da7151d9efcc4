/*
 * tools/common/buildid.h - the GNU build-id note (NT_GNU_BUILD_ID, name
 * "GNU") of an ELF file or memory image, read without libelf (not
 * installed). Layouts: the System V gABI (ELF header, program and section
 * headers, note entries).
 */
#ifndef PF_TOOLS_BUILDID_H
#define PF_TOOLS_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/* Reads the build-id of the ELF file open at `fd` (read with pread(2), the
 * offset is not moved): SHT_NOTE sections first, then PT_NOTE segments; the
 * first note of the GNU build-id type with 1 to 64 bytes of id counts.
 * @return the id's size in bytes (1..64) with out[0..size) filled, 0 when
 * there is none or the file is not ELF, or a negative errno (the file cannot
 * be read; -ENOMEM). */
int pf_build_id_fd(int fd, uint8_t out[64]);

/* The same over an ELF image of `size` bytes in memory (e.g. the vDSO):
 * PT_NOTE segments only, as a loaded image has no section contents. */
int pf_build_id_mem(const void *image, size_t size, uint8_t out[64]);

#endif
