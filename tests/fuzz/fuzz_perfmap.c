/*
 * fuzz_perfmap.c - pfsym's JIT maps (libpfsym/perfmap.c): the parser of
 * /tmp/perf-PID.map text in PERFMAP sections, its bounds, and the index
 * that names an address by the latest line holding it.
 *
 * The input is an option byte, then map text. Option bits: 0-1, the number
 * of sections the text is cut into (1 to 4, at the thirds of its length,
 * each a PERFMAP payload); 2, the sections alternate between two processes;
 * 3, a bound of 40 symbols; 4, a bound of 256 bytes of text; 5, addresses
 * are looked up after each section (the index is brought up to date in
 * steps) instead of after the last. Every address near a line's range
 * (start - 1, start, end - 1, end) and the 8-byte words of the input are
 * looked up; each answer must be the one of a plain scan of the lines, by
 * the grammar of perfmap.c's header (here written again from it): the last
 * line in file order, among those kept under the bounds, whose range holds
 * the address.
 */
#include "fuzz.h"
#include "internal/pfsym.h"

#define MAX_SYMS 40
#define MAX_BYTES 256

struct ref {
	uint32_t pid;
	uint64_t start, end;
	const char *name; /* in the reference's copy of the text */
};

static struct ref *refs;
static size_t n_refs, cap_refs;
static uint64_t ref_syms, ref_bytes;

static int hexv(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "[0x]HEX " with 1 to 16 digits: the value and the position after the
 * space, or NULL */
static char *hexf(char *p, uint64_t *v)
{
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t x = 0;
	int n = 0;
	for (; hexv((unsigned char)*p) >= 0; p++, n++)
		x = x << 4 | (uint64_t)hexv((unsigned char)*p);
	if (!n || n > 16 || *p != ' ')
		return NULL;
	*v = x;
	return p + 1;
}

/* The lines of one section, as pfsi_jit_add() should keep them. */
static void ref_add(uint32_t pid, char *t, size_t len, uint64_t max_syms, uint64_t max_bytes)
{
	if (len > max_bytes - ref_bytes || ref_syms >= max_syms)
		return;
	ref_bytes += len;
	char *end = t + len;
	for (char *line = t; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *next = nl ? nl + 1 : end;
		if (nl)
			*nl = 0;
		size_t ll = strlen(line);
		if (ll && line[ll - 1] == '\r')
			line[ll - 1] = 0;
		uint64_t s, z;
		char *p = hexf(line, &s);
		if (p)
			p = hexf(p, &z);
		if (p && z && *p && s + z > s && ref_syms < max_syms) {
			if (n_refs == cap_refs) {
				cap_refs = cap_refs ? 2 * cap_refs : 64;
				refs = realloc(refs, cap_refs * sizeof(*refs));
				FUZZ_ASSERT(refs);
			}
			refs[n_refs++] = (struct ref){ pid, s, s + z, p };
			ref_syms++;
		}
		line = next;
	}
}

static const struct ref *ref_find(uint32_t pid, uint64_t a)
{
	for (size_t i = n_refs; i-- > 0;)
		if (refs[i].pid == pid && refs[i].start <= a && a < refs[i].end)
			return &refs[i];
	return NULL;
}

static void probe(struct pfsi_jit *j, struct pf_prof *prof, uint32_t pid, uint64_t a)
{
	struct pf_prof_frame f;
	memset(&f, 0, sizeof(f));
	int rc = pfsi_jit_resolve(j, prof, pid, a, NULL, &f);
	FUZZ_ASSERT(rc >= 0);
	const struct ref *r = ref_find(pid, a);
	FUZZ_ASSERT((rc == 1) == (r != NULL));
	if (!r)
		return;
	size_t len;
	const char *name = pf_prof_str_get(prof, f.name, &len);
	FUZZ_ASSERT(name && len == strlen(r->name) && memcmp(name, r->name, len) == 0);
	FUZZ_ASSERT(f.addr == a);
	FUZZ_ASSERT(!(f.flags & PF_FRAME_HAS_SYMOFF) || f.sym_off == a - r->start);
}

static void probe_all(struct pfsi_jit *j, struct pf_prof *prof, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < n_refs; i++) {
		const struct ref *r = &refs[i];
		const uint64_t at[4] = { r->start - 1, r->start, r->end - 1, r->end };
		for (int k = 0; k < 4; k++)
			probe(j, prof, r->pid, at[k]);
	}
	for (size_t off = 0; off + 8 <= size && off < 512; off += 8) {
		uint64_t a;
		memcpy(&a, data + off, 8);
		probe(j, prof, 1, a);
		probe(j, prof, 2, a);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	uint8_t opt = data[0];
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	unsigned n_secs = 1 + (opt & 3u);
	uint64_t max_syms = opt & 8 ? MAX_SYMS : UINT64_MAX;
	uint64_t max_bytes = opt & 16 ? MAX_BYTES : UINT64_MAX;
	struct pfsi_jit *j = pfsi_jit_new(NULL, max_syms, max_bytes);
	/* the reference's copy: each section's text NUL-terminated, as
	 * pfsi_jit_add() keeps it */
	char *copy = malloc(len + 4);
	FUZZ_ASSERT(j && copy);
	struct pf_prof prof;
	pf_prof_init(&prof);
	n_refs = 0;
	ref_syms = ref_bytes = 0;
	size_t from = 0;
	int capped = 0;
	for (unsigned s = 0; s < n_secs; s++) {
		size_t to = s + 1 == n_secs ? len : len * (s + 1) / n_secs;
		uint32_t pid = opt & 4 ? 1 + (s & 1) : 1;
		struct pf_buf b = { 0 };
		FUZZ_ASSERT(pf_maps_encode(&b, pid, s, text + from, to - from) == 0);
		int rc = pfsi_jit_add(j, b.data, b.len, 0);
		pf_buf_free(&b);
		FUZZ_ASSERT(rc == 0 || rc == 1);
		capped |= rc;
		char *t = copy + from + s;
		memcpy(t, text + from, to - from);
		t[to - from] = 0;
		ref_add(pid, t, to - from, max_syms, max_bytes);
		from = to;
		if (opt & 32)
			probe_all(j, &prof, data, size);
	}
	probe_all(j, &prof, data, size);
	/* a bound reached is told, once */
	char msg[512];
	FUZZ_ASSERT(pfsi_jit_cap_message(j, msg, sizeof(msg)) == capped);
	FUZZ_ASSERT(!capped || strstr(msg, "pfsym --max-jit-"));
	pf_prof_free(&prof);
	pfsi_jit_free(j);
	free(copy);
	return 0;
}
