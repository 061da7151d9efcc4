/*
 * pftest-writer - writes synthetic .pf files through the libpfile writer, for
 * the tests of libpfile and pfdump, and checks them back.
 *
 * Usage: pftest-writer [OPTIONS] MODE [ARGS...]
 *   all OUT            META, THREADS, MAPS, BUILDID, DSO_IMAGE, three EVENTs,
 *                      every PERF_RECORD_* type and every sample_type bit, an
 *                      unknown section, END
 *   many N OUT         N cpu-clock samples with 8-frame callchains (benchmark)
 *   badrec-zero OUT    as `all`, then a RECORDS section whose 3rd record has size 0
 *   badrec-huge OUT    the same with a size running past the section
 *   verify FILE        reads FILE back (a file from `all`), decodes every
 *                      record and checks each value against what `all` wrote
 *   layout FILE        prints "INDEX TYPE OFFSET STORED RAW" per section header
 *   flip FILE OFF BIT  flips one bit of FILE in place
 *   setu32 FILE OFF V  writes a little-endian u32 at OFF and, if OFF falls in a
 *                      section header, fixes that header's checksum (give the
 *                      header's offset with --sec OFF)
 *   recode IN OUT      reads IN and writes every intact section again through
 *                      the writer (host byte order; --transform, --level,
 *                      --frame apply; RECORDS go through pf_writer_records,
 *                      each input RECORDS section flushed on its own, so the
 *                      output keeps its boundaries and splits only sections
 *                      larger than --frame)
 *   ksyms-damage HOW IN OUT
 *                      as recode, with the KSYMS payload damaged under a
 *                      valid checksum: HOW "cut" keeps its first 60%, "count"
 *                      sets n_symbols to 0xffffffff, "names" turns every NUL
 *                      of its last 64 bytes into 'x' (the names run past it)
 *   ksyms-late IN OUT  as recode, with the KSYMS section moved to the end,
 *                      after every RECORDS section, before END (an earlier
 *                      pfrec on a loaded machine: bench/ksyms-late.sh)
 *   ksyms-drop IN OUT  as recode, without the KSYMS section and META's
 *                      ksyms key (the same recording without kernel names)
 *   rawcmp A B         compares the sections of two files as the reader hands
 *                      them out (type and restored bytes): prints
 *                      "N sections identical" or the first difference (exit 1)
 *   tx-hostile OUT     as `all` with --transform, then RECORDS sections with
 *                      transform 1 whose payloads are mutated or garbage under
 *                      a valid checksum, one with an unknown transform (7),
 *                      then an intact transformed section and END
 *   events-grow raw|resolved N OUT
 *                      N EVENT sections, the 2nd to Nth written after samples
 *                      of the first (raw records, or a resolved profile),
 *                      then a sample of the last event (see mode_events_grow)
 *   marker-word OUT    a user chain holding a word equal to PERF_CONTEXT_KERNEL
 *                      (see mode_marker_word), and a kernel sample
 *   deep N M LIMIT OUT two samples with call chains of N and M entries, META
 *                      perf_event_max_stack LIMIT (0: absent; see mode_deep)
 *   syminfo FILE       prints KEY=VALUE for each pair of the SYMINFO sections
 *   tx-fuzz N          decodes N mutations of a transformed payload in memory:
 *                      each must fail cleanly or restore the original bytes,
 *                      and the decoder's fast path must give the same result,
 *                      reason and bytes as the generic one (PF_TX_SLOW=1)
 * Options:
 *   --big-endian       kernel data in big-endian order (header byte order 2)
 *   --no-end           do not write the END section
 *   --level N          zstd level (-1 = store)
 *   --frame BYTES      raw bytes per RECORDS section (>= 65536)
 *   --filler N         add N extra samples to `all` (several RECORDS frames)
 *   --sec OFF          section header offset for setu32
 *   --transform        RECORDS stored with transform 1 (format/pfile.md 3.6)
 *   --next             --transform, and a section written before the batch
 *                      is full continues the one before (transform 2, 3.6.7)
 *   --flush BYTES      `all`: write the RECORDS batch whenever BYTES of
 *                      records went in since the last write (small sections)
 * OUT may be "-" for standard output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftest-writer/pftest-writer.h"

/* The modes are in tests/c/pftest-writer/ (see pftest-writer.h). */

