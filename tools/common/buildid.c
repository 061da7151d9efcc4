/*
 * tools/common/buildid.c - the GNU build-id note of an ELF file or memory
 * image (buildid.h): the one reader, for pfrec (the files it sees mapped,
 * the vDSO) and pfsym (the candidates it checks against a recorded id).
 *
 * Plain reads with bounds checks, no libelf (pfrec stays small and static).
 * Layouts: the System V gABI (ELF header, program and section headers,
 * note entries: namesz, descsz, type, name padded to 4, desc padded to 4;
 * 8-byte aligned notes when the segment's alignment is 8).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>

#include "buildid.h"

#define NOTE_MAX_BYTES (64u << 10) /* never read more than this per note area */
#define MAX_HEADERS 4096

struct src {
	int fd;               /* >= 0: a file */
	const uint8_t *mem;   /* else a memory image */
	size_t mem_size;
};

/* Reads exactly n bytes at off, or fails. @return 0, -EIO (short), -errno. */
static int src_read(const struct src *s, void *buf, size_t n, uint64_t off)
{
	if (s->fd < 0) {
		if (off > s->mem_size || n > s->mem_size - off)
			return -EIO;
		memcpy(buf, s->mem + off, n);
		return 0;
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(s->fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		got += (size_t)r;
	}
	return 0;
}

struct elfinfo {
	int is64, swap;
};

static uint16_t g16(const struct elfinfo *e, const uint8_t *p)
{
	return e->swap ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t g32(const struct elfinfo *e, const uint8_t *p)
{
	if (e->swap)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t g64(const struct elfinfo *e, const uint8_t *p)
{
	uint64_t lo = g32(e, p), hi = g32(e, p + 4);
	return e->swap ? (lo << 32 | hi) : (hi << 32 | lo);
}

/* A word of the file's class at p: 8 bytes in ELFCLASS64, else 4. */
static uint64_t gword(const struct elfinfo *e, const uint8_t *p)
{
	return e->is64 ? g64(e, p) : g32(e, p);
}

/* Finds the GNU build-id note in a note area of `size` bytes. @return its
 * size (1..64) or 0. */
static int find_note(const struct elfinfo *e, const uint8_t *buf, uint64_t size, uint64_t align, uint8_t out[64])
{
	uint64_t a = align == 8 ? 8 : 4;
	uint64_t p = 0;
	while (p + 12 <= size) {
		uint32_t namesz = g32(e, buf + p), descsz = g32(e, buf + p + 4), type = g32(e, buf + p + 8);
		uint64_t name_off = p + 12;
		uint64_t desc_off = name_off + (((uint64_t)namesz + a - 1) & ~(a - 1));
		uint64_t next = desc_off + (((uint64_t)descsz + a - 1) & ~(a - 1));
		if (desc_off > size || descsz > size - desc_off)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(buf + name_off, "GNU", 4) == 0 &&
		    descsz > 0 && descsz <= 64) {
			memcpy(out, buf + desc_off, descsz);
			return (int)descsz;
		}
		if (next <= p)
			return 0;
		p = next;
	}
	return 0;
}

/* Scans a note area of `size` bytes at `off`. @return id size, 0, or -errno. */
static int scan_notes(const struct src *s, const struct elfinfo *e, uint64_t off, uint64_t size,
		      uint64_t align, uint8_t out[64])
{
	if (size > NOTE_MAX_BYTES)
		size = NOTE_MAX_BYTES;
	if (size < 12)
		return 0;
	uint8_t *buf = malloc((size_t)size); /* pfsym reads from two threads */
	if (!buf)
		return -ENOMEM;
	int rc = src_read(s, buf, (size_t)size, off);
	if (rc < 0) {
		free(buf);
		return rc == -EIO ? 0 : rc;
	}
	rc = find_note(e, buf, size, align, out);
	free(buf);
	return rc;
}

/* Where an entry of an ELF header table says that it is a note area and
 * where the area is (gABI: section header, program header), in ELFCLASS32
 * [0] and ELFCLASS64 [1] files. */
struct note_fields {
	uint32_t note_type;               /* SHT_NOTE or PT_NOTE */
	unsigned need[2];                 /* the bytes of an entry read */
	unsigned type[2], off[2], size[2], align[2]; /* field offsets; off, size, align are 64-bit in ELFCLASS64 */
};
static const struct note_fields sh_notes = { SHT_NOTE, { 40, 64 }, { 4, 4 }, { 16, 24 }, { 20, 32 }, { 32, 48 } };
static const struct note_fields ph_notes = { PT_NOTE, { 32, 56 }, { 0, 0 }, { 4, 8 }, { 16, 32 }, { 28, 48 } };

/* Scans the note areas that the header table at `tab` (num entries of
 * entsize bytes) names. @return 0 (no build-id), or scan_notes()'s. */
static int scan_table(const struct src *s, const struct elfinfo *e, const struct note_fields *f, uint64_t tab,
		      unsigned entsize, unsigned num, uint8_t out[64])
{
	int c = e->is64 ? 1 : 0;
	if (!tab || entsize < f->need[c] || !num || num >= MAX_HEADERS)
		return 0;
	for (unsigned i = 0; i < num; i++) {
		uint8_t ent[64];
		if (src_read(s, ent, f->need[c], tab + (uint64_t)i * entsize) < 0)
			break;
		if (g32(e, ent + f->type[c]) != f->note_type)
			continue;
		uint64_t off = gword(e, ent + f->off[c]);
		uint64_t sz = gword(e, ent + f->size[c]);
		uint64_t al = gword(e, ent + f->align[c]);
		int rc = scan_notes(s, e, off, sz, al, out);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int build_id(const struct src *s, uint8_t out[64])
{
	uint8_t eh[64];
	int rc = src_read(s, eh, 52, 0);
	if (rc < 0)
		return rc == -EIO ? 0 : rc;
	if (memcmp(eh, ELFMAG, SELFMAG) != 0)
		return 0;
	struct elfinfo e = {0};
	if (eh[EI_CLASS] == ELFCLASS64)
		e.is64 = 1;
	else if (eh[EI_CLASS] != ELFCLASS32)
		return 0;
	int little = 1;
	little = *(unsigned char *)&little;
	if (eh[EI_DATA] == ELFDATA2LSB)
		e.swap = !little;
	else if (eh[EI_DATA] == ELFDATA2MSB)
		e.swap = little;
	else
		return 0;
	if (e.is64 && (rc = src_read(s, eh, 64, 0)) < 0)
		return rc == -EIO ? 0 : rc;

	/* e_phoff, e_shoff (words), e_phentsize, e_phnum, e_shentsize, e_shnum
	 * (16 bits): their offsets in the ELF header, ELFCLASS32 and ELFCLASS64 */
	static const unsigned char hdr[2][6] = { { 28, 32, 42, 44, 46, 48 }, { 32, 40, 54, 56, 58, 60 } };
	const unsigned char *h = hdr[e.is64 ? 1 : 0];
	uint64_t phoff = gword(&e, eh + h[0]), shoff = gword(&e, eh + h[1]);
	unsigned phentsize = g16(&e, eh + h[2]), phnum = g16(&e, eh + h[3]);
	unsigned shentsize = g16(&e, eh + h[4]), shnum = g16(&e, eh + h[5]);

	/* Section headers first, in a file: SHT_NOTE sections describe the file
	 * as it is (a separate debug file keeps its program headers from the
	 * binary, whose offsets need not hold the notes there). */
	if (s->fd >= 0 && (rc = scan_table(s, &e, &sh_notes, shoff, shentsize, shnum, out)) != 0)
		return rc;
	/* Program headers: PT_NOTE segments (all a loaded image has). */
	if ((rc = scan_table(s, &e, &ph_notes, phoff, phentsize, phnum, out)) != 0)
		return rc;
	return 0;
}

int pf_build_id_fd(int fd, uint8_t out[64])
{
	struct src s = {.fd = fd};
	return build_id(&s, out);
}

int pf_build_id_mem(const void *image, size_t size, uint8_t out[64])
{
	struct src s = {.fd = -1, .mem = image, .mem_size = size};
	return build_id(&s, out);
}
