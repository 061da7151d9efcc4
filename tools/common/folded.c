/*
 * folded.c - folded-stack text parsing, frame-name helpers, string table.
 * See folded.h for the format rules.
 */
#include "folded.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses digits s[0..n) into *v. @return 0 or -ERANGE. */
static int parse_count(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (x > (PF_FOLDED_COUNT_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

/* Finds a trailing digit token in s[0..end): returns its start, or -1 when
 * s[end-1] is not a digit or the token is not preceded by a blank. */
static long trailing_number(const char *s, size_t end)
{
	size_t i = end;
	while (i > 0 && is_digit(s[i - 1]))
		i--;
	if (i == end || i == 0 || !is_blank(s[i - 1]))
		return -1;
	return (long)i;
}

/* Parses one line; want: 0 = one or two counts as the line shows, 1 = only
 * the last number is a count, 2 = the line must end in two counts. */
static int parse_line(const char *line, size_t len, int want, struct pf_folded_line *out)
{
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	size_t end = len;
	while (end > 0 && is_blank(line[end - 1]))
		end--;
	if (end == 0 || line[0] == '#')
		return 0;
	long c2 = trailing_number(line, end);
	if (c2 < 0)
		return -EINVAL;
	size_t e = (size_t)c2;
	while (e > 0 && is_blank(line[e - 1]))
		e--;
	if (e == 0)
		return -EINVAL;
	uint64_t v2, v1;
	if (parse_count(line + c2, end - (size_t)c2, &v2) < 0)
		return -ERANGE;
	long c1 = want == 1 ? -1 : trailing_number(line, e);
	if (c1 >= 0) {
		size_t s = (size_t)c1;
		while (s > 0 && is_blank(line[s - 1]))
			s--;
		if (s > 0) {
			if (parse_count(line + c1, e - (size_t)c1, &v1) < 0)
				return -ERANGE;
			out->stack = line;
			out->stack_len = s;
			out->counts[0] = v1;
			out->counts[1] = v2;
			out->ncounts = 2;
			return 1;
		}
	}
	if (want == 2)
		return -EDOM;
	out->stack = line;
	out->stack_len = e;
	out->counts[0] = v2;
	out->counts[1] = 0;
	out->ncounts = 1;
	return 1;
}

int pf_folded_parse_line(const char *line, size_t len, struct pf_folded_line *out)
{
	return parse_line(line, len, 0, out);
}

#define UNIT_PREFIX "# pffold "

/* Compares key=value token tok[0..n) with key; on a match sets *val, *vlen. */
static int token_key(const char *tok, size_t n, const char *key, const char **val, size_t *vlen)
{
	size_t kl = strlen(key);
	if (n <= kl || memcmp(tok, key, kl) != 0 || tok[kl] != '=')
		return 0;
	*val = tok + kl + 1;
	*vlen = n - kl - 1;
	return 1;
}

static int word_is(const char *v, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(v, w, n) == 0;
}

int pf_folded_unit_parse(const char *line, size_t len, struct pf_folded_unit *u)
{
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	size_t pl = sizeof UNIT_PREFIX - 1;
	if (len < pl || memcmp(line, UNIT_PREFIX, pl) != 0)
		return 0;
	struct pf_folded_unit r = { PF_FOLDED_WEIGHT_UNKNOWN, "", 0 };
	for (size_t i = pl; i < len;) {
		while (i < len && is_blank(line[i]))
			i++;
		size_t s = i;
		while (i < len && !is_blank(line[i]))
			i++;
		if (i == s)
			break;
		const char *tok = line + s, *v;
		size_t n = i - s, vl;
		if (!memchr(tok, '=', n))
			return -EINVAL;
		if (token_key(tok, n, "weight", &v, &vl)) {
			if (word_is(v, vl, "samples"))
				r.weight = PF_FOLDED_WEIGHT_SAMPLES;
			else if (word_is(v, vl, "period"))
				r.weight = PF_FOLDED_WEIGHT_PERIOD;
			else
				return -EINVAL;
		} else if (token_key(tok, n, "unit", &v, &vl)) {
			if (!word_is(v, vl, "ns") && !word_is(v, vl, "events"))
				return -EINVAL;
			memcpy(r.unit, v, vl);
			r.unit[vl] = '\0';
		} else if (token_key(tok, n, "period", &v, &vl)) {
			for (size_t k = 0; k < vl; k++)
				if (!is_digit(v[k]))
					return -EINVAL;
			if (parse_count(v, vl, &r.period) < 0 || r.period == 0)
				return -EINVAL;
		}
	}
	if (r.weight == PF_FOLDED_WEIGHT_UNKNOWN)
		return -EINVAL;
	*u = r;
	return 1;
}

int pf_folded_unit_format(char *buf, size_t size, const struct pf_folded_unit *u)
{
	if ((u->weight != PF_FOLDED_WEIGHT_SAMPLES && u->weight != PF_FOLDED_WEIGHT_PERIOD) ||
	    (u->unit[0] && strcmp(u->unit, "ns") != 0 && strcmp(u->unit, "events") != 0))
		return -EINVAL;
	char unit[16] = "", period[40] = "";
	if (u->unit[0])
		snprintf(unit, sizeof unit, " unit=%s", u->unit);
	if (u->period)
		snprintf(period, sizeof period, " period=%llu", (unsigned long long)u->period);
	return snprintf(buf, size, UNIT_PREFIX "weight=%s%s%s\n",
			u->weight == PF_FOLDED_WEIGHT_PERIOD ? "period" : "samples", unit, period);
}

static int unit_equal(const struct pf_folded_unit *a, const struct pf_folded_unit *b)
{
	return a->weight == b->weight && strcmp(a->unit, b->unit) == 0 && a->period == b->period;
}

void pf_folded_input_write(FILE *out, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

void pf_folded_input_keep(char *note, size_t cap, const char *prog, const char *path, const char *text,
			  size_t len)
{
	if (note[0] || !cap)
		return; /* the first one names it */
	if (len >= cap)
		len = cap - 1;
	memcpy(note, text, len);
	note[len] = '\0';
	fprintf(stderr, "%s: %s: folded from an input that was not whole: ", prog, path);
	pf_folded_input_write(stderr, note);
	fputc('\n', stderr);
}

int pf_folded_input_parse(const char *line, size_t len, const char **text, size_t *text_len)
{
	size_t pl = sizeof PF_FOLDED_INPUT_PREFIX - 1;
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len < pl || memcmp(line, PF_FOLDED_INPUT_PREFIX, pl) != 0)
		return 0;
	*text = line + pl;
	*text_len = len - pl;
	return 1;
}

static int read_folded(FILE *f, pf_folded_cb cb, void *arg, struct pf_folded_unit *unit,
		       void (*input)(void *arg, const char *text, size_t len), char *err, size_t errlen)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t lineno = 0, sum[2] = { 0, 0 };
	int rc = 0, want = 0; /* counts per line, once the first stack line is read */

	if (errlen > 0)
		err[0] = '\0';
	if (unit)
		memset(unit, 0, sizeof *unit);
	errno = 0;
	while ((n = getline(&buf, &cap, f)) >= 0) {
		struct pf_folded_line l;
		lineno++;
		const char *it;
		size_t il;
		if (input && buf[0] == '#' && pf_folded_input_parse(buf, (size_t)n, &it, &il)) {
			input(arg, it, il);
			continue;
		}
		if (unit && buf[0] == '#') {
			struct pf_folded_unit u;
			int ur = pf_folded_unit_parse(buf, (size_t)n, &u);
			const char *why = NULL;
			if (ur < 0)
				why = "malformed unit line (expected '# pffold weight=samples|period "
				      "[unit=ns|events] [period=N]')";
			else if (ur > 0 && unit->weight == PF_FOLDED_WEIGHT_UNKNOWN && want)
				why = "unit line after stack lines (the counts before it have no unit)";
			else if (ur > 0 && unit->weight != PF_FOLDED_WEIGHT_UNKNOWN && !unit_equal(unit, &u))
				why = "unit line differs from the first one (inputs of different units put together?)";
			if (why) {
				if (errlen > 0)
					snprintf(err, errlen, "line %llu: %s", (unsigned long long)lineno, why);
				rc = -EINVAL;
				break;
			}
			if (ur > 0)
				*unit = u;
			continue;
		}
		int r = parse_line(buf, (size_t)n, want, &l);
		if (r == 0)
			continue;
		if (r < 0) {
			if (errlen > 0)
				snprintf(err, errlen, "line %llu: %s", (unsigned long long)lineno,
					 r == -ERANGE ? "count too large" :
					 r == -EDOM ? "expected two counts (BASE NEW), as on the first line" :
					 want == 2 ? "expected 'frame;frame;... BASE NEW'" :
					 "expected 'frame;frame;... COUNT'");
			rc = r == -EDOM ? -EINVAL : r;
			break;
		}
		want = l.ncounts;
		if (l.counts[0] > PF_FOLDED_COUNT_MAX - sum[0] ||
		    l.counts[1] > PF_FOLDED_COUNT_MAX - sum[1]) {
			if (errlen > 0)
				snprintf(err, errlen, "line %llu: counts overflow (their sum passes 2^63-1)",
					 (unsigned long long)lineno);
			rc = -EOVERFLOW;
			break;
		}
		sum[0] += l.counts[0];
		sum[1] += l.counts[1];
		rc = cb(arg, &l, lineno);
		if (rc != 0)
			break;
	}
	if (rc == 0 && ferror(f)) {
		rc = errno > 0 ? -errno : -EIO; /* e.g. -EISDIR */
		if (errlen > 0)
			snprintf(err, errlen, "%s", strerror(-rc));
	}
	free(buf);
	return rc;
}

int pf_folded_read(FILE *f, pf_folded_cb cb, void *arg, char *err, size_t errlen)
{
	return read_folded(f, cb, arg, NULL, NULL, err, errlen);
}

int pf_folded_read_unit(FILE *f, pf_folded_cb cb, void *arg, struct pf_folded_unit *unit,
			char *err, size_t errlen)
{
	return read_folded(f, cb, arg, unit, NULL, err, errlen);
}

int pf_folded_read_input(FILE *f, pf_folded_cb cb, void *arg, struct pf_folded_unit *unit,
			 void (*input)(void *arg, const char *text, size_t len), char *err, size_t errlen)
{
	return read_folded(f, cb, arg, unit, input, err, errlen);
}

int pf_folded_next_frame(const char *stack, size_t len, size_t *pos,
			 const char **frame, size_t *flen)
{
	size_t p = *pos;
	if (p > len || (p == len && (p == 0 || stack[p - 1] != ';')))
		return 0;
	const char *s = stack + p;
	const char *semi = memchr(s, ';', len - p);
	size_t n = semi ? (size_t)(semi - s) : len - p;
	*frame = s;
	*flen = n;
	*pos = semi ? p + n + 1 : len + 1;
	return 1;
}

static int ends_with(const char *s, size_t len, const char *suf, size_t sl)
{
	return len >= sl && memcmp(s + len - sl, suf, sl) == 0;
}

/* Length without one trailing clone suffix, or len when there is none. */
static size_t strip_one(const char *s, size_t len)
{
	/* demangler form: "name [clone .isra.0]" */
	if (len > 0 && s[len - 1] == ']') {
		static const char tag[] = " [clone .";
		for (size_t i = len; i-- > 0;) {
			if (s[i] == '[') {
				if (i > 0 && i + 8 <= len && memcmp(s + i - 1, tag, sizeof tag - 1) == 0 &&
				    i - 1 > 0)
					return i - 1;
				break;
			}
		}
		return len;
	}
	static const char *const plain[] = { ".cold", ".localalias" };
	for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++) {
		size_t sl = strlen(plain[k]);
		if (len > sl && ends_with(s, len, plain[k], sl))
			return len - sl;
	}
	/* ".tag.DIGITS" */
	size_t d = len;
	while (d > 0 && is_digit(s[d - 1]))
		d--;
	if (d == len || d == 0 || s[d - 1] != '.')
		return len;
	static const char *const numbered[] = { ".isra", ".constprop", ".part", ".lto_priv",
						".cold", ".llvm", ".clone" };
	for (size_t k = 0; k < sizeof numbered / sizeof numbered[0]; k++) {
		size_t sl = strlen(numbered[k]);
		if (d - 1 > sl && ends_with(s, d - 1, numbered[k], sl))
			return d - 1 - sl;
	}
	return len;
}

size_t pf_frame_strip_clone(const char *name, size_t len)
{
	for (;;) {
		size_t n = strip_one(name, len);
		if (n == len || n == 0)
			return len;
		len = n;
	}
}

static void base_name(const char **s, size_t *n)
{
	for (size_t i = *n; i-- > 0;) {
		if ((*s)[i] == '/') {
			*s += i + 1;
			*n -= i + 1;
			return;
		}
	}
}

size_t pf_frame_mark(const char *frame, size_t len)
{
	if (len > 4 && frame[len - 4] == '_' && frame[len - 3] == '[' && frame[len - 1] == ']' &&
	    frame[len - 2] && strchr("kijw", frame[len - 2]))
		return 4;
	return 0;
}

/* The bracket group " [...]" that ends frame[0..len) (its last byte is ']'):
 * *open gets the index of its '['. No '[' or ']' inside. @return 1 or 0. */
static int last_bracket(const char *frame, size_t len, size_t *open)
{
	if (len < 4 || frame[len - 1] != ']')
		return 0;
	for (size_t i = len - 1; i-- > 0;) {
		if (frame[i] == ']')
			return 0;
		if (frame[i] == '[') {
			if (i < 2 || frame[i - 1] != ' ' || i + 1 == len - 1)
				return 0;
			*open = i;
			return 1;
		}
	}
	return 0;
}

/* Is s[0..n) "FILE:LINE", FILE not empty, LINE 1 to 4294967295? */
static int is_srcline(const char *s, size_t n, size_t *colon, uint32_t *line)
{
	size_t d = n;
	while (d > 0 && is_digit(s[d - 1]))
		d--;
	if (d == n || d < 2 || s[d - 1] != ':' || n - d > 10)
		return 0;
	uint64_t v = 0;
	for (size_t i = d; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (v == 0 || v > UINT32_MAX)
		return 0;
	*colon = d - 1;
	*line = (uint32_t)v;
	return 1;
}

int pf_frame_srcline(const char *frame, size_t len, size_t *at, size_t *end,
		     const char **file, size_t *file_len, uint32_t *line)
{
	size_t k = len - pf_frame_mark(frame, len), open, colon;
	for (int tries = 0; tries < 2; tries++) {
		if (!last_bracket(frame, k, &open))
			return 0;
		const char *c = frame + open + 1;
		size_t cn = k - 1 - (open + 1);
		if (is_srcline(c, cn, &colon, line)) {
			*at = open - 1;
			*end = k;
			*file = c;
			*file_len = colon;
			return 1;
		}
		k = open - 1; /* " [module]": the source line may come before it */
	}
	return 0;
}

void pf_frame_split(const char *frame, size_t len,
		    const char **func, size_t *func_len,
		    const char **mod, size_t *mod_len)
{
	*func = frame;
	*func_len = len;
	*mod = NULL;
	*mod_len = 0;
	/* a mark (_[i], _[k], ...) and a source line are neither */
	len -= pf_frame_mark(frame, len);
	*func_len = len;
	size_t at, end, fl;
	const char *file;
	uint32_t line;
	int has_src = pf_frame_srcline(frame, len, &at, &end, &file, &fl, &line);
	if (has_src && end == len) { /* "f [src.c:3]": no module */
		*func_len = at;
		return;
	}
	if (len < 2 || frame[len - 1] != ']')
		return;
	if (frame[0] == '[') {
		/* "[module+0xADDR]" */
		for (size_t i = len - 1; i-- > 1;) {
			if (frame[i] == '+' && i + 3 < len && frame[i + 1] == '0' && frame[i + 2] == 'x') {
				*func = NULL;
				*func_len = 0;
				*mod = frame + 1;
				*mod_len = i - 1;
				base_name(mod, mod_len);
				return;
			}
		}
	}
	/* "func [module]" */
	for (size_t i = len - 1; i-- > 0;) {
		if (frame[i] == '[') {
			if (i == 0 || frame[i - 1] != ' ' || i - 1 == 0)
				return;
			const char *m = frame + i + 1;
			size_t ml = len - 1 - (i + 1);
			if (ml == 0 || (ml >= 6 && memcmp(m, "clone ", 6) == 0))
				return;
			*func_len = has_src ? at : i - 1;
			*mod = m;
			*mod_len = ml;
			base_name(mod, mod_len);
			return;
		}
		if (frame[i] == ']')
			return;
	}
}

int pf_folded_sniff(const void *buf, size_t n)
{
	const char *s = buf;
	if (memchr(s, '\0', n))
		return 0;
	size_t i = 0;
	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - s) : n;
		struct pf_folded_line l;
		int r = pf_folded_parse_line(s + i, e - i, &l);
		if (r != 0)
			return r > 0;
		i = e + 1;
	}
	return 1;
}

