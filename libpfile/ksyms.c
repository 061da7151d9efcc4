/*
 * ksyms.c - the kernel's text symbols (ksyms.h): kallsyms text, the KSYMS
 * section payload (format/pfile.md 4.11) and address lookup.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "internal/alloc.h"
#include "internal/bound.h"

/* Bytes the name scan takes at a time: 16 (SSE2), 8 (a word, on
 * little-endian machines) or 1; tests build the other two with -D. */
#ifndef PF_KSYMS_SCAN
#if defined(__SSE2__)
#define PF_KSYMS_SCAN 16
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PF_KSYMS_SCAN 8
#else
#define PF_KSYMS_SCAN 1
#endif
#endif
#if PF_KSYMS_SCAN == 16
#include <emmintrin.h>
#endif

/* A parsed table's symbol (pf_ksyms_parse()). */
struct pf_ksyms_row {
	uint64_t addr;
	uint32_t name_off;      /* in k->names */
	uint16_t module;
	char type;
};

/* In a decoded table, symbol i * STRIDE: its address and where its entries
 * begin in the address, module and name columns (bytes from each column's
 * start; the type column has one byte a symbol). */
#define STRIDE 64
struct pf_ksyms_mark {
	uint64_t addr;
	uint32_t a_off, m_off, n_off;
};

static void emsg(char *m, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void emsg(char *m, size_t sz, const char *fmt, ...)
{
	if (!sz)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sz, fmt, ap);
	va_end(ap);
}

void pf_ksyms_free(struct pf_ksyms *k)
{
	if (!k)
		return;
	free(k->mods);
	free(k->rows);
	free(k->names);
	free(k->block);
	free(k->marks);
	memset(k, 0, sizeof(*k));
}

/* The one rule of a name, the text parser's and the payload decoder's
 * (format/pfile.md 4.11): 1..max bytes, none of them NUL, tab or newline
 * (the bytes kallsyms text cannot carry in a name: it ends a line or a
 * field). So a table either reader accepts writes out as the other reads
 * it (tests/fuzz/fuzz_ksyms.c). */
static int name_ok(const char *p, size_t n, size_t max)
{
	return n && n <= max && !memchr(p, 0, n) && !memchr(p, '\t', n) && !memchr(p, '\n', n);
}

/* Index (1-based) of module `name`, added if new. @return it, or -ENOMEM/-EINVAL. */
static int64_t module_id(struct pf_ksyms *k, const char *name, size_t len)
{
	if (!name_ok(name, len, sizeof(k->mods[0].name) - 1))
		return -EINVAL;
	for (uint32_t i = 0; i < k->n_mods; i++)
		if (strlen(k->mods[i].name) == len && memcmp(k->mods[i].name, name, len) == 0)
			return (int64_t)i + 1;
	if (k->n_mods >= 65535)
		return -EINVAL;
	if (pfi_grow((void **)&k->mods, &k->mods_cap, (uint64_t)k->n_mods + 1, sizeof(*k->mods), 16) < 0)
		return -ENOMEM;
	struct pf_ksyms_module *m = &k->mods[k->n_mods++];
	memset(m, 0, sizeof(*m));
	memcpy(m->name, name, len);
	return k->n_mods;
}

static int sym_add(struct pf_ksyms *k, uint64_t addr, char type, uint16_t module, const char *name, size_t len)
{
	if (pfi_grow((void **)&k->rows, &k->rows_cap, (uint64_t)k->n_syms + 1, sizeof(*k->rows), 1024) < 0)
		return -ENOMEM;
	if (k->names_len + len + 1 > UINT32_MAX ||
	    pfi_grow_bytes((void **)&k->names, &k->names_cap, k->names_len + len + 1, 65536) < 0)
		return -ENOMEM;
	struct pf_ksyms_row *s = &k->rows[k->n_syms++];
	s->addr = addr;
	s->module = module;
	s->type = type;
	s->name_off = (uint32_t)k->names_len;
	memcpy(k->names + k->names_len, name, len);
	k->names[k->names_len + len] = 0;
	k->names_len += len + 1;
	return 0;
}

