/*
 * tools/common/text.c - UTF-8-safe JSON and XML escaping (text.h).
 */
#include "text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t pf_utf8_len(const unsigned char *p, size_t n)
{
	if (!n)
		return 0;
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

char *pf_utf8_fix(const char *s, size_t n, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	/* at most 3 bytes out per byte in */
	char *o = malloc(n > (SIZE_MAX - 1) / 3 ? SIZE_MAX : 3 * n + 1), *q = o;
	if (!o)
		return NULL;
	while (p < end) {
		size_t l = pf_utf8_len(p, (size_t)(end - p));
		if (l) {
			memcpy(q, p, l);
			q += l;
			p += l;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			p++;
		}
	}
	*q = '\0';
	if (len)
		*len = (size_t)(q - o);
	return o;
}

int pf_json_str(FILE *out, const char *s, size_t n, int bad)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	int replaced = 0;
	putc('"', out);
	while (p < end) {
		unsigned c = *p;
		size_t len = pf_utf8_len(p, (size_t)(end - p));
		if (c == '"' || c == '\\') {
			putc('\\', out);
			putc((int)c, out);
		} else if (c == '\n') {
			fputs("\\n", out);
		} else if (c == '\t') {
			fputs("\\t", out);
		} else if (c == '\r') {
			fputs("\\r", out);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
		} else if (len) {
			fwrite(p, 1, len, out);
			p += len;
			continue;
		} else {
			if (bad == PF_JSON_BAD_LATIN1)
				fprintf(out, "\\u%04x", c);
			else
				fputs("\\ufffd", out);
			replaced = 1;
		}
		p++;
	}
	putc('"', out);
	return replaced;
}

void pf_text_write(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			putc(*p, out);
	}
}

void pf_xml_write(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	while (p < e) {
		unsigned c = *p;
		size_t len;
		switch (c) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			len = pf_utf8_len(p, (size_t)(e - p));
			if (c < 0x20 || c == 0x7f || !len) {
				putc('?', out);
				break;
			}
			fwrite(p, 1, len, out);
			p += len;
			continue;
		}
		p++;
	}
}
