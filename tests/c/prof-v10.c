/* prof-v10 IN.pf OUT.pf: writes IN again as a writer of the resolved profile
 * format 1.0 would have (format/profile.md 6.1): every FRAMES entry with flag
 * HAS_SYMOFF (0x80) cleared and its offset-36 field (sym_off) zeroed, every
 * other section as it is. Made from the spec's byte layout, not through
 * libpfile's frame codec, so that the test of a reader's fallback does not
 * depend on the writer it tests. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advanced.h"
#include "testutil.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: prof-v10 IN.pf OUT.pf\n");
		return 2;
	}
	pf_reader *r;
	if (pf_reader_open(&r, argv[1]) < 0) {
		fprintf(stderr, "prof-v10: %s: cannot open\n", argv[1]);
		return 1;
	}
	const struct pf_file_header *fh = pf_reader_header(r);
	int fd = tu_open_out(argv[2]);
	pf_writer *w = tu_writer_like(fd, fh); /* one section per input section */
	struct pf_section s;
	int rc;
	unsigned long cleared = 0;
	while ((rc = pf_reader_next(r, &s)) > 0) {
		uint8_t *d = malloc(s.size ? s.size : 1);
		if (!d)
			return 1;
		memcpy(d, s.data, s.size);
		if (s.type == PF_SEC_FRAMES && s.size >= 16) {
			uint32_t count = le32(d + 4), esize = le32(d + 8);
			for (uint32_t i = 0; i < count && 16 + (size_t)(i + 1) * esize <= s.size; i++) {
				uint8_t *e = d + 16 + (size_t)i * esize;
				cleared += (le32(e + 24) & 0x80u) != 0;
				put_le32(e + 24, le32(e + 24) & ~0x80u);
				put_le32(e + 36, 0);
			}
		}
		rc = s.type == PF_SEC_RECORDS ? pf_writer_records(w, d, s.size)
					      : pf_writer_section(w, s.type, s.flags, d, s.size);
		if (rc == 0 && s.type == PF_SEC_RECORDS)
			rc = pf_writer_flush(w);
		free(d);
		if (rc < 0) {
			fprintf(stderr, "prof-v10: %s: write failed\n", argv[2]);
			return 1;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "prof-v10: %s: %s\n", argv[1], pf_reader_errmsg(r));
		return 1;
	}
	pf_reader_close(r);
	if (pf_writer_close(w) < 0 || close(fd) < 0)
		return 1;
	printf("%lu\n", cleared);
	return 0;
}