/* ---------------------------------------------------------------- strtab */

int pf_strtab_init(struct pf_strtab *t)
{
	memset(t, 0, sizeof *t);
	t->nslots = 1024;
	t->slots = calloc(t->nslots, sizeof *t->slots);
	return t->slots ? 0 : -ENOMEM;
}

void pf_strtab_free(struct pf_strtab *t)
{
	free(t->slots);
	free(t->offs);
	free(t->lens);
	free(t->hashes);
	free(t->arena);
	memset(t, 0, sizeof *t);
}

static int64_t lookup(const struct pf_strtab *t, const char *s, size_t len, uint64_t h,
		      uint32_t *slot)
{
	uint32_t mask = t->nslots - 1;
	uint32_t i = (uint32_t)h & mask;
	for (;;) {
		uint32_t v = t->slots[i];
		if (v == 0) {
			*slot = i;
			return -1;
		}
		uint32_t id = v - 1;
		if (t->hashes[id] == h && t->lens[id] == len &&
		    memcmp(t->arena + t->offs[id], s, len) == 0)
			return id;
		i = (i + 1) & mask;
	}
}

int64_t pf_strtab_find(const struct pf_strtab *t, const char *s, size_t len)
{
	uint32_t slot;
	return lookup(t, s, len, XXH3_64bits(s, len), &slot);
}

