/*
 * fuzz_perfdata - pfimport's perf.data reader (tools/pfimport/perfdata.c:
 * file and pipe mode, both byte orders, attrs and ids, the feature table and
 * every feature pfimport reads, COMPRESSED/COMPRESSED2 zstd streams, perf's
 * own records) and the conversion pf_import() (tools/pfimport/import.c:
 * META, EVENT, RECORDS, BUILDID and END through libpfile's writer).
 *
 * Input: one option byte, then a perf.data file. Options: bit 0 hand the
 * file over as a pipe instead of a seekable file (a file-mode file is then
 * spooled to a temporary file, as `cat perf.data | pfimport -` is); bit 1
 * read every feature (0), else pfimport's set (PF_IMPORT_FEATURES); bit 2
 * no transform of the RECORDS sections; bit 3 sections of 64 KiB of records
 * (the writer's smallest: more RECORDS sections for the larger inputs).
 * Invariants: an error comes with a one-line message; what pf_import()
 * wrote is a .pf file that libpfile reads back without any fault; its
 * RECORDS sections hold exactly the records pf_import() says it wrote, of
 * which the samples are st.samples; END is there if and only if the import
 * says it was complete; the reader's byte count never passes the input's.
 */
#include <errno.h>
#include <fcntl.h>

#include "fuzz.h"
#include "perfdata.h"

static void no_notice(void *arg, const char *msg)
{
	(void)arg;
	FUZZ_ASSERT(msg && *msg && !strchr(msg, '\n'));
}

/* A pipe holding data[0..size) with its write end closed, or -1. */
static int fuzz_pipe(const uint8_t *data, size_t size)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	if (size > 65536 && fcntl(p[1], F_SETPIPE_SZ, (int)size) < (int)size) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(p[1], data + off, size - off);
		if (w <= 0) {
			close(p[0]);
			close(p[1]);
			return -1;
		}
		off += (size_t)w;
	}
	close(p[1]);
	return p[0];
}

/* Reads the .pf in `fd` back: no fault anywhere; counts its records,
 * samples and END sections. */
static void check_output(int fd, const struct pf_import_stats *st)
{
	FUZZ_ASSERT(lseek(fd, 0, SEEK_SET) == 0);
	pf_reader *r;
	int rc = pf_reader_open_fd(&r, fd, "out");
	FUZZ_ASSERT(rc == 0);
	struct pf_section s;
	uint64_t recs = 0, samples = 0, ends = 0;
	uint8_t *mine = NULL;
	size_t mine_cap = 0;
	while ((rc = pf_reader_next(r, &s)) > 0) {
		if (s.type == PF_SEC_END)
			ends++;
		if (s.type != PF_SEC_RECORDS)
			continue;
		const uint8_t *d = s.data;
		if (pf_reader_needs_swap(r)) {
			FUZZ_ASSERT(pf_reader_swap_data(r, &mine, &mine_cap) == 0);
			d = mine;
		}
		struct pf_rec_iter it;
		const struct perf_event_header *h;
		pf_rec_iter_init(&it, d, s.size);
		while ((rc = pf_rec_iter_next(&it, &h)) > 0) {
			recs++;
			samples += h->type == PERF_RECORD_SAMPLE;
		}
		FUZZ_ASSERT(rc == 0 && it.offset == s.size);
	}
	if (rc < 0)
		fprintf(stderr, "fuzz_perfdata: output: %s\n", pf_reader_errmsg(r));
	FUZZ_ASSERT(rc == 0);
	FUZZ_ASSERT(recs == st->records && samples == st->samples);
	FUZZ_ASSERT(ends == st->complete);
	free(mine);
	pf_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t opts = data[0];
	data++;
	size--;
	int in = (opts & 1) ? fuzz_pipe(data, size) : fuzz_memfd(data, size);
	if (in < 0)
		return 0;
	struct pf_perfdata_opts po = PF_PERFDATA_OPTS_INIT;
	po.features = (opts & 2) ? 0 : PF_IMPORT_FEATURES;
	po.notice = no_notice;
	pf_perfdata *pd;
	int rc = pf_perfdata_open_fd(&pd, in, "fuzz", &po);
	if (rc < 0) {
		FUZZ_ASSERT(rc == -ENOMEM || *pf_perfdata_errmsg(pd));
		pf_perfdata_close(pd);
		close(in);
		return 0;
	}
	int out = memfd_create("fuzz-out", MFD_CLOEXEC);
	FUZZ_ASSERT(out >= 0);
	struct pf_import_opts io = PF_IMPORT_OPTS_INIT;
	io.zstd_level = 1;
	io.transform = (opts & 4) ? PF_TRANSFORM_NONE : PF_TRANSFORM_COLUMNS;
	io.records_frame_bytes = (opts & 8) ? 65536 : 0;
	io.tool_version = "fuzz";
	io.notice = no_notice;
	struct pf_import_stats st;
	char msg[600];
	msg[0] = 0;
	rc = pf_import(pd, out, &io, &st, msg, sizeof msg);
	FUZZ_ASSERT(st.output_error == 0);
	if (rc < 0)
		FUZZ_ASSERT(rc == -ENOMEM || (msg[0] && !strchr(msg, '\n')));
	if (rc != -ENOMEM)
		check_output(out, &st);
	FUZZ_ASSERT(rc == 0 || !st.complete);
	FUZZ_ASSERT(st.samples <= st.records);
	if (!(opts & 1))
		FUZZ_ASSERT(pf_perfdata_bytes_read(pd) <= size);
	pf_perfdata_close(pd);
	close(out);
	close(in);
	return 0;
}