static int is_text_type(char c)
{
	return c == 't' || c == 'T' || c == 'w' || c == 'W';
}

/* Stable sort by address: merge sort with a scratch array. */
static void merge_sort(struct pf_ksyms_row *a, struct pf_ksyms_row *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(a, tmp, h);
	merge_sort(a + h, tmp, n - h);
	if (a[h - 1].addr <= a[h].addr)
		return;
	size_t i = 0, j = h, o = 0;
	while (i < h && j < n)
		tmp[o++] = a[j].addr < a[i].addr ? a[j++] : a[i++];
	while (i < h)
		tmp[o++] = a[i++];
	while (j < n)
		tmp[o++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

static int sort_syms(struct pf_ksyms *k)
{
	int sorted = 1;
	for (uint32_t i = 1; i < k->n_syms && sorted; i++)
		sorted = k->rows[i - 1].addr <= k->rows[i].addr;
	if (sorted)
		return 0;
	struct pf_ksyms_row *tmp = malloc((size_t)k->n_syms * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	merge_sort(k->rows, tmp, k->n_syms);
	free(tmp);
	return 0;
}

int pf_ksyms_parse(struct pf_ksyms *k, const char *text, size_t len, char *errmsg, size_t errmsg_size)
{
	emsg(errmsg, errmsg_size, "%s", "");
	size_t pos = 0;
	unsigned long line = 0;
	uint64_t listed = 0, nonzero = 0;
	int rc = 0;
	while (pos < len) {
		line++;
		const char *l = text + pos;
		const char *nl = memchr(l, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - l) : len - pos;
		pos += ll + (nl ? 1 : 0);
		if (!ll)
			continue;
		/* ADDRESS */
		size_t i = 0;
		uint64_t addr = 0;
		while (i < ll && i < 16) {
			char c = l[i];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
				: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
			if (d < 0)
				break;
			addr = addr << 4 | (uint64_t)d;
			i++;
		}
		if (!i || i >= ll || l[i] != ' ') {
			emsg(errmsg, errmsg_size, "line %lu: not \"ADDRESS TYPE NAME\" (a hexadecimal address of "
				 "at most 16 digits, a space, a type letter, a space, a name)", line);
			rc = -EBADMSG;
			goto fail;
		}
		i++;
		if (i + 2 > ll || l[i + 1] != ' ' || !((l[i] >= 'a' && l[i] <= 'z') || (l[i] >= 'A' && l[i] <= 'Z'))) {
			emsg(errmsg, errmsg_size, "line %lu: no type letter after the address", line);
			rc = -EBADMSG;
			goto fail;
		}
		char type = l[i];
		i += 2;
		const char *name = l + i;
		const char *tab = memchr(name, '\t', ll - i);
		size_t nlen = tab ? (size_t)(tab - name) : ll - i;
		if (!name_ok(name, nlen, PF_KSYMS_MAX_NAME)) {
			emsg(errmsg, errmsg_size, "line %lu: %s symbol name", line,
			     !nlen ? "no" : nlen > PF_KSYMS_MAX_NAME ? "too long a" : "a NUL byte in the");
			rc = -EBADMSG;
			goto fail;
		}
		uint16_t mod = 0;
		if (tab) {
			const char *m = tab + 1;
			size_t ml = ll - (size_t)(m - l);
			if (ml < 3 || m[0] != '[' || m[ml - 1] != ']') {
				emsg(errmsg, errmsg_size, "line %lu: a tab not followed by \"[MODULE]\"", line);
				rc = -EBADMSG;
				goto fail;
			}
			if (is_text_type(type)) {
				int64_t id = module_id(k, m + 1, ml - 2);
				if (id == -EINVAL) {
					emsg(errmsg, errmsg_size, "line %lu: module name over 63 bytes or with a NUL byte, "
					     "or over 65535 modules", line);
					rc = -EBADMSG;
					goto fail;
				}
				if (id < 0) {
					rc = (int)id;
					goto fail;
				}
				mod = (uint16_t)id;
			}
		}
		listed++;
		if (addr)
			nonzero++;
		if (!is_text_type(type))
			continue;
		if ((rc = sym_add(k, addr, type, mod, name, nlen)) < 0)
			goto fail;
	}
	if (listed && !nonzero) {
		/* kptr_restrict or perf_event_paranoid: addresses shown as 0 */
		free(k->rows);
		k->rows = NULL;
		k->n_syms = k->rows_cap = 0;
		k->hidden = 1;
		return 0;
	}
	if ((rc = sort_syms(k)) < 0)
		goto fail;
	return 0;
fail:
	pf_ksyms_free(k);
	return rc;
}

int pf_ksyms_set_module(struct pf_ksyms *k, const char *name, uint64_t base, uint64_t size_bytes,
			const uint8_t *bid, size_t bid_size)
{
	if (!name || bid_size > 64)
		return -EINVAL;
	int64_t id = module_id(k, name, strlen(name));
	if (id < 0)
		return (int)id;
	struct pf_ksyms_module *m = &k->mods[id - 1];
	m->base = base;
	m->size_bytes = size_bytes;
	m->build_id_size = (uint8_t)(bid ? bid_size : 0);
	if (bid && bid_size)
		memcpy(m->build_id, bid, bid_size);
	return 0;
}

static int put_uleb(struct pf_buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		t[n++] = c | (v ? 0x80 : 0);
	} while (v);
	return pf_buf_put(b, t, n);
}

int pf_ksyms_encode(const struct pf_ksyms *k, struct pf_buf *out)
{
	if (k->n_mods > 65535 || k->build_id_size > 64)
		return -EINVAL;
	uint8_t h[16] = { 0 };
	h[0] = k->build_id_size;
	h[4] = (uint8_t)k->n_mods;
	h[5] = (uint8_t)(k->n_mods >> 8);
	for (int i = 0; i < 4; i++)
		h[8 + i] = (uint8_t)(k->n_syms >> (8 * i));
	int rc = pf_buf_put(out, h, sizeof(h));
	rc |= pf_buf_put(out, k->build_id, k->build_id_size);
	for (uint32_t i = 0; i < k->n_mods && !rc; i++) {
		const struct pf_ksyms_module *m = &k->mods[i];
		size_t nl = strlen(m->name);
		if (m->build_id_size > 64)
			return -EINVAL;
		uint8_t e[2] = { m->build_id_size, (uint8_t)nl };
		rc |= pf_buf_put_le64(out, m->base);
		rc |= pf_buf_put_le64(out, m->size_bytes);
		rc |= pf_buf_put(out, e, 2);
		rc |= pf_buf_put(out, m->build_id, m->build_id_size);
		rc |= pf_buf_put(out, m->name, nl);
	}
	if (rc)
		return -ENOMEM;
	if (k->block) /* a decoded table: its columns as they are */
		return pf_buf_put(out, k->col_addr, k->cols_len) ? -ENOMEM : 0;
	/* four columns, which compress better than rows (4.11) */
	uint64_t prev = 0;
	for (uint32_t i = 0; i < k->n_syms && !rc; i++) {
		const struct pf_ksyms_row *s = &k->rows[i];
		if (s->addr < prev || s->module > k->n_mods || !is_text_type(s->type))
			return -EINVAL;
		rc |= put_uleb(out, s->addr - prev);
		prev = s->addr;
	}
	for (uint32_t i = 0; i < k->n_syms && !rc; i++)
		rc |= pf_buf_put(out, &k->rows[i].type, 1);
	for (uint32_t i = 0; i < k->n_syms && !rc; i++)
		rc |= put_uleb(out, k->rows[i].module);
	for (uint32_t i = 0; i < k->n_syms && !rc; i++) {
		const char *name = k->names + k->rows[i].name_off;
		size_t nl = strnlen(name, PF_KSYMS_MAX_NAME + 1);
		if (!name_ok(name, nl, PF_KSYMS_MAX_NAME))
			return -EINVAL;
		rc |= pf_buf_put(out, name, nl + 1);
	}
	return rc ? -ENOMEM : 0;
}

/* @return 0, or -1 when the value runs past `size` or over 64 bits. */
static int get_uleb(const uint8_t *d, size_t size, size_t *pos, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned sh = 0; sh < 64; sh += 7) {
		if (*pos >= size)
			return -1;
		uint8_t c = d[(*pos)++];
		if (sh == 63 && (c & 0x7e))
			return -1;
		r |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/*
 * The name column: n NUL-terminated names of 1..PF_KSYMS_MAX_NAME bytes
 * from p (len bytes at most); marks[i / STRIDE].n_off = where name i
 * begins, for every STRIDE-th. Sixteen bytes at a time with SSE2 (a mask
 * of the zero bytes), else eight on little-endian machines (a word with
 * 0x80 in each zero byte, exact: no borrow runs between bytes), else one:
 * most blocks hold no NUL.
 * @return bytes of the n names, or 0 with *bad = the first bad name's
 * index (n if the column ends first) and *at = where it begins.
 */
/* A NUL at e ends the name that began at *start (name *c). @return 1 when
 * it was the n-th, -1 when the name is empty or too long, else 0. */
static inline int name_end(size_t e, size_t *start, uint32_t *c, uint32_t n, struct pf_ksyms_mark *marks)
{
	if (e == *start || e - *start > PF_KSYMS_MAX_NAME)
		return -1;
	if (!(*c % STRIDE))
		marks[*c / STRIDE].n_off = (uint32_t)*start;
	*start = e + 1;
	return ++*c == n;
}

static size_t scan_names(const char *p, size_t len, uint32_t n, struct pf_ksyms_mark *marks, uint32_t *bad,
			 size_t *at)
{
	uint32_t c = 0;
	size_t start = 0, j = 0;
	if (!n)
		return 0;
	/* a name too long is found at its NUL (or the column ends first) */
#if PF_KSYMS_SCAN == 16
	for (; j + 16 <= len; j += 16) {
		unsigned z = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + j)), _mm_setzero_si128()));
		while (z) {
			int r = name_end(j + (size_t)__builtin_ctz(z), &start, &c, n, marks);
			z &= z - 1;
			if (r < 0)
				goto bad_name;
			if (r)
				return start;
		}
	}
