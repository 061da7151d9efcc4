/*
 * ksyms-check - a decoded KSYMS table (the payload's columns read in place
 * with a sparse index, libpfile/ksyms.c) against the parsed table it was
 * encoded from (one row per symbol), symbol by symbol and lookup by lookup.
 *
 * For each table: parse kallsyms text into rows (pf_ksyms_parse), encode
 * it (pf_ksyms_encode), decode the payload (pf_ksyms_decode), and require
 *  - every symbol equal: address, type, module and name (pf_ksyms_sym);
 *  - pf_ksyms_find() equal on both at each symbol's address - 1, + 0, + 1,
 *    halfway to the next, and on random addresses around the table;
 *  - the decoded table re-encodes to the same bytes.
 * The tables: the kallsyms text FILE if given (e.g. /proc/kallsyms), then
 * COUNT random ones (SEED): runs of aliases longer than the index stride,
 * names of 1..1024 bytes, modules with and without a known size, end
 * markers.
 *
 * usage: ksyms-check [--file KALLSYMS] [SEED [COUNT]]
 * Prints "ksyms-check: N tables, M symbols, P lookups: rows and columns
 * agree" and exits 0, or prints the first difference and exits 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pfile/ksyms.h>
#include "testutil.h"

static uint64_t rng;
static uint64_t rnd(void)
{
	return tu_xorshift(&rng);
}

static unsigned long n_tables, n_syms, n_lookups;

static int fail(const char *what, uint64_t v)
{
	fprintf(stderr, "ksyms-check: table %lu: %s (0x%" PRIx64 ")\n", n_tables, what, v);
	return 1;
}

static int same_find(const struct pf_ksyms *a, const struct pf_ksyms *b, uint64_t addr)
{
	n_lookups++;
	int64_t x = pf_ksyms_find(a, addr), y = pf_ksyms_find(b, addr);
	if (x != y) {
		fprintf(stderr, "ksyms-check: table %lu: find(0x%" PRIx64 "): rows %" PRId64 ", columns %" PRId64 "\n",
			n_tables, addr, x, y);
		return 1;
	}
	return 0;
}

static int check_text(const char *text, size_t len)
{
	struct pf_ksyms a = { 0 }, b = { 0 };
	char err[256];
	struct pf_buf p = { 0 }, p2 = { 0 };
	int rc = 1;
	n_tables++;
	if (pf_ksyms_parse(&a, text, len, err, sizeof(err)) < 0) {
		fprintf(stderr, "ksyms-check: table %lu: %s\n", n_tables, err);
		return 1;
	}
	if (a.hidden) {
		pf_ksyms_free(&a);
		return 0;
	}
	/* modules: every other one gets a base and size around its symbols */
	for (uint32_t m = 0; m < a.n_mods; m += 2) {
		uint64_t lo = UINT64_MAX, hi = 0;
		struct pf_ksym s;
		for (uint32_t i = 0; i < a.n_syms; i++)
			if (pf_ksyms_sym(&a, i, &s) == 0 && s.module == m + 1) {
				lo = s.addr < lo ? s.addr : lo;
				hi = s.addr > hi ? s.addr : hi;
			}
		if (lo <= hi && pf_ksyms_set_module(&a, a.mods[m].name, lo, hi - lo + 1 + rnd() % 64, NULL, 0) < 0)
			goto out;
	}
	if (pf_ksyms_encode(&a, &p) < 0 || pf_ksyms_decode(&b, p.data, p.len, err, sizeof(err)) < 0) {
		fprintf(stderr, "ksyms-check: table %lu: encode/decode: %s\n", n_tables, err);
		goto out;
	}
	if (a.n_syms != b.n_syms || a.n_mods != b.n_mods) {
		fail("symbol or module counts differ", b.n_syms);
		goto out;
	}
	uint64_t lo = 0, hi = 0;
	for (uint32_t i = 0; i < a.n_syms; i++) {
		struct pf_ksym x, y, nx;
		if (pf_ksyms_sym(&a, i, &x) < 0 || pf_ksyms_sym(&b, i, &y) < 0) {
			fail("pf_ksyms_sym failed", i);
			goto out;
		}
		if (x.addr != y.addr || x.type != y.type || x.module != y.module || strcmp(x.name, y.name)) {
			fprintf(stderr, "ksyms-check: table %lu: symbol %u: rows 0x%" PRIx64 " %c %u %s, columns 0x%" PRIx64
				" %c %u %s\n", n_tables, i, x.addr, x.type, x.module, x.name, y.addr, y.type, y.module,
				y.name);
			goto out;
		}
		if (!i)
			lo = x.addr;
		hi = x.addr;
		uint64_t probe[4] = { x.addr - 1, x.addr, x.addr + 1, x.addr };
		if (i + 1 < a.n_syms && pf_ksyms_sym(&a, i + 1, &nx) == 0)
			probe[3] = x.addr + (nx.addr - x.addr) / 2;
		for (int k = 0; k < 4; k++)
			if (same_find(&a, &b, probe[k]))
				goto out;
	}
	n_syms += a.n_syms;
	for (int k = 0; k < 20000 && a.n_syms; k++) {
		uint64_t span = hi - lo + 256;
		if (same_find(&a, &b, lo - 128 + (span ? rnd() % span : 0)))
			goto out;
	}
	if (same_find(&a, &b, 0) || same_find(&a, &b, UINT64_MAX))
		goto out;
	if (pf_ksyms_sym(&b, b.n_syms, &(struct pf_ksym){ 0 }) != -ERANGE) {
		fail("pf_ksyms_sym past the end did not fail", b.n_syms);
		goto out;
	}
	if (pf_ksyms_encode(&b, &p2) < 0 || p2.len != p.len || memcmp(p2.data, p.data, p.len)) {
		fail("the decoded table re-encodes to other bytes", p2.len);
		goto out;
	}
	rc = 0;
