/*
 * pfdump/tracepoint.c - EVENT descriptions and tracepoint raw data
 * (tracepoint.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pfdump/tracepoint.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

const uint8_t *pfd_event_desc(const uint8_t *payload, size_t size, size_t *len)
{
	*len = 0;
	if (size < 12)
		return NULL;
	uint64_t end = 12 + (uint64_t)le32(payload) + 8 * (uint64_t)le32(payload + 4) +
		       ((uint64_t)payload[8] | (uint64_t)payload[9] << 8);
	if (end >= size)
		return NULL;
	*len = size - (size_t)end;
	return payload + end;
}

/* Reads "key:VALUE;" from the text at *p (up to e); @return the value's start and length. */
static const char *attr_of(const char *line, const char *e, const char *key, size_t *vlen)
{
	size_t kl = strlen(key);
	for (const char *p = line; p + kl < e; p++) {
		if (memcmp(p, key, kl) == 0 && (p == line || p[-1] == '\t' || p[-1] == ' ' || p[-1] == ';')) {
			const char *v = p + kl, *q = v;
			while (q < e && *q != ';')
				q++;
			*vlen = (size_t)(q - v);
			return v;
		}
	}
	return NULL;
}

static int num_of(const char *line, const char *e, const char *key, uint32_t *out)
{
	size_t vl;
	const char *v = attr_of(line, e, key, &vl);
	if (!v || !vl || vl > 9)
		return -1;
	uint32_t x = 0;
	for (size_t i = 0; i < vl; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (uint32_t)(v[i] - '0');
	}
	*out = x;
	return 0;
}

static int has_word(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w);
	for (size_t i = 0; i + wl <= n; i++)
		if (memcmp(s + i, w, wl) == 0 && (i == 0 || s[i - 1] == ' ') &&
		    (i + wl == n || s[i + wl] == ' ' || s[i + wl] == '[' || s[i + wl] == '*'))
			return 1;
	return 0;
}

/* One "field:TYPE NAME[N];" declaration (decl, dl bytes, without "field:"). */
static int parse_decl(const char *decl, size_t dl, struct pfd_tp_field *f)
{
	while (dl && (decl[dl - 1] == ' ' || decl[dl - 1] == '\t'))
		dl--;
	size_t nend = dl;
	if (nend && decl[nend - 1] == ']') {
		while (nend && decl[nend - 1] != '[')
			nend--;
		if (!nend)
			return -1;
		nend--;
		f->array = 1;
	}
	size_t nbeg = nend;
	while (nbeg && decl[nbeg - 1] != ' ' && decl[nbeg - 1] != '*')
		nbeg--;
	if (nbeg == nend || nend - nbeg >= sizeof(f->name))
		return -1;
	for (size_t i = nbeg; i < nend; i++) /* a C identifier, as the kernel writes them */
		if (!(decl[i] == '_' || (decl[i] >= '0' && decl[i] <= '9') || (decl[i] >= 'a' && decl[i] <= 'z') ||
		      (decl[i] >= 'A' && decl[i] <= 'Z')))
			return -1;
	memcpy(f->name, decl + nbeg, nend - nbeg);
	f->name[nend - nbeg] = 0;
	const char *type = decl;
	size_t tl = nbeg;
	f->is_pointer = memchr(type, '*', tl) != NULL;
	f->is_char = has_word(type, tl, "char");
	if (has_word(type, tl, "__data_loc"))
		f->loc = 1;
	else if (has_word(type, tl, "__rel_loc"))
		f->loc = 2;
	return 0;
}

