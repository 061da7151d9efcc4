/*
 * fuzz-seeds - seeds for the transform fuzz target (tests/fuzz/fuzz_transform.c)
 * from a .pf file: its EVENT payloads and, per RECORDS section, either the
 * transformed payload as stored (decompressed) or the restored records.
 *
 * Usage: fuzz-seeds decode|roundtrip IN.pf OUTDIR [MAX_BYTES]
 *   decode     one seed per transformed RECORDS section: opts 0, the events,
 *              u32 LE raw size, the transformed payload
 *   roundtrip  one seed per RECORDS section: opts 1, the events, its records
 *              (whole records, cut to MAX_BYTES, default 65536)
 * Seeds go to OUTDIR/MODE-NAME-N where NAME is IN's base name. Prints the count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "advanced.h"
#include "testutil.h"

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5 || (strcmp(argv[1], "decode") && strcmp(argv[1], "roundtrip"))) {
		fprintf(stderr, "Usage: fuzz-seeds decode|roundtrip IN.pf OUTDIR [MAX_BYTES]\n");
		return 2;
	}
	int decode = !strcmp(argv[1], "decode");
	size_t max = argc == 5 ? strtoul(argv[4], NULL, 0) : 65536;
	const char *base = strrchr(argv[2], '/');
	base = base ? base + 1 : argv[2];
	pf_reader *r;
	if (pf_reader_open(&r, argv[2]) < 0)
		tu_die(pf_reader_errmsg(r));
	struct pf_buf evs = { 0 };
	unsigned n_ev = 0, seeds = 0;
	struct pf_section s;
	while (tu_next_section(r, &s, 0)) {
		if (s.type == PF_SEC_EVENT && n_ev < 255 && s.size <= 0xffff) {
			uint8_t l[2];
			pf_put_le16(l, (uint16_t)s.size);
			tu_put(&evs, l, 2);
			tu_put(&evs, s.data, s.size);
			n_ev++;
			continue;
		}
		if (s.type != PF_SEC_RECORDS || (decode && s.transform != PF_TRANSFORM_COLUMNS))
			continue;
		if (decode && s.compression == PF_COMP_NONE && s.stored_size > max)
			continue;
		struct pf_buf out = { 0 };
		uint8_t head[2] = { decode ? 0 : 1, (uint8_t)n_ev };
		tu_put(&out, head, 2);
		tu_put(&out, evs.data, evs.len);
		if (decode) {
			const uint8_t *st = pf_reader_stored(r);
			uint8_t *t = NULL;
			size_t tn = s.stored_size;
			if (s.compression == PF_COMP_ZSTD) {
				unsigned long long fcs = ZSTD_getFrameContentSize(st, s.stored_size);
				if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs == ZSTD_CONTENTSIZE_UNKNOWN || fcs > max) {
					pf_buf_free(&out);
					continue;
				}
				t = malloc(fcs ? fcs : 1);
				if (!t)
					tu_die("out of memory");
				tn = ZSTD_decompress(t, fcs, st, s.stored_size);
				if (ZSTD_isError(tn))
					tu_die("zstd frame does not decode");
			}
			uint8_t rs[4];
			pf_put_le32(rs, s.raw_size);
			tu_put(&out, rs, 4);
			tu_put(&out, t ? t : st, tn);
			free(t);
		} else {
			/* whole records up to max bytes */
			struct pf_rec_iter it;
			const struct perf_event_header *h;
			size_t keep = 0;
			pf_rec_iter_init(&it, s.data, s.size);
			while (pf_rec_iter_next(&it, &h) > 0 && it.offset <= max)
				keep = it.offset;
			tu_put(&out, s.data, keep);
		}
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s-%s-%u", argv[3], argv[1], base, seeds);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, out.data, out.len) != (ssize_t)out.len)
			tu_die("cannot write a seed");
		close(fd);
		pf_buf_free(&out);
		seeds++;
	}
	pf_reader_close(r);
	pf_buf_free(&evs);
	printf("%u\n", seeds);
	return 0;
}
