/*
 * text-escape - checks tools/common/text.c, the JSON and XML escaping every
 * tool uses, against the rules it follows: RFC 3629 table 3 (well-formed
 * UTF-8), RFC 8259 section 7 (JSON string escapes), XML 1.0 section 2.4
 * (markup characters as entities; characters XML cannot carry). Expected
 * texts are written out by hand from those rules.
 * Usage: text-escape. Prints "text-escape: N checks, M failures".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static int checks, fails;

static void check(int ok, const char *what, const char *got, const char *want)
{
	checks++;
	if (!ok) {
		fails++;
		fprintf(stderr, "text-escape: %s: got [%s], want [%s]\n", what, got ? got : "", want ? want : "");
	}
}

static void utf8(const char *in, size_t n, size_t want, const char *what)
{
	size_t got = pf_utf8_len((const unsigned char *)in, n);
	char g[32], w[32];
	snprintf(g, sizeof(g), "%zu", got);
	snprintf(w, sizeof(w), "%zu", want);
	check(got == want, what, g, w);
}

static void json(const char *in, size_t n, int bad, const char *want, int want_replaced, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r = pf_json_str(f, in, n, bad);
	fclose(f);
	check(len == strlen(want) && memcmp(buf, want, len) == 0, what, buf, want);
	check(r == want_replaced, what, r ? "replaced" : "not replaced", want_replaced ? "replaced" : "not replaced");
	free(buf);
}

static void xml(const char *in, size_t n, const char *want, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pf_xml_write(f, in, n);
	fclose(f);
	check(len == strlen(want) && memcmp(buf, want, len) == 0, what, buf, want);
	free(buf);
}

#define S(x) x, sizeof(x) - 1

int main(void)
{
	/* RFC 3629 table 3 */
	utf8(S("a"), 1, "ASCII");
	utf8(S("\xc3\xa9"), 2, "U+00E9");
	utf8(S("\xe2\x82\xac"), 3, "U+20AC");
	utf8(S("\xf0\x9f\x98\x80"), 4, "U+1F600");
	utf8(S("\xf4\x8f\xbf\xbf"), 4, "U+10FFFF");
	utf8(S("\xc0\x80"), 0, "overlong 2-byte NUL");
	utf8(S("\xc1\xbf"), 0, "overlong 2-byte");
	utf8(S("\xe0\x80\x80"), 0, "overlong 3-byte");
	utf8(S("\xed\xa0\x80"), 0, "surrogate U+D800");
	utf8(S("\xf0\x80\x80\x80"), 0, "overlong 4-byte");
	utf8(S("\xf4\x90\x80\x80"), 0, "above U+10FFFF");
	utf8(S("\xf5\x80\x80\x80"), 0, "lead byte F5");
	utf8(S("\x80"), 0, "lone continuation byte");
	utf8("\xe2\x82\xac", 2, 0, "sequence cut by the end");
	utf8("\xc3\xa9", 0, 0, "no bytes");

	/* RFC 8259 section 7: quotation mark, reverse solidus and controls
	 * escaped (\n \t \r short forms, others \u00XX), the rest as it is */
	json(S("plain"), PF_JSON_BAD_FFFD, "\"plain\"", 0, "plain");
	json(S("a\"b\\c"), PF_JSON_BAD_FFFD, "\"a\\\"b\\\\c\"", 0, "quote and backslash");
	json(S("\n\t\r\x01\x1f\x7f"), PF_JSON_BAD_FFFD, "\"\\n\\t\\r\\u0001\\u001f\\u007f\"", 0, "controls");
	json(S("x\0y"), PF_JSON_BAD_FFFD, "\"x\\u0000y\"", 0, "NUL inside the length");
	json(S("caf\xc3\xa9 \xf0\x9f\x98\x80"), PF_JSON_BAD_FFFD, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"", 0,
	     "well-formed UTF-8 kept");
	json(S("a\xff" "b"), PF_JSON_BAD_FFFD, "\"a\\ufffdb\"", 1, "bad byte as U+FFFD");
	json(S("a\xff" "b"), PF_JSON_BAD_LATIN1, "\"a\\u00ffb\"", 1, "bad byte as Latin-1");
	json(S("\xed\xa0\x80"), PF_JSON_BAD_LATIN1, "\"\\u00ed\\u00a0\\u0080\"", 1, "surrogate bytes as Latin-1");
	json(S("\xe2\x82"), PF_JSON_BAD_FFFD, "\"\\ufffd\\ufffd\"", 1, "cut sequence");

	/* XML 1.0: markup characters as entities; control bytes and bytes of
	 * no well-formed sequence as '?' */
	xml(S("<a & b>\"'"), "&lt;a &amp; b&gt;&quot;&apos;", "markup characters");
	xml(S("f\x01g\x7f"), "f?g?", "control bytes");
	xml(S("\xc3\xa9\xe2\x82\xac"), "\xc3\xa9\xe2\x82\xac", "well-formed UTF-8 kept");
	xml(S("\xed\xa0\x80"), "???", "surrogate bytes");
	xml(S("a\xc3"), "a?", "cut sequence");

	printf("text-escape: %d checks, %d failures\n", checks, fails);
	return fails ? 1 : 0;
}