out:
	pf_buf_free(&p);
	pf_buf_free(&p2);
	pf_ksyms_free(&a);
	pf_ksyms_free(&b);
	return rc;
}

static int random_table(void)
{
	static const char *const mods[] = { "ext4", "kvm", "bpf", "nf_tables", "snd" };
	static const char types[] = "tTwW";
	static const char *const ends[] = { "_etext", "_einittext", "__entry_text_end" };
	size_t cap = 1 << 20, len = 0;
	char *t = malloc(cap);
	if (!t)
		return 1;
	uint64_t addr = 0xffffffff81000000ULL + rnd() % 4096;
	unsigned n = 1 + (unsigned)(rnd() % 600);
	for (unsigned i = 0; i < n;) {
		/* runs of aliases: sometimes longer than the 64-symbol stride */
		unsigned run = rnd() % 8 ? 1 : 1 + (unsigned)(rnd() % 150);
		for (unsigned r = 0; r < run && i < n; r++, i++) {
			char name[1100];
			unsigned nl = rnd() % 16 ? 1 + (unsigned)(rnd() % 40) : 1 + (unsigned)(rnd() % 1024);
			if (rnd() % 50 == 0) {
				nl = (unsigned)snprintf(name, sizeof(name), "%s", ends[rnd() % 3]);
			} else {
				for (unsigned c = 0; c < nl; c++)
					name[c] = (char)('a' + rnd() % 26);
				name[nl] = 0;
			}
			char mod[40] = "";
			if (rnd() % 4 == 0)
				snprintf(mod, sizeof(mod), "\t[%s]", mods[rnd() % 5]);
			if (len + nl + 80 > cap) {
				char *g = realloc(t, cap *= 2);
				if (!g) {
					free(t);
					return 1;
				}
				t = g;
			}
			len += (size_t)sprintf(t + len, "%016" PRIx64 " %c %s%s\n", addr, types[rnd() % 4], name, mod);
		}
		addr += rnd() % 3 ? rnd() % 200 : rnd() % 100000; /* deltas of one and of more bytes */
	}
	int rc = check_text(t, len);
	free(t);
	return rc;
}

int main(int argc, char **argv)
{
	int a = 1;
	if (a + 1 < argc && !strcmp(argv[a], "--file")) {
		FILE *f = fopen(argv[a + 1], "r");
		if (!f) {
			perror(argv[a + 1]);
			return 1;
		}
		size_t len;
		char *t = tu_slurp(f, &len);
		fclose(f);
		if (check_text(t, len)) {
			free(t);
			return 1;
		}
		free(t);
		a += 2;
	}
	rng = a < argc ? strtoull(argv[a], NULL, 0) : 1;
	rng = rng ? rng : 1;
	unsigned long count = a + 1 < argc ? strtoul(argv[a + 1], NULL, 0) : 200;
	for (unsigned long k = 0; k < count; k++)
		if (random_table())
			return 1;
	printf("ksyms-check: %lu tables, %lu symbols, %lu lookups: rows and columns agree\n", n_tables, n_syms,
	       n_lookups);
	return 0;
}
