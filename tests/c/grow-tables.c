/*
 * grow-tables - libpfile's growing tables fed from themselves.
 *
 * Every table that libpfile reallocates as it grows (the string blob of a
 * resolved profile, the arena of a folded-text string table, a pf_buf, the
 * DSO and build-id tables of a mapping timeline) is given, at the moment it
 * has to grow, an argument that points into its own old storage: a part of
 * a string it holds, its own bytes, a DSO's build-id. A copy taken after the
 * reallocation reads freed memory (ASan: heap-use-after-free); the values
 * are checked too. Usage: grow-tables [prof|strtab|buf|maps|strmax] (default:
 * all). strmax (issue 30): a string the tables could never write is refused
 * before it is read, and the encoder never cuts one silently.
 * Prints "grow-tables: N checks, M failures"; exit 1 on a
 * failure. Issue 11 (the audit after defect 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "maps.h"
#include "advanced.h"
#include "build.h"
#include "fold.h"

static int checks, fails;
#define CHECK(c)                                                                           \
	do {                                                                               \
		checks++;                                                                  \
		if (!(c)) {                                                                \
			fprintf(stderr, "grow-tables: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			fails++;                                                           \
		}                                                                          \
	} while (0)

/* pf_prof_str(): a part of a string of the table, interned when the blob
 * (64 KiB at first) must grow. */
static void prof_strings(void)
{
	struct pf_prof p;
	pf_prof_init(&p);
	size_t n = 60000;
	char *big = malloc(n);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	int64_t id = pf_prof_str(&p, big, n);
	CHECK(id == 0);
	size_t len;
	const char *in = pf_prof_str_get(&p, 0, &len);
	CHECK(in && len == n);
	/* the second half of it: not yet a string of the table, and it does
	 * not fit in the blob's first 64 KiB */
	int64_t id2 = pf_prof_str(&p, in + n / 2, n / 2);
	CHECK(id2 == 1);
	const char *got = pf_prof_str_get(&p, 1, &len);
	CHECK(got && len == n / 2 && memcmp(got, big + n / 2, n / 2) == 0);
	pf_prof_free(&p);
	free(big);
}

/* PF_PROF_STR_MAX: a longer string is refused (-E2BIG) before a byte of it
 * is read (a one-byte buffer: ASan would see a read past it); the encoder
 * refuses a string longer than its sections instead of cutting it (it cut
 * one over max_bytes - 12 without a word). */
static void prof_strmax(void)
{
	struct pf_prof p;
	pf_prof_init(&p);
	char one = 'x';
	CHECK(pf_prof_str(&p, &one, (size_t)PF_PROF_STR_MAX + 1) == -E2BIG);
	CHECK(p.n_str == 0);
	char *big = malloc(5000);
	memset(big, 'a', 5000);
	CHECK(pf_prof_str(&p, big, 5000) == 0);
	struct pf_buf a = { 0 }, f = { 0 }, k = { 0 };
	CHECK(pf_prof_encode_tables(&p, &a, &f, &k, 4096) == -E2BIG);
	/* room for it: encoded whole */
	p.enc_str = 0;
	CHECK(pf_prof_encode_tables(&p, &a, &f, &k, 8192) == 0);
	CHECK(a.len == 8 + 4 + 5000);
	pf_buf_free(&a);
	pf_buf_free(&f);
	pf_buf_free(&k);
	pf_prof_free(&p);
	free(big);
}

/* pf_strtab_intern(): the same with the folded-text string table. */
static void strtab(void)
{
	struct pf_strtab t;
	CHECK(pf_strtab_init(&t) == 0);
	size_t n = 60000;
	char *big = malloc(n);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)('A' + i % 26);
	CHECK(pf_strtab_intern(&t, big, n, NULL) == 0);
	const char *in = pf_strtab_str(&t, 0);
	int added = 0;
	CHECK(pf_strtab_intern(&t, in + n / 3, n / 3, &added) == 1 && added);
	CHECK(pf_strtab_len(&t, 1) == n / 3 && memcmp(pf_strtab_str(&t, 1), big + n / 3, n / 3) == 0);
	pf_strtab_free(&t);
	free(big);
}

/* pf_buf_put(): a buffer's own bytes appended when it is full. */
static void buf(void)
{
	struct pf_buf b = { 0 };
	CHECK(pf_buf_put(&b, "0123456789abcdef", 16) == 0);
	while (b.len < b.cap)
		CHECK(pf_buf_put(&b, "x", 1) == 0);
	CHECK(pf_buf_put(&b, b.data, 16) == 0);
	CHECK(b.len >= 32 && memcmp(b.data + b.len - 16, "0123456789abcdef", 16) == 0);
	pf_buf_free(&b);
}

/* pf_maps_dso_intern() with the build-id of a DSO of the table, when the
 * table (32 DSOs at first) must grow. (A DSO's path is a block of its own,
 * which stays put; pf_maps_note_buildid() takes the build-id by value.) */
static void maps(void)
{
	struct pf_maps m;
	pf_maps_init(&m);
	char path[64];
	uint8_t bid[20];
	for (unsigned i = 0; i < 32; i++) {
		snprintf(path, sizeof(path), "/lib/lib%u.so", i);
		for (unsigned k = 0; k < sizeof(bid); k++)
			bid[k] = (uint8_t)(i * 7 + k);
		CHECK(pf_maps_dso_intern(&m, path, strlen(path), bid, sizeof(bid)) == i);
	}
	memcpy(bid, pf_maps_dso(&m, 5)->build_id, sizeof(bid));
	int64_t id = pf_maps_dso_intern(&m, "/lib/copy.so", 12, pf_maps_dso(&m, 5)->build_id, sizeof(bid));
	CHECK(id == 32);
	if (id == 32)
		CHECK(pf_maps_dso(&m, 32)->build_id_size == 20 && memcmp(pf_maps_dso(&m, 32)->build_id, bid, 20) == 0);

	pf_maps_free(&m);
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL; /* prof, strtab, buf or maps */
	if (!only || !strcmp(only, "prof"))
		prof_strings();
	if (!only || !strcmp(only, "strtab"))
		strtab();
	if (!only || !strcmp(only, "buf"))
		buf();
	if (!only || !strcmp(only, "maps"))
		maps();
	if (!only || !strcmp(only, "strmax"))
		prof_strmax();
	printf("grow-tables: %d checks, %d failures\n", checks, fails);
	return fails ? 1 : 0;
}
