/*
 * fuzz_ksyms.c - the kernel's symbols in both their forms (libpfile/ksyms.c):
 * the KSYMS section's payload (pf_ksyms_decode, format/pfile.md 4.11) and
 * kallsyms text (pf_ksyms_parse, pfsym --kallsyms), held to one rule.
 *
 * The first byte picks the form of the rest. Text: what the parser accepts
 * must encode, decode back to the same table, and encode to the same bytes;
 * written out as text again it must parse to the same table. Payload: what
 * the decoder accepts must encode to the bytes it read (its header, modules
 * and columns) and, written out as kallsyms text, parse to the same symbols
 * (address, type, module name, name). Either way a table one reader accepts
 * is one the other accepts, and a name is kept whole or refused: the text
 * parser used to keep a NUL in a module or symbol name that the decoder
 * refuses, and the encoder then cut the name there (issue 30).
 */
#include "fuzz.h"
#include "ksyms.h"

/* The table k as kallsyms text, "ADDRESS TYPE NAME[\t[MODULE]]\n" lines. */
static void to_text(const struct pf_ksyms *k, struct pf_buf *t)
{
	t->len = 0;
	char line[PF_KSYMS_MAX_NAME + 128];
	for (uint32_t i = 0; i < k->n_syms; i++) {
		struct pf_ksym s;
		FUZZ_ASSERT(pf_ksyms_sym(k, i, &s) == 0);
		int n = snprintf(line, sizeof(line), "%llx %c %s", (unsigned long long)s.addr, s.type, s.name);
		FUZZ_ASSERT(n > 0 && (size_t)n < sizeof(line));
		FUZZ_ASSERT(pf_buf_put(t, line, (size_t)n) == 0);
		if (s.module) {
			FUZZ_ASSERT(s.module <= k->n_mods);
			n = snprintf(line, sizeof(line), "\t[%s]", k->mods[s.module - 1].name);
			FUZZ_ASSERT(pf_buf_put(t, line, (size_t)n) == 0);
		}
		FUZZ_ASSERT(pf_buf_put(t, "\n", 1) == 0);
	}
}

/* Every symbol of a and b alike: address, type, name, the module's name. */
static void same_syms(const struct pf_ksyms *a, const struct pf_ksyms *b)
{
	FUZZ_ASSERT(a->n_syms == b->n_syms);
	for (uint32_t i = 0; i < a->n_syms; i++) {
		struct pf_ksym x, y;
		FUZZ_ASSERT(pf_ksyms_sym(a, i, &x) == 0 && pf_ksyms_sym(b, i, &y) == 0);
		FUZZ_ASSERT(x.addr == y.addr && x.type == y.type && strcmp(x.name, y.name) == 0);
		FUZZ_ASSERT((x.module == 0) == (y.module == 0));
		if (x.module)
			FUZZ_ASSERT(strcmp(a->mods[x.module - 1].name, b->mods[y.module - 1].name) == 0);
	}
}

/* k written as text and parsed back: the same symbols (none when every
 * address is 0: the parser reads that as addresses hidden). */
static void text_again(const struct pf_ksyms *k)
{
	struct pf_buf t = { 0 };
	to_text(k, &t);
	struct pf_ksyms p = { 0 };
	char msg[256];
	int rc = pf_ksyms_parse(&p, (const char *)t.data, t.len, msg, sizeof(msg));
	if (rc != 0)
		fprintf(stderr, "fuzz: the text of an accepted table is refused: %s\n", msg);
	FUZZ_ASSERT(rc == 0);
	int all_zero = k->n_syms > 0;
	for (uint32_t i = 0; i < k->n_syms && all_zero; i++) {
		struct pf_ksym s;
		FUZZ_ASSERT(pf_ksyms_sym(k, i, &s) == 0);
		all_zero = s.addr == 0;
	}
	if (all_zero)
		FUZZ_ASSERT(p.hidden && p.n_syms == 0);
	else
		same_syms(k, &p);
	pf_ksyms_free(&p);
	pf_buf_free(&t);
}

