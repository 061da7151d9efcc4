/*
 * fuzz.h - helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * The targets link libpfile built with clang's -fsanitize=fuzzer-no-link,
 * address,undefined (make fuzz-build, build-fuzz/). Each defines
 * LLVMFuzzerTestOneInput(); inputs that a target refuses are not errors, a
 * sanitizer report, an abort() (a broken invariant) or a leak is.
 */
#ifndef PF_FUZZ_H
#define PF_FUZZ_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "advanced.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Removes the files of folder `dir` (not its subfolders) and the folder;
 * "" is a no-op. For the folders a target makes under /tmp, at exit. */
static inline void fuzz_remove_dir(const char *dir)
{
	DIR *d = dir[0] ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			(void)unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	if (dir[0])
		(void)rmdir(dir);
}

/* A finding that is not a sanitizer report: say what, then abort(). */
#define FUZZ_ASSERT(c)                                                                       \
	do {                                                                                 \
		if (!(c)) {                                                                  \
			fprintf(stderr, "fuzz: %s:%d: invariant broken: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                             \
		}                                                                            \
	} while (0)

/* Reads every byte of [p, p+n): a pointer a decoder hands out must cover
 * memory that is there (ASan reports it otherwise). */
static volatile uint8_t fuzz_sink;
static inline void fuzz_touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t x = 0;
	for (size_t i = 0; i < n; i++)
		x ^= b[i];
	fuzz_sink ^= x;
}

/* Writes data[0..size) to fd whole. @return 0, or -1. */
static inline int fuzz_write_all(int fd, const uint8_t *data, size_t size)
{
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* An in-memory file holding data[0..size), positioned at 0; -1 on failure. */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fuzz_write_all(fd, data, size) < 0) {
		close(fd);
		return -1;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Recomputes the checksums of a .pf image in place (file header, then each
 * section header and payload while the sections chain up), so that mutated
 * payloads reach the decoders instead of stopping at the checksum. */
static inline void fuzz_fix_checksums(uint8_t *d, size_t n)
{
	if (n < PF_FILE_HEADER_SIZE || memcmp(d, PF_MAGIC, PF_MAGIC_SIZE) != 0)
		return;
	size_t hs = pf_le16(d + 12);
	if (hs < PF_FILE_HEADER_SIZE || hs > 4096 || hs > n)
		return;
	pf_put_le64(d + hs - 8, pf_xxh3(d, hs - 8));
	size_t off = hs;
	while (n - off >= PF_SECTION_HEADER_SIZE) {
		uint8_t *h = d + off;
		if (pf_le32(h) != PF_SECTION_SYNC)
			return;
		size_t stored = pf_le32(h + 8);
		if (stored > n - off - PF_SECTION_HEADER_SIZE)
			return;
		pf_put_le64(h + 16, pf_xxh3(h + PF_SECTION_HEADER_SIZE, stored));
		pf_put_le32(h + 28, (uint32_t)pf_xxh3(h, 28));
		off += PF_SECTION_HEADER_SIZE + stored;
	}
}

/* The input after its first byte (the target's option bits), copied, with
 * the checksums fixed when bit 0 of that byte is set. NULL if size is 0.
 * free() it. */
static inline uint8_t *fuzz_file_image(const uint8_t *data, size_t size, size_t *n, uint8_t *opts)
{
	if (size < 1)
		return NULL;
	*opts = data[0];
	*n = size - 1;
	uint8_t *d = malloc(*n ? *n : 1);
	if (!d)
		return NULL;
	memcpy(d, data + 1, *n);
	if (*opts & 1)
		fuzz_fix_checksums(d, *n);
	return d;
}

/* The body of a target that reads the input as a .pf file: runs RUN on the
 * input as an open in-memory file (fuzz_file_image(), then fuzz_memfd()) of
 * n bytes with the option byte, then closes it; nothing when there is none.
 * Returns 0, LLVMFuzzerTestOneInput()'s value. */
static inline int fuzz_run_image(const uint8_t *data, size_t size, void (*run)(int fd, size_t n, uint8_t opts))
{
	uint8_t opts;
	size_t n;
	uint8_t *img = fuzz_file_image(data, size, &n, &opts);
	if (!img)
		return 0;
	int fd = fuzz_memfd(img, n);
	free(img);
	if (fd < 0)
		return 0;
	run(fd, n, opts);
	close(fd);
	return 0;
}

#endif
