/*
 * fuzz_dwsec.c - pfsym's reader of compressed DWARF (libpfsym/dwsec.c,
 * pfsi_dw_prepare): the sizes a file claims, the zlib streams, the cache
 * of inflated sections.
 *
 * The input describes an ELF64 file that the target builds in memory: byte
 * 0 holds flags (bit 0: a cache folder; bit 1: compress each stream here,
 * so that mutations of the bytes reach valid streams; bit 2: the first
 * section is an old-style .zdebug_line); then up to three sections
 * (.debug_info, .debug_str, .debug_abbrev, or .zdebug_line), each a u16
 * stream length L, a u64 claimed inflated size (a signed delta from the
 * true size in bit-1 mode), a u8 Chdr type, then L bytes. After
 * pfsi_dw_prepare() every section must be one of: refused (its claim over
 * PFSI_DW_MAX_RATIO x its compressed bytes or PFSI_DW_MAX_BYTES: hidden,
 * SHT_NOBITS, counted), inflated (exactly the bytes zlib's uncompress()
 * gives, of exactly the claimed size) or left as it was. With a cache the
 * same file prepared again must give the same bytes.
 */
#include <dirent.h>
#include <gelf.h>
#include <limits.h>
#include <zlib.h>

#include "fuzz.h"
#include "internal/pfsym.h"

#define MAX_STREAM 4096

static char cache_dir[PATH_MAX];

static void remove_cache(void)
{
	fuzz_remove_dir(cache_dir);
}

struct sec {
	const char *name;
	int gnu;                 /* .zdebug_: "ZLIB" + big-endian size */
	uint64_t claim;          /* the size it claims */
	uint32_t type;           /* Chdr ch_type */
	uint8_t *stream;         /* the compressed bytes */
	size_t stream_len;
	size_t off, size;        /* in the image: the section's bytes */
};

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* The ELF image of the sections: header, .shstrtab, the sections, then
 * the section header table. malloc'd, *n bytes. */
static uint8_t *build(struct sec *s, int ns, size_t *n)
{
	static const char shstr[] = "\0.shstrtab\0.debug_info\0.debug_str\0.debug_abbrev\0.zdebug_line\0";
	size_t pos = 64 + sizeof(shstr);
	for (int i = 0; i < ns; i++) {
		pos = (pos + 7) & ~(size_t)7;
		s[i].off = pos;
		s[i].size = (s[i].gnu ? 12 : 24) + s[i].stream_len;
		pos += s[i].size;
	}
	pos = (pos + 7) & ~(size_t)7;
	size_t shoff = pos, total = shoff + 64 * (size_t)(ns + 2);
	uint8_t *b = calloc(1, total);
	if (!b)
		return NULL;
	memcpy(b, "\177ELF\2\1\1", 7);
	put16(b + 16, ET_REL);
	put16(b + 18, EM_X86_64);
	put32(b + 20, EV_CURRENT);
	put64(b + 40, shoff);
	put16(b + 52, 64);
	put16(b + 58, 64);
	put16(b + 60, (uint16_t)(ns + 2));
	put16(b + 62, 1);
	memcpy(b + 64, shstr, sizeof(shstr));
	uint8_t *sh = b + shoff + 64; /* [1] .shstrtab */
	put32(sh, 1);
	put32(sh + 4, SHT_STRTAB);
	put64(sh + 24, 64);
	put64(sh + 32, sizeof(shstr));
	put64(sh + 48, 1);
	for (int i = 0; i < ns; i++) {
		uint8_t *d = b + s[i].off;
		if (s[i].gnu) {
			memcpy(d, "ZLIB", 4);
			for (int k = 0; k < 8; k++)
				d[4 + k] = (uint8_t)(s[i].claim >> (56 - 8 * k));
			memcpy(d + 12, s[i].stream, s[i].stream_len);
		} else {
			put32(d, s[i].type);
			put64(d + 8, s[i].claim);
			put64(d + 16, 1);
			memcpy(d + 24, s[i].stream, s[i].stream_len);
		}
		sh = b + shoff + 64 * (size_t)(i + 2);
		put32(sh, (uint32_t)((const char *)memmem(shstr, sizeof(shstr), s[i].name, strlen(s[i].name) + 1) -
				     shstr));
		put32(sh + 4, SHT_PROGBITS);
		put64(sh + 8, s[i].gnu ? 0 : SHF_COMPRESSED);
		put64(sh + 24, s[i].off);
		put64(sh + 32, s[i].size);
		put64(sh + 48, s[i].gnu ? 1 : 8);
	}
	*n = total;
	return b;
}

static int over(uint64_t claim, uint64_t n)
{
	return claim > PFSI_DW_MAX_BYTES || claim / PFSI_DW_MAX_RATIO > n;
}

/* Prepares a fresh handle of the image; checks each section. out[i]: the
 * inflated bytes (copied) when section i was installed, else NULL. */
