/*
 * tools/common/text.h - text that a tool writes for another program to read:
 * JSON strings (RFC 8259) and XML character data (the SVG of pfflame), both
 * UTF-8, whatever bytes the names in a recording hold (not installed).
 */
#ifndef PF_TOOLS_TEXT_H
#define PF_TOOLS_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at p (of the n bytes there):
 * RFC 3629 table 3, no overlong forms, no surrogates, nothing above
 * U+10FFFF; 0 when the bytes there are not one (also when the sequence is
 * cut by the end). */
size_t pf_utf8_len(const unsigned char *p, size_t n);

/* Copies s[0..n) into a malloc'd, NUL-terminated string in which every
 * byte that is not part of a well-formed UTF-8 sequence (pf_utf8_len()) is
 * replaced by U+FFFD (EF BF BD): for formats whose strings must be UTF-8
 * (proto3 `string` fields, pprof's string table). *len gets the copy's
 * length when len is not NULL. @return the copy, or NULL when out of
 * memory. */
char *pf_utf8_fix(const char *s, size_t n, size_t *len);

/* What pf_json_str() writes for a byte that is not part of a well-formed
 * UTF-8 sequence (a name in Latin-1, a cut multi-byte character): */
enum {
	PF_JSON_BAD_FFFD,   /* U+FFFD, the replacement character (pfdiff) */
	PF_JSON_BAD_LATIN1, /* \u00XX, the byte as a Latin-1 character (pfdump) */
};

/* Writes s[0..n) as a JSON string with its quotes: '"' and '\' escaped,
 * \n \t \r as such, other bytes below 0x20 and 0x7f as \u00XX, well-formed
 * UTF-8 as it is, every other byte as `bad` says. JSON text is UTF-8 (RFC
 * 8259 8.1): the output always is. @return 1 when a byte was replaced, else 0. */
int pf_json_str(FILE *out, const char *s, size_t n, int bad);

/* Writes s[0..n) as XML character data (also fit for an attribute value):
 * < > & " ' as entities; well-formed UTF-8 as it is; control bytes and
 * bytes of no well-formed sequence as '?', which XML 1.0 cannot carry. */
void pf_xml_write(FILE *out, const char *s, size_t n);

/* Writes the string s as plain text for a terminal: control bytes (below
 * 0x20, and 0x7f) as \xHH, as pffold writes them in folded stacks, so that
 * no escape sequence or line break from a name reaches the screen; every
 * other byte as it is. */
void pf_text_write(FILE *out, const char *s);

#endif