#elif PF_KSYMS_SCAN == 8
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
	for (; j + 8 <= len; j += 8) {
		uint64_t w;
		memcpy(&w, p + j, 8);
		uint64_t z = ~(((w & lo7) + lo7) | w | lo7);
		while (z) {
			int r = name_end(j + (size_t)(__builtin_ctzll(z) >> 3), &start, &c, n, marks);
			z &= z - 1;
			if (r < 0)
				goto bad_name;
			if (r)
				return start;
		}
	}
#endif
	for (; j < len; j++) {
		if (p[j])
			continue;
		int r = name_end(j, &start, &c, n, marks);
		if (r < 0)
			goto bad_name;
		if (r)
			return start;
	}
bad_name:
	*bad = c;
	*at = start;
	return 0;
}

static int decode(struct pf_ksyms *k, uint8_t *d, size_t size, char *errmsg, size_t errmsg_size)
{
	emsg(errmsg, errmsg_size, "%s", "");
	int rc = -EBADMSG;
	if (size < 16) {
		emsg(errmsg, errmsg_size, "KSYMS payload of %zu bytes, shorter than its 16-byte header", size);
		return -EBADMSG;
	}
	if (size > UINT32_MAX) {
		emsg(errmsg, errmsg_size, "KSYMS payload of %zu bytes, over 4 GiB", size);
		return -EBADMSG;
	}
	uint8_t bsz = d[0];
	uint32_t n_mods = pf_le32(d + 4), n_syms = pf_le32(d + 8);
	size_t pos = 16;
	if (bsz > 64 || n_mods > 65535 || bsz > size - pos) {
		emsg(errmsg, errmsg_size, "KSYMS header: %s", bsz > 64 ? "build-id over 64 bytes"
			 : n_mods > 65535 ? "more than 65535 modules" : "build-id runs past the payload");
		return -EBADMSG;
	}
	/* every symbol takes at least 4 bytes: bound the table by the payload */
	if (n_syms > (size - pos) / 4) {
		emsg(errmsg, errmsg_size, "KSYMS header: %u symbols cannot fit in %zu bytes", n_syms, size);
		return -EBADMSG;
	}
	k->build_id_size = bsz;
	memcpy(k->build_id, d + pos, bsz);
	pos += bsz;
	if (n_mods) {
		k->mods = calloc(n_mods, sizeof(*k->mods));
		if (!k->mods)
			goto nomem;
		k->mods_cap = n_mods;
	}
	for (uint32_t i = 0; i < n_mods; i++) {
		size_t at = pos;
		if (size - pos < 18)
			goto bad_mod;
		struct pf_ksyms_module *m = &k->mods[i];
		m->base = pf_le64(d + pos);
		m->size_bytes = pf_le64(d + pos + 8);
		m->build_id_size = d[pos + 16];
		size_t nl = d[pos + 17];
		pos += 18;
		if (m->build_id_size > 64 || !nl || nl > 63 || m->build_id_size + nl > size - pos ||
		    !name_ok((const char *)d + pos + m->build_id_size, nl, 63)) {
			pos = at;
			goto bad_mod;
		}
		memcpy(m->build_id, d + pos, m->build_id_size);
		pos += m->build_id_size;
		memcpy(m->name, d + pos, nl);
		pos += nl;
		k->n_mods++;
		continue;
bad_mod:
		emsg(errmsg, errmsg_size, "KSYMS module %u at payload offset %zu: runs past the payload, has "
			 "a bad length or a NUL, tab or newline in its name", i, at);
		goto fail;
	}
	k->marks = malloc(((size_t)n_syms / STRIDE + 1) * sizeof(*k->marks));
	if (!k->marks)
		goto nomem;
	uint64_t addr = 0;
	const char *why = NULL;
	size_t at = pos;
	uint32_t i;
	const size_t a0 = pos;
	for (i = 0; i < n_syms; i++) { /* addresses */
		uint64_t delta;
		at = pos;
		if (pos < size && d[pos] < 0x80) { /* one byte: most of them */
			delta = d[pos++];
		} else if (get_uleb(d, size, &pos, &delta) < 0) {
			why = "address delta runs past the payload";
			goto bad_sym;
		}
		if (i && addr + delta < addr) {
			why = "address past 2^64";
			goto bad_sym;
		}
		addr += delta;
		if (!(i % STRIDE)) {
			k->marks[i / STRIDE].addr = addr;
			k->marks[i / STRIDE].a_off = (uint32_t)(at - a0);
		}
	}
	if (n_syms > size - pos) {
		at = size;
		i = (uint32_t)(size - pos);
		why = "type runs past the payload";
		goto bad_sym;
	}
	const size_t t0 = pos;
	for (i = 0; i < n_syms; i++) { /* types */
		if (!is_text_type((char)d[pos + i])) {
			at = pos + i;
			why = "type is not t, T, w or W";
			goto bad_sym;
		}
	}
	pos += n_syms;
	const size_t m0 = pos;
	for (i = 0; i < n_syms; i++) { /* modules */
		uint64_t mod;
		at = pos;
		if (pos < size && d[pos] < 0x80)
			mod = d[pos++];
		else if (get_uleb(d, size, &pos, &mod) < 0)
			mod = UINT64_MAX;
		if (mod > n_mods) {
			why = "module index past the module table or the payload";
			goto bad_sym;
		}
		if (!(i % STRIDE))
			k->marks[i / STRIDE].m_off = (uint32_t)(at - m0);
	}
	size_t nlen = 0;
	if (n_syms) {
		size_t nat = 0;
		nlen = scan_names((const char *)d + pos, size - pos, n_syms, k->marks, &i, &nat);
		if (!nlen) {
			at = pos + nat;
			why = i == n_syms || !memchr(d + at, 0, size - at) ? "name runs past the payload"
				: "name empty or over 1024 bytes";
			goto bad_sym;
		}
		/* the rest of name_ok(): no tab or newline (glibc's memchr, about
		 * 0.1 ms for a kernel's 3 MB of names) */
		const char *nc = (const char *)d + pos, *bad = memchr(nc, '\t', nlen), *nlb = memchr(nc, '\n', nlen);
		if (!bad || (nlb && nlb < bad))
			bad = nlb;
		if (bad) {
			at = (size_t)(bad - (const char *)d);
			i = 0;
			for (const char *q = nc; q < bad; q++)
				i += !*q;
			why = "name holds a tab or a newline";
			goto bad_sym;
		}
	}
	k->block = d;
	k->col_addr = d + a0;
	k->col_type = d + t0;
	k->col_mod = d + m0;
	k->col_name = (const char *)d + pos;
	k->cols_len = pos + nlen - a0;
	k->n_syms = n_syms;
	return 0;
bad_sym:
	emsg(errmsg, errmsg_size, "KSYMS symbol %u at payload offset %zu: %s", i, at, why);
	goto fail;
nomem:
	rc = -ENOMEM;
fail:
	pf_ksyms_free(k);
	return rc;
}