static void prepare(const uint8_t *img, size_t n, struct sec *s, int ns, const char *dir, uint8_t **out)
{
	uint8_t *copy = malloc(n);
	FUZZ_ASSERT(copy);
	memcpy(copy, img, n);
	Elf *e = elf_memory((char *)copy, n);
	if (!e) {
		free(copy);
		return;
	}
	struct pfsi_dw_bufs keep;
	if (pfsi_dw_prepare(e, dir, &keep) < 0) { /* out of memory: nothing to check */
		elf_end(e);
		pfsi_dw_bufs_free(&keep);
		free(copy);
		return;
	}
	unsigned refused = 0;
	for (int i = 0; i < ns; i++) {
		out[i] = NULL;
		Elf_Scn *scn = elf_getscn(e, (size_t)i + 2);
		GElf_Shdr sh;
		FUZZ_ASSERT(scn && gelf_getshdr(scn, &sh));
		uint64_t clen = s[i].stream_len;
		if (over(s[i].claim, clen)) { /* a header alone claims too */
			FUZZ_ASSERT(sh.sh_type == SHT_NOBITS);
			refused++;
			continue;
		}
		FUZZ_ASSERT(sh.sh_type == SHT_PROGBITS);
		if (s[i].gnu || (sh.sh_flags & SHF_COMPRESSED))
			continue; /* left for libdw */
		/* installed: zlib's own reading of the stream, of that size */
		FUZZ_ASSERT(sh.sh_size == s[i].claim && s[i].type == ELFCOMPRESS_ZLIB);
		Elf_Data *d = elf_getdata(scn, NULL);
		FUZZ_ASSERT(d && d->d_size == s[i].claim);
		uLongf got = (uLongf)s[i].claim;
		uint8_t *ref = malloc(got ? got : 1);
		FUZZ_ASSERT(ref);
		int zr = uncompress(ref, &got, s[i].stream, (uLong)clen);
		FUZZ_ASSERT(zr == Z_OK && got == s[i].claim && memcmp(ref, d->d_buf, got) == 0);
		out[i] = ref;
	}
	FUZZ_ASSERT(keep.refused == refused);
	elf_end(e);
	pfsi_dw_bufs_free(&keep);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { ".debug_info", ".debug_str", ".debug_abbrev" };
	if (!size)
		return 0;
	elf_version(EV_CURRENT);
	uint8_t flags = data[0];
	size_t pos = 1;
	struct sec s[3];
	int ns = 0;
	memset(s, 0, sizeof(s));
	while (ns < 3 && size - pos >= 11) {
		size_t len = (size_t)(data[pos] | data[pos + 1] << 8) % (MAX_STREAM + 1);
		uint64_t claim;
		memcpy(&claim, data + pos + 2, 8);
		uint32_t type = data[pos + 10] % 4; /* 0, zlib, zstd (2), other */
		pos += 11;
		if (len > size - pos)
			len = size - pos;
		struct sec *c = &s[ns];
		c->gnu = ns == 0 && (flags & 4);
		c->name = c->gnu ? ".zdebug_line" : names[ns];
		c->type = type;
		if (flags & 2) { /* the bytes compressed here; claim: a small delta */
			uLongf cl = compressBound((uLong)len);
			c->stream = malloc(cl ? cl : 1);
			FUZZ_ASSERT(c->stream);
			FUZZ_ASSERT(compress(c->stream, &cl, data + pos, (uLong)len) == Z_OK);
			c->stream_len = cl;
			int8_t delta = (int8_t)(claim & 0xff);
			c->claim = (claim >> 8) % 16 == 0 ? claim : (uint64_t)((int64_t)len + (delta % 3));
		} else {
			c->stream = malloc(len ? len : 1);
			FUZZ_ASSERT(c->stream);
			memcpy(c->stream, data + pos, len);
			c->stream_len = len;
			c->claim = claim;
		}
		pos += len;
		ns++;
	}
	size_t n;
	uint8_t *img = build(s, ns, &n);
	FUZZ_ASSERT(img);
	const char *dir = NULL;
	if (flags & 1) {
		if (!cache_dir[0]) {
			const char *t = getenv("TMPDIR");
			snprintf(cache_dir, sizeof(cache_dir), "%s/fuzz-dwsec-XXXXXX", t && *t ? t : "/tmp");
			if (!mkdtemp(cache_dir))
				cache_dir[0] = 0;
			else
				atexit(remove_cache);
		}
		dir = cache_dir[0] ? cache_dir : NULL;
	}
	uint8_t *a[3] = { 0 }, *b[3] = { 0 };
	prepare(img, n, s, ns, dir, a);
	if (dir) { /* again: from the cache file written (or inflated again) */
		prepare(img, n, s, ns, dir, b);
		for (int i = 0; i < ns; i++)
			FUZZ_ASSERT((a[i] == NULL) == (b[i] == NULL) &&
				    (!a[i] || memcmp(a[i], b[i], (size_t)s[i].claim) == 0));
	}
	for (int i = 0; i < ns; i++) {
		free(a[i]);
		free(b[i]);
		free(s[i].stream);
	}
	free(img);
	return 0;
}
