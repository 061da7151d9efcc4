/*
 * fuzz_tpformat - pfdump's reader of the description pfrec appends to EVENT
 * payloads and of tracepoint format files (tools/pfdump/tracepoint.c),
 * which it takes from the recording: untrusted input.
 *
 * Input: a u16 (LE) length L, L bytes of format-file text, then the raw
 * data of one sample. The text is parsed; when it parses, the raw data is
 * decoded field by field. Invariants: every field emitted lies inside the
 * raw data (strings and bytes), names are NUL-terminated and non-empty,
 * at most as many fields are emitted as the format has. The whole input is
 * also read as an EVENT payload whose description is found.
 */
#include "fuzz.h"
#include "pfdump/tracepoint.h"

static const uint8_t *raw_lo, *raw_hi;
static int emitted;

static void emit(void *ctx, const char *name, enum pfd_tp_kind kind, int64_t s, uint64_t u, const char *str,
		 size_t len)
{
	(void)ctx;
	(void)s;
	(void)u;
	FUZZ_ASSERT(name && name[0] && strlen(name) < 64);
	if (kind == PFD_TP_STRING || kind == PFD_TP_BYTES) {
		FUZZ_ASSERT(len == 0 || ((const uint8_t *)str >= raw_lo && (const uint8_t *)str + len <= raw_hi));
		if (len) {
			volatile uint8_t x = (uint8_t)str[0] ^ (uint8_t)str[len - 1];
			(void)x;
		}
	}
	emitted++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t dl;
	const uint8_t *d = pfd_event_desc(data, size, &dl);
	FUZZ_ASSERT(!d || (d >= data && d + dl == data + size && dl > 0));
	if (size < 2)
		return 0;
	size_t tl = (size_t)data[0] | (size_t)data[1] << 8;
	if (tl > size - 2)
		tl = size - 2;
	/* copies, so that ASan sees reads past their ends */
	char *text = malloc(tl ? tl : 1);
	size_t rl = size - 2 - tl;
	uint8_t *raw = malloc(rl ? rl : 1);
	if (!text || !raw)
		abort();
	memcpy(text, data + 2, tl);
	memcpy(raw, data + 2 + tl, rl);
	struct pfd_tp tp;
	if (pfd_tp_parse(text, tl, &tp) == 0) {
		raw_lo = raw;
		raw_hi = raw + rl;
		emitted = 0;
		int n = pfd_tp_decode(&tp, raw, rl, emit, NULL);
		FUZZ_ASSERT(n < 0 || n == emitted);
		FUZZ_ASSERT(emitted <= tp.n);
		pfd_tp_free(&tp);
	}
	free(text);
	free(raw);
	return 0;
}