int pf_ksyms_decode(struct pf_ksyms *k, const uint8_t *data, size_t size, char *errmsg, size_t errmsg_size)
{
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	int rc = decode(k, copy, size, errmsg, errmsg_size);
	if (rc < 0)
		free(copy);
	return rc;
}

int pf_ksyms_decode_owned(struct pf_ksyms *k, uint8_t *data, size_t size, char *errmsg, size_t errmsg_size)
{
	return decode(k, data, size, errmsg, errmsg_size);
}

static int end_marker(const char *n)
{
	static const char *const ends[] = { "_etext", "_einittext", "__irqentry_text_end", "__softirqentry_text_end",
					    "__entry_text_end" };
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (strcmp(n, ends[i]) == 0)
			return 1;
	return 0;
}

/* An unsigned LEB128 value that decode() checked. @return it; *len = its bytes. */
static uint64_t uleb_at(const uint8_t *p, size_t *len)
{
	uint64_t v = 0;
	size_t n = 0;
	uint8_t c;
	do {
		c = p[n];
		if (n < 10)
			v |= (uint64_t)(c & 0x7f) << (7 * n);
		n++;
	} while (c & 0x80);
	*len = n;
	return v;
}

/* A walk along a decoded table: symbol i, its address, and where its
 * entries begin in the address, module and name columns. */
