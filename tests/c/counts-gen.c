/*
 * counts-gen - writes a small .pf file whose EVENT and COUNTS sections
 * (format/pfile.md 4.2, 4.2.1, 4.9) are given on the command line, for the
 * tests of pfdump's counts and ratios (tests/events.bats): this machine has
 * no hardware PMU, so counts of cycles or cache misses are made up here,
 * with known values.
 *
 * Usage: counts-gen OUT ITEM...
 *   ev:TYPE:CONFIG:NAME[:SPEC[:PMU[:EXCLUDE]]]
 *                an EVENT section: attr.type TYPE, attr.config CONFIG
 *                (decimal or 0x hex), name NAME, the description keys spec
 *                and pmu (default: NAME and "hardware"); EXCLUDE holds u, k,
 *                h for exclude_user, exclude_kernel, exclude_hv
 *   KEY=VALUE    a pair of the COUNTS section (written after the events,
 *                in the order given)
 * Then an END section.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "pfile.h"

static void die(const char *what)
{
	fprintf(stderr, "counts-gen: %s\n", what);
	exit(1);
}

static void sec(pf_writer *w, uint16_t type, const struct pf_buf *b)
{
	if (pf_writer_section(w, type, 0, b->data, b->len) < 0)
		die("pf_writer_section failed");
}

static void event(pf_writer *w, char *item, uint64_t id)
{
	char *f[7] = {0};
	int n = 0;
	for (char *s = item, *p; n < 7 && s; s = p) {
		p = strchr(s, ':');
		if (p)
			*p++ = 0;
		f[n++] = s;
	}
	if (n < 4)
		die("ev: needs TYPE:CONFIG:NAME");
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)strtoul(f[1], NULL, 0);
	a.config = strtoull(f[2], NULL, 0);
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID;
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.sample_id_all = 1;
	const char *ex = n > 6 ? f[6] : "";
	a.exclude_user = strchr(ex, 'u') != NULL;
	a.exclude_kernel = strchr(ex, 'k') != NULL;
	a.exclude_hv = strchr(ex, 'h') != NULL;
	struct pf_buf b = {0};
	if (pf_event_encode(&b, &a, sizeof(a), &id, 1, f[3]) < 0 ||
	    pf_kv_add(&b, "spec", n > 4 ? f[4] : f[3]) < 0 || pf_kv_add(&b, "pmu", n > 5 ? f[5] : "hardware") < 0)
		die("out of memory");
	sec(w, PF_SEC_EVENT, &b);
	pf_buf_free(&b);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: counts-gen OUT ITEM...");
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(strerror(errno));
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	o.endian = PF_LITTLE_ENDIAN;
	o.word_size = 8;
	o.e_machine = 62;
	pf_writer *w;
	if (pf_writer_open_fd(&w, fd, &o) < 0)
		die("pf_writer_open_fd failed");
	struct pf_buf b = {0};
	if (pf_kv_add(&b, "arch", "x86_64") < 0)
		die("out of memory");
	sec(w, PF_SEC_META, &b);
	b.len = 0;
	uint64_t id = 100;
	for (int i = 2; i < argc; i++)
		if (!strncmp(argv[i], "ev:", 3))
			event(w, argv[i], id++);
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (strncmp(argv[i], "ev:", 3) && eq) {
			*eq = 0;
			if (pf_kv_add(&b, argv[i], eq + 1) < 0)
				die("out of memory");
		}
	}
	sec(w, PF_SEC_COUNTS, &b);
	b.len = 0;
	struct pf_end e;
	memset(&e, 0, sizeof(e));
	if (pf_end_encode(&b, &e) < 0)
		die("out of memory");
	sec(w, PF_SEC_END, &b);
	pf_buf_free(&b);
	if (pf_writer_close(w) < 0)
		die("pf_writer_close failed");
	return 0;
}
