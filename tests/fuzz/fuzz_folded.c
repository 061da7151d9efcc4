/*
 * fuzz_folded - the folded-text parser and frame-name helpers
 * (libpfile/folded.c): pf_folded_read() over the whole input, every frame of
 * every line split, stripped of clone suffixes and interned in a string
 * table; pf_folded_parse_line() and pf_folded_sniff() on the raw bytes.
 * Invariants: stacks, frames, functions and modules lie inside their line;
 * every line has the first line's number of counts; counts and their sums
 * stay within 2^63-1; an interned frame is found again with the same id.
 */
#include <errno.h>

#include "folded.h"
#include "fuzz.h"

struct ctx {
	struct pf_strtab t;
	int ncounts;
	uint64_t sum[2];
};

static int on_line(void *arg, const struct pf_folded_line *l, uint64_t lineno)
{
	struct ctx *c = arg;
	(void)lineno;
	FUZZ_ASSERT(l->ncounts == 1 || l->ncounts == 2);
	if (!c->ncounts)
		c->ncounts = l->ncounts;
	FUZZ_ASSERT(l->ncounts == c->ncounts);
	FUZZ_ASSERT(l->counts[0] <= PF_FOLDED_COUNT_MAX && l->counts[1] <= PF_FOLDED_COUNT_MAX);
	FUZZ_ASSERT(l->counts[0] <= PF_FOLDED_COUNT_MAX - c->sum[0] && l->counts[1] <= PF_FOLDED_COUNT_MAX - c->sum[1]);
	c->sum[0] += l->counts[0];
	c->sum[1] += l->counts[1];
	fuzz_touch(l->stack, l->stack_len);
	size_t pos = 0, flen;
	const char *fr;
	unsigned guard = 0;
	while (pf_folded_next_frame(l->stack, l->stack_len, &pos, &fr, &flen)) {
		FUZZ_ASSERT(guard++ <= l->stack_len + 1);
		FUZZ_ASSERT(fr >= l->stack && fr + flen <= l->stack + l->stack_len);
		const char *fn, *mod;
		size_t fl, ml;
		pf_frame_split(fr, flen, &fn, &fl, &mod, &ml);
		if (fn)
			FUZZ_ASSERT(fn >= fr && fn + fl <= fr + flen);
		if (mod)
			FUZZ_ASSERT(mod >= fr && mod + ml <= fr + flen);
		size_t sl = pf_frame_strip_clone(fr, flen);
		FUZZ_ASSERT(sl <= flen && (flen == 0 || sl > 0));
		int added;
		int64_t id = pf_strtab_intern(&c->t, fr, sl, &added);
		if (id < 0)
			return (int)id;
		FUZZ_ASSERT(pf_strtab_find(&c->t, fr, sl) == id);
		FUZZ_ASSERT(pf_strtab_len(&c->t, (uint32_t)id) == sl &&
			    memcmp(pf_strtab_str(&c->t, (uint32_t)id), fr, sl) == 0);
		/* a part of an interned name, from the table itself */
		if (sl > 1)
			FUZZ_ASSERT(pf_strtab_intern(&c->t, pf_strtab_str(&c->t, (uint32_t)id) + 1, sl - 1, NULL) >= 0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the raw bytes, one line and a sniff */
	struct pf_folded_line l;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t first = nl ? (size_t)(nl - data) : size;
	char *line = malloc(first ? first : 1);
	if (!line)
		return 0;
	memcpy(line, data, first);
	if (pf_folded_parse_line(line, first, &l) == 1)
		FUZZ_ASSERT(l.stack == line && l.stack_len <= first);
	free(line);
	(void)pf_folded_sniff(data, size);

	if (!size)
		return 0;
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	struct ctx c = { .ncounts = 0 };
	if (pf_strtab_init(&c.t) == 0) {
		char err[128];
		int rc = pf_folded_read(f, on_line, &c, err, sizeof(err));
		FUZZ_ASSERT(rc <= 0);
		if (rc < 0)
			FUZZ_ASSERT(strlen(err) < sizeof(err));
	}
	pf_strtab_free(&c.t);
	fclose(f);
	return 0;
}