static int grow_slots(struct pf_strtab *t)
{
	uint32_t n = t->nslots * 2;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 0; id < t->count; id++) {
		uint32_t i = (uint32_t)t->hashes[id] & (n - 1);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

int64_t pf_strtab_intern(struct pf_strtab *t, const char *s, size_t len, int *added)
{
	uint64_t h = XXH3_64bits(s, len);
	uint32_t slot;
	int64_t id = lookup(t, s, len, h, &slot);
	if (added)
		*added = 0;
	if (id >= 0)
		return id;
	if (t->count >= (1u << 31) || len > UINT32_MAX)
		return -E2BIG;
	if (t->count == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 1024;
		uint64_t *o = realloc(t->offs, (size_t)nc * sizeof *o);
		if (!o)
			return -ENOMEM;
		t->offs = o;
		uint32_t *l = realloc(t->lens, (size_t)nc * sizeof *l);
		if (!l)
			return -ENOMEM;
		t->lens = l;
		uint64_t *hs = realloc(t->hashes, (size_t)nc * sizeof *hs);
		if (!hs)
			return -ENOMEM;
		t->hashes = hs;
		t->cap = nc;
	}
	if (t->arena_len + len + 1 > t->arena_cap) {
		/* s may lie in the arena (part of a string of this table, from
		 * pf_strtab_str()): copied by its offset, as the arena may move */
		size_t s_off = t->arena && (uintptr_t)s - (uintptr_t)t->arena < t->arena_len
				       ? (size_t)(s - t->arena)
				       : SIZE_MAX;
		size_t nc = t->arena_cap ? t->arena_cap : 65536;
		while (nc < t->arena_len + len + 1)
			nc *= 2;
		char *a = realloc(t->arena, nc);
		if (!a)
			return -ENOMEM;
		t->arena = a;
		t->arena_cap = nc;
		if (s_off != SIZE_MAX)
			s = a + s_off;
	}
	id = t->count++;
	t->offs[id] = t->arena_len;
	t->lens[id] = (uint32_t)len;
	t->hashes[id] = h;
	memcpy(t->arena + t->arena_len, s, len);
	t->arena[t->arena_len + len] = '\0';
	t->arena_len += len + 1;
	t->slots[slot] = (uint32_t)id + 1;
	if (added)
		*added = 1;
	if ((uint64_t)t->count * 2 > t->nslots && grow_slots(t) < 0)
		return -ENOMEM; /* the string is in; the table is just fuller */
	return id;
}