int pfd_tp_parse(const char *text, size_t len, struct pfd_tp *out)
{
	memset(out, 0, sizeof(*out));
	const char *p = text, *end = text + len;
	int cap = 0;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		const char *l = p;
		while (l < e && (*l == ' ' || *l == '\t'))
			l++;
		if ((size_t)(e - l) > 5 && memcmp(l, "name:", 5) == 0) {
			const char *v = l + 5;
			while (v < e && *v == ' ')
				v++;
			size_t n = (size_t)(e - v);
			if (n >= sizeof(out->name))
				n = sizeof(out->name) - 1;
			memcpy(out->name, v, n);
			out->name[n] = 0;
		} else if ((size_t)(e - l) > 6 && memcmp(l, "field:", 6) == 0) {
			const char *d = l + 6, *semi = memchr(d, ';', (size_t)(e - d));
			struct pfd_tp_field f;
			memset(&f, 0, sizeof(f));
			if (semi && parse_decl(d, (size_t)(semi - d), &f) == 0 &&
			    num_of(semi, e, "offset:", &f.offset) == 0 && num_of(semi, e, "size:", &f.size) == 0) {
				uint32_t sg = 0;
				num_of(semi, e, "signed:", &sg);
				f.is_signed = sg != 0;
				if (strncmp(f.name, "common_", 7) != 0) {
					if (out->n == cap) {
						int nc = cap ? cap * 2 : 16;
						struct pfd_tp_field *nf = realloc(out->f, (size_t)nc * sizeof(*nf));
						if (!nf) {
							pfd_tp_free(out);
							return -ENOMEM;
						}
						out->f = nf;
						cap = nc;
					}
					out->f[out->n++] = f;
				}
			}
		}
		p = e + 1;
	}
	if (!out->n && !out->name[0])
		return -EBADMSG;
	return 0;
}

void pfd_tp_free(struct pfd_tp *tp)
{
	free(tp->f);
	memset(tp, 0, sizeof(*tp));
}

static size_t str_len(const uint8_t *s, size_t n)
{
	const uint8_t *z = memchr(s, 0, n);
	return z ? (size_t)(z - s) : n;
}

int pfd_tp_decode(const struct pfd_tp *tp, const uint8_t *raw, size_t n, pfd_tp_emit emit, void *ctx)
{
	int k = 0;
	for (int i = 0; i < tp->n; i++) {
		const struct pfd_tp_field *f = &tp->f[i];
		if ((uint64_t)f->offset + f->size > n)
			return -EBADMSG;
		const uint8_t *p = raw + f->offset;
		if (f->loc) {
			if (f->size < 4)
				return -EBADMSG;
			uint32_t v = le32(p);
			uint64_t off = v & 0xffff, len = v >> 16;
			if (f->loc == 2)
				off += (uint64_t)f->offset + f->size;
			if (off + len > n)
				return -EBADMSG;
			const uint8_t *d = raw + off;
			if (f->is_char)
				emit(ctx, f->name, PFD_TP_STRING, 0, 0, (const char *)d, str_len(d, (size_t)len));
			else
				emit(ctx, f->name, PFD_TP_BYTES, 0, 0, (const char *)d, (size_t)len);
		} else if (f->array || (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)) {
			if (f->is_char && f->array)
				emit(ctx, f->name, PFD_TP_STRING, 0, 0, (const char *)p, str_len(p, f->size));
			else
				emit(ctx, f->name, PFD_TP_BYTES, 0, 0, (const char *)p, f->size);
		} else {
			uint64_t u = 0;
			memcpy(&u, p, f->size); /* the recording machine's order: pfdump reads same-order files */
			int64_t s;
			switch (f->size) {
			case 1: { int8_t x; memcpy(&x, p, 1); s = x; break; }
			case 2: { int16_t x; memcpy(&x, p, 2); s = x; break; }
			case 4: { int32_t x; memcpy(&x, p, 4); s = x; break; }
			default: { int64_t x; memcpy(&x, p, 8); s = x; break; }
			}
			if (f->size < 8 && !f->is_signed) {
				uint64_t mask = (1ull << (8 * f->size)) - 1;
				u = (uint64_t)s & mask;
			}
			if (f->is_pointer)
				emit(ctx, f->name, PFD_TP_POINTER, s, u, NULL, 0);
			else if (f->is_signed)
				emit(ctx, f->name, PFD_TP_SIGNED, s, (uint64_t)s, NULL, 0);
			else
				emit(ctx, f->name, PFD_TP_UNSIGNED, s, u, NULL, 0);
		}
		k++;
	}
	return k;
}