int big_endian;
int no_end;
int level;
uint32_t frame_bytes;
uint64_t filler;
long long sec_off = -1;
int transform; /* 1, or 2 with --next */
uint64_t flush_bytes;
const char *ksyms_damage; /* ksyms-damage HOW, for mode_recode */
int ksyms_late;           /* ksyms-late 1, ksyms-drop 2, for mode_recode */
int strip_inode;          /* strip-inode: mode_recode drops BUILDID entries flagged INODE */

static void usage(void)
{
	fprintf(stderr, "Usage: pftest-writer [--big-endian] [--no-end] [--level N] [--frame BYTES] [--filler N]\n"
			"                     [--transform] [--next] [--flush BYTES]\n"
			"                     all|many N|badrec-zero|badrec-huge|verify|layout|flip|setu32|\n"
			"                     recode|ksyms-late|ksyms-drop|strip-inode|rawcmp|tx-hostile|tx-fuzz|events-grow|marker-word|deep|syminfo ...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--big-endian"))
			big_endian = 1;
		else if (!strcmp(argv[i], "--no-end"))
			no_end = 1;
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--frame") && i + 1 < argc)
			frame_bytes = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--filler") && i + 1 < argc)
			filler = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--sec") && i + 1 < argc)
			sec_off = strtoll(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--transform"))
			transform = transform ? transform : 1;
		else if (!strcmp(argv[i], "--next"))
			transform = 2;
		else if (!strcmp(argv[i], "--flush") && i + 1 < argc)
			flush_bytes = strtoull(argv[++i], NULL, 0);
		else
			usage();
	}
	if (i >= argc)
		usage();
	const char *mode = argv[i++];
	int left = argc - i;
	setup_events();
	if (!strcmp(mode, "all") && left == 1)
		return mode_all(argv[i], 0);
	if (!strcmp(mode, "badrec-zero") && left == 1)
		return mode_all(argv[i], 1);
	if (!strcmp(mode, "badrec-huge") && left == 1)
		return mode_all(argv[i], 2);
	if (!strcmp(mode, "many") && left == 2)
		return mode_many(strtoull(argv[i], NULL, 0), argv[i + 1]);
	if (!strcmp(mode, "verify") && left == 1)
		return mode_verify(argv[i]);
	if (!strcmp(mode, "layout") && left == 1)
		return mode_layout(argv[i]);
	if (!strcmp(mode, "flip") && left == 3)
		return mode_flip(argv[i], strtoll(argv[i + 1], NULL, 0), atoi(argv[i + 2]));
	if (!strcmp(mode, "recode") && left == 2)
		return mode_recode(argv[i], argv[i + 1]);
	if (!strcmp(mode, "ksyms-damage") && left == 3) {
		ksyms_damage = argv[i];
		return mode_recode(argv[i + 1], argv[i + 2]);
	}
	if (!strcmp(mode, "ksyms-late") && left == 2) {
		ksyms_late = 1;
		return mode_recode(argv[i], argv[i + 1]);
	}
	if (!strcmp(mode, "ksyms-drop") && left == 2) {
		ksyms_late = 2;
		return mode_recode(argv[i], argv[i + 1]);
	}
	if (!strcmp(mode, "strip-inode") && left == 2) {
		strip_inode = 1;
		return mode_recode(argv[i], argv[i + 1]);
	}
	if (!strcmp(mode, "rawcmp") && left == 2)
		return mode_rawcmp(argv[i], argv[i + 1]);
	if (!strcmp(mode, "tx-hostile") && left == 1)
		return mode_tx_hostile(argv[i]);
	if (!strcmp(mode, "tx-fuzz") && left == 1)
		return mode_tx_fuzz(strtoull(argv[i], NULL, 0));
	if (!strcmp(mode, "syminfo") && left == 1)
		return mode_syminfo(argv[i]);
	if (!strcmp(mode, "marker-word") && left == 1)
		return mode_marker_word(argv[i]);
	if (!strcmp(mode, "deep") && left == 4)
		return mode_deep((unsigned)strtoul(argv[i], NULL, 0), (unsigned)strtoul(argv[i + 1], NULL, 0),
				 (unsigned)strtoul(argv[i + 2], NULL, 0), argv[i + 3]);
	if (!strcmp(mode, "events-grow") && left == 3)
		return mode_events_grow(argv[i], (unsigned)strtoul(argv[i + 1], NULL, 0), argv[i + 2]);
	if (!strcmp(mode, "setu32") && left == 3)
		return mode_setu32(argv[i], strtoll(argv[i + 1], NULL, 0), (uint32_t)strtoul(argv[i + 2], NULL, 0));
	usage();
	return 2;
}