struct walk {
	uint32_t i;
	uint64_t addr;
	size_t a, m, n;
};

static void walk_mark(const struct pf_ksyms *k, uint32_t b, struct walk *w)
{
	const struct pf_ksyms_mark *mk = &k->marks[b];
	*w = (struct walk){ b * STRIDE, mk->addr, mk->a_off, mk->m_off, mk->n_off };
}

/* To the next symbol's address (the caller knows there is one). */
static void walk_addr(const struct pf_ksyms *k, struct walk *w)
{
	size_t l;
	uleb_at(k->col_addr + w->a, &l);
	w->a += l;
	w->addr += uleb_at(k->col_addr + w->a, &l);
	w->i++;
}

/* First mark whose address is at least (ge) or above (!ge) addr; 0..n_marks. */
static uint32_t mark_search(const struct pf_ksyms *k, uint64_t addr, int ge)
{
	uint32_t lo = 0, hi = (k->n_syms + STRIDE - 1) / STRIDE;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ge ? k->marks[mid].addr < addr : k->marks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int pf_ksyms_sym(const struct pf_ksyms *k, uint32_t i, struct pf_ksym *out)
{
	if (i >= k->n_syms)
		return -ERANGE;
	if (!k->block) {
		const struct pf_ksyms_row *r = &k->rows[i];
		*out = (struct pf_ksym){ r->addr, k->names + r->name_off, r->module, r->type };
		return 0;
	}
	struct walk w;
	walk_mark(k, i / STRIDE, &w);
	while (w.i < i) {
		walk_addr(k, &w);
		size_t l;
		uleb_at(k->col_mod + w.m, &l);
		w.m += l;
		w.n += strlen(k->col_name + w.n) + 1;
	}
	size_t l;
	*out = (struct pf_ksym){ w.addr, k->col_name + w.n, (uint16_t)uleb_at(k->col_mod + w.m, &l),
				 (char)k->col_type[i] };
	return 0;
}

/* The symbols at the largest address at or below addr: the first listed
 * there, *first, and *next = the one after the last. @return 0, -1 if none. */
static int locate(const struct pf_ksyms *k, uint64_t addr, uint32_t *first, uint32_t *next)
{
	if (!k->block) {
		uint32_t lo = PFC_UPPER_BOUND(k->rows, k->n_syms, addr, addr); /* first symbol above addr */
		if (!lo)
			return -1;
		uint32_t i = lo - 1;
		uint64_t at = k->rows[i].addr;
		while (i && k->rows[i - 1].addr == at) /* aliases: the first listed */
			i--;
		*first = i;
		*next = lo;
		return 0;
	}
	uint32_t b = mark_search(k, addr, 0); /* marks from b on lie above addr */
	if (!b)
		return -1;
	struct walk w;
	walk_mark(k, b - 1, &w);
	uint32_t end = b * STRIDE < k->n_syms ? b * STRIDE : k->n_syms;
	uint32_t last = w.i;
	uint64_t at = w.addr;
	while (w.i + 1 < end) {
		walk_addr(k, &w);
		if (w.addr > addr)
			break;
		last = w.i;
		at = w.addr;
	}
	*next = last + 1;
	/* aliases: the first listed at `at`, perhaps some marks back */
	uint32_t j = mark_search(k, at, 1);
	if (!j) {
		*first = 0;
		return 0;
	}
	walk_mark(k, j - 1, &w);
	while (w.addr != at)
		walk_addr(k, &w);
	*first = w.i;
	return 0;
}

int64_t pf_ksyms_find(const struct pf_ksyms *k, uint64_t addr)
{
	uint32_t first, next;
	struct pf_ksym s;
	if (locate(k, addr, &first, &next) < 0)
		return -1;
	/* of several symbols at one address (aliases), the last listed that is
	 * not an end marker: the one perf names (perf gives the others no size
	 * and prefers a symbol with one; `__x86_indirect_thunk_rax`, not
	 * `__pi___x86_indirect_thunk_rax` listed before it) */
	uint32_t i = next - 1;
	int64_t pfx = -1; /* a __pfx_ padding symbol: only if no other */
	for (;;) {
		if (pf_ksyms_sym(k, i, &s) < 0)
			return -1;
		if (!end_marker(s.name)) {
			/* perf prefers the alias with fewer leading underscores
			 * (choose_best_symbol()): FUNC over __pfx_FUNC */
			if (strncmp(s.name, "__pfx_", 6) != 0)
				break;
			if (pfx < 0)
				pfx = i;
		}
		if (i == first) {
			if (pfx < 0)
				return -1;
			i = (uint32_t)pfx;
			if (pf_ksyms_sym(k, i, &s) < 0)
				return -1;
			break;
		}
		i--;
	}
	if (s.module) {
		const struct pf_ksyms_module *m = &k->mods[s.module - 1];
		if (m->size_bytes && (addr < m->base || addr - m->base >= m->size_bytes))
			return -1;
		if (next == k->n_syms && !m->size_bytes)
			return -1;
	} else if (next == k->n_syms) {
		return -1;
	}
	return i;
}