/* Whether the text holds " NAME" ending at a tab, a newline or its end:
 * the name field as the parser read it, whole. */
static int whole_in_text(const uint8_t *d, size_t n, const char *name)
{
	size_t nl = strlen(name);
	for (const uint8_t *p = d; (p = memmem(p, n - (size_t)(p - d), name, nl)); p++) {
		size_t end = (size_t)(p - d) + nl;
		if (p > d && p[-1] == ' ' && (end == n || d[end] == '\t' || d[end] == '\n'))
			return 1;
	}
	return 0;
}

static void from_text(const uint8_t *d, size_t n)
{
	struct pf_ksyms k = { 0 }, k2 = { 0 };
	char msg[256];
	if (pf_ksyms_parse(&k, (const char *)d, n, msg, sizeof(msg)) != 0)
		return;
	/* every name kept is whole: nothing after its NUL (a NUL inside a
	 * name was kept, then cut at the encoding without a word) */
	for (uint32_t i = 0; i < k.n_syms && i < 64; i++) {
		struct pf_ksym x;
		FUZZ_ASSERT(pf_ksyms_sym(&k, i, &x) == 0);
		FUZZ_ASSERT(whole_in_text(d, n, x.name));
	}
	for (uint32_t i = 0; i < k.n_mods; i++)
		for (size_t j = strlen(k.mods[i].name); j < sizeof(k.mods[i].name); j++)
			FUZZ_ASSERT(k.mods[i].name[j] == 0);
	struct pf_buf e1 = { 0 }, e2 = { 0 };
	int rc = pf_ksyms_encode(&k, &e1);
	FUZZ_ASSERT(rc == 0); /* what the parser kept, the encoder writes */
	rc = pf_ksyms_decode(&k2, e1.data, e1.len, msg, sizeof(msg));
	if (rc != 0)
		fprintf(stderr, "fuzz: the payload of a parsed table is refused: %s\n", msg);
	FUZZ_ASSERT(rc == 0);
	same_syms(&k, &k2);
	FUZZ_ASSERT(k.n_mods == k2.n_mods);
	FUZZ_ASSERT(pf_ksyms_encode(&k2, &e2) == 0);
	FUZZ_ASSERT(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0);
	if (!k.hidden)
		text_again(&k2);
	pf_ksyms_free(&k);
	pf_ksyms_free(&k2);
	pf_buf_free(&e1);
	pf_buf_free(&e2);
}

static void from_payload(const uint8_t *d, size_t n)
{
	struct pf_ksyms k = { 0 };
	char msg[256];
	if (pf_ksyms_decode(&k, d, n, msg, sizeof(msg)) != 0)
		return;
	/* the encoder writes back what the decoder read (bytes after the last
	 * name are not part of the table) */
	struct pf_buf e = { 0 };
	FUZZ_ASSERT(pf_ksyms_encode(&k, &e) == 0);
	FUZZ_ASSERT(e.len >= 16 && e.len <= n && memcmp(e.data + 16, d + 16, e.len - 16) == 0);
	/* of the header, the fields (the reserved bytes are written as 0) */
	FUZZ_ASSERT(e.data[0] == d[0] && memcmp(e.data + 4, d + 4, 2) == 0 && memcmp(e.data + 8, d + 8, 4) == 0);
	for (uint32_t i = 0; i < k.n_syms; i++) {
		struct pf_ksym s;
		FUZZ_ASSERT(pf_ksyms_sym(&k, i, &s) == 0);
		fuzz_touch(s.name, strlen(s.name) + 1);
		int64_t f = pf_ksyms_find(&k, s.addr);
		FUZZ_ASSERT(f >= -1 && f < (int64_t)k.n_syms);
	}
	text_again(&k);
	pf_ksyms_free(&k);
	pf_buf_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		from_text(data + 1, size - 1);
	else
		from_payload(data + 1, size - 1);
	return 0;
}
