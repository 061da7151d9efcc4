/*
 * libpfsym/lnidx.c - the line index kept on disk.
 *
 * What lines.c builds for a compilation unit (its inlined nodes, their
 * address segments, its line table) depends on the debug file alone, so it
 * is kept in the DWARF cache folder (pfsym --dwarf-cache), in one file per
 * debug file, beside dwsec.c's inflated sections: KEY.lnidx, KEY being the
 * 32 hex digits of pfsi_lnidx_key(). A later run that finds every CU it
 * needs there opens no DWARF at all: no inflating or mapping of sections,
 * no dwarf_begin_elf(), no dwarf_getaranges() interning every unit, no walk
 * of the DIE trees (together about 9 ms a run for libc6-dbg's libc). A CU
 * it lacks is built from libdw as before, and the file is written again
 * with it added (to a temporary name, renamed: concurrent runs never see
 * half of one; the last rename wins, and nothing is ever wrong in it).
 *
 * Only files with a GNU build-id are kept: the key hashes the ELF header,
 * the section headers and names and the notes (the build-id, and
 * .gnu_debugaltlink's too when there is one), not the DWARF bytes, which
 * would cost what the index saves. The linker computes the build-id over
 * the whole output, DWARF included; a debug file changed after linking
 * (dwz, objcopy) keeping it has other section sizes or offsets, so another
 * key.
 *
 * Layout, in this machine's byte order (the cache is not meant to travel):
 *   header (64 bytes): magic "PFLNIDX1", u32 0x01020304, u32 n_cus,
 *     u64[2] key, u64 n_ar, u64 strs_size, u64 payload_size (the bytes
 *     after the header: the file's size less 64), u64 hash (XXH3-64 of the
 *     header's first 56 bytes, then the payload);
 *   payload: n_ar x { u64 lo, len, cu_off } (as libdw sorts them);
 *     n_cus x { u64 off, at, n_segs, n_rows; u32 n_nodes, comp_dir }, by
 *     off; each CU's nodes { u32 name, linkage, call_file, call_line,
 *     parent, depth }, segs { u64 lo, hi; u32 node, 0 } and rows { u64
 *     addr; u32 file, line, end, 0 } at payload offset `at` (8-aligned),
 *     one after the other; last, strs_size bytes of NUL-terminated strings
 *     (the last byte NUL). A string is named by its offset + 1 there, 0
 *     for none.
 * Every count and offset is checked when the file is loaded; one that does
 * not check out makes the whole file ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "internal/lines.h"
#include "internal/pfsym.h"

#define IX_MAGIC "PFLNIDX1"

struct ix_hdr {
	struct pfsi_cache_id id; /* n: the units (n_cus) */
	uint64_t n_ar;
	uint64_t strs_size;
	uint64_t payload_size;
	uint64_t hash;
};
struct ix_cu {
	uint64_t off, at, n_segs, n_rows;
	uint32_t n_nodes, comp_dir;
};
struct ix_node {
	uint32_t name, linkage, call_file, call_line, parent, depth;
};
struct ix_seg {
	uint64_t lo, hi;
	uint32_t node, pad;
};
struct ix_row {
	uint64_t addr;
	uint32_t file, line, end, pad;
};
_Static_assert(sizeof(struct ix_hdr) == 64, "index header layout");
_Static_assert(sizeof(struct ix_cu) == 40, "index CU layout");
_Static_assert(sizeof(struct ix_node) == 24 && sizeof(struct ix_seg) == 24 && sizeof(struct ix_row) == 24,
	       "index entry layout");
_Static_assert(sizeof(struct ln_ar) == 24, "index arange layout");

struct pfsi_lnidx {
	uint8_t *map;
	size_t size;
	const struct ix_hdr *h;
	const struct ln_ar *ar;
	const struct ix_cu *cus;
	const char *strs;
};

/* ---- the key ---- */

/* Whether the note section data d holds a GNU build-id. */
static int has_build_id(Elf_Data *d)
{
	size_t off = 0, next;
	GElf_Nhdr nh;
	size_t name_off, desc_off;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0)
			return 1;
		off = next;
	}
	return 0;
}

int pfsi_lnidx_key(Elf *e, uint64_t key[2])
{
	size_t shstrndx;
	GElf_Ehdr eh;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) < 0)
		return -1;
	/* the label's number changes whenever what a file holds changes
	 * meaning, so that an older pfsym's files are never used: 2, the
	 * ranges of units that .debug_aranges leaves out are in them */
	XXH3_state_t *st = pfsi_dwc_key_begin("pfsym lnidx 2: lines.c's CU index");
	if (!st)
		return -1;
	(void)XXH3_128bits_update(st, &eh, sizeof(eh));
	int bid = 0, rc = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) {
			rc = -1;
			break;
		}
		(void)XXH3_128bits_update(st, &sh, sizeof(sh));
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (nm)
			(void)XXH3_128bits_update(st, nm, strlen(nm) + 1);
		int alt = nm && strcmp(nm, ".gnu_debugaltlink") == 0;
		if (sh.sh_type != SHT_NOTE && !alt)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || (d->d_size && !d->d_buf)) {
			rc = -1;
			break;
		}
		(void)XXH3_128bits_update(st, d->d_buf, d->d_size);
		if (sh.sh_type == SHT_NOTE && has_build_id(d))
			bid = 1;
	}
	pfsi_dwc_key_end(st, key);
	return rc == 0 && bid ? 0 : -1;
}

/* ---- loading ---- */

/* "DIR/KEY.lnidx" plus suffix. @return 0, or -1 if too long. */
static int ix_path(const char *dir, const uint64_t key[2], const char *suffix, char *path, size_t size)
{
	int w = snprintf(path, size, "%s/%016llx%016llx.lnidx%s", dir, (unsigned long long)key[1],
			 (unsigned long long)key[0], suffix);
	return w > 0 && (size_t)w < size ? 0 : -1;
}

static uint64_t ix_hash(const struct ix_hdr *h, const void *payload, size_t n)
{
	return pfsi_dwc_hash2(h, offsetof(struct ix_hdr, hash), payload, n);
}

static int str_ok(const struct pfsi_lnidx *x, uint32_t ref)
{
	return ref == 0 || ref - 1 < x->h->strs_size;
}

/* Whether CU i of x (its place checked) holds only valid references. */
static int cu_ok(const struct pfsi_lnidx *x, size_t i)
{
	const struct ix_cu *c = &x->cus[i];
	const uint8_t *p = x->map + sizeof(struct ix_hdr) + c->at;
	const struct ix_node *nd = (const struct ix_node *)p;
	const struct ix_seg *sg = (const struct ix_seg *)(nd + c->n_nodes);
	const struct ix_row *rw = (const struct ix_row *)(sg + c->n_segs);
	if (!str_ok(x, c->comp_dir))
		return 0;
	for (uint32_t k = 0; k < c->n_nodes; k++)
		if (!str_ok(x, nd[k].name) || !str_ok(x, nd[k].linkage) || !str_ok(x, nd[k].call_file) ||
		    (nd[k].parent != LN_NONE && nd[k].parent >= k))
			return 0;
	for (uint64_t k = 0; k < c->n_segs; k++)
		if (sg[k].node >= c->n_nodes || sg[k].lo >= sg[k].hi || (k && sg[k].lo < sg[k - 1].hi))
			return 0;
	for (uint64_t k = 0; k < c->n_rows; k++)
		if (!str_ok(x, rw[k].file) || (k && rw[k].addr < rw[k - 1].addr))
			return 0;
	return 1;
}

/* Whether x's header, sizes and every offset check out. */
static int ix_ok(const struct pfsi_lnidx *x, const uint64_t key[2])
{
	const struct ix_hdr *h = x->h;
	uint64_t pay = x->size - sizeof(*h);
	if (!pfsi_cache_id_ok(&h->id, IX_MAGIC, key) || h->payload_size != pay || h->n_ar > pay / sizeof(struct ln_ar) ||
	    h->id.n > pay / sizeof(struct ix_cu) || h->strs_size > pay)
		return 0;
	uint64_t data_lo = h->n_ar * sizeof(struct ln_ar) + (uint64_t)h->id.n * sizeof(struct ix_cu);
	if (data_lo > pay - h->strs_size)
		return 0;
	uint64_t data_hi = pay - h->strs_size;
	const uint8_t *payload = x->map + sizeof(*h);
	if (h->strs_size && payload[pay - 1] != 0)
		return 0;
	if (ix_hash(h, payload, (size_t)pay) != h->hash)
		return 0;
	for (size_t i = 0; i < h->id.n; i++) {
		const struct ix_cu *c = &x->cus[i];
		if ((i && c->off <= x->cus[i - 1].off) || (c->at & 7) || c->at < data_lo || c->at > data_hi)
			return 0;
		uint64_t room = (data_hi - c->at) / 24;
		if (c->n_nodes > room || c->n_segs > room - c->n_nodes || c->n_rows > room - c->n_nodes - c->n_segs)
			return 0;
		if (!cu_ok(x, i))
			return 0;
	}
	return 1;
}

struct pfsi_lnidx *pfsi_lnidx_load(const char *dir, const uint64_t key[2])
{
	char path[4096];
	if (!dir || !*dir || ix_path(dir, key, "", path, sizeof(path)) < 0)
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(struct ix_hdr) ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return NULL;
	}
	size_t len = (size_t)st.st_size;
	uint8_t *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (m != MAP_FAILED)
		(void)futimens(fd, NULL); /* used now: the last to be pruned */
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	struct pfsi_lnidx *x = calloc(1, sizeof(*x));
	if (!x) {
		munmap(m, len);
		return NULL;
	}
	x->map = m;
	x->size = len;
	x->h = (const struct ix_hdr *)m;
	x->ar = (const struct ln_ar *)(m + sizeof(*x->h));
	if (x->h->n_ar <= (len - sizeof(*x->h)) / sizeof(struct ln_ar))
		x->cus = (const struct ix_cu *)(x->ar + x->h->n_ar);
	x->strs = (const char *)m + len - (x->h->strs_size <= len ? x->h->strs_size : 0);
	if (!x->cus || !ix_ok(x, key)) {
		pfsi_lnidx_free(x);
		return NULL;
	}
	return x;
}

void pfsi_lnidx_free(struct pfsi_lnidx *x)
{
	if (!x)
		return;
	munmap(x->map, x->size);
	free(x);
}

const struct ln_ar *pfsi_lnidx_aranges(const struct pfsi_lnidx *x, size_t *n)
{
	*n = (size_t)x->h->n_ar;
	return x->ar;
}

size_t pfsi_lnidx_n_cus(const struct pfsi_lnidx *x)
{
	return x->h->id.n;
}

uint64_t pfsi_lnidx_cu_off(const struct pfsi_lnidx *x, size_t i)
{
	return x->cus[i].off;
}

static const char *str_at(const struct pfsi_lnidx *x, uint32_t ref)
{
	return ref ? x->strs + (ref - 1) : NULL;
}

int pfsi_lnidx_cu(const struct pfsi_lnidx *x, size_t i, struct ln_cu *c)
{
	const struct ix_cu *e = &x->cus[i];
	const uint8_t *p = x->map + sizeof(struct ix_hdr) + e->at;
	const struct ix_node *nd = (const struct ix_node *)p;
	const struct ix_seg *sg = (const struct ix_seg *)(nd + e->n_nodes);
	const struct ix_row *rw = (const struct ix_row *)(sg + e->n_segs);
	memset(c, 0, sizeof(*c));
	c->off = e->off;
	c->comp_dir = str_at(x, e->comp_dir);
	if ((e->n_nodes && !(c->nodes = malloc(e->n_nodes * sizeof(*c->nodes)))) ||
	    (e->n_segs && !(c->segs = malloc((size_t)e->n_segs * sizeof(*c->segs)))) ||
	    (e->n_rows && !(c->rows = malloc((size_t)e->n_rows * sizeof(*c->rows))))) {
		free(c->nodes);
		free(c->segs);
		free(c->rows);
		memset(c, 0, sizeof(*c));
		return -ENOMEM;
	}
	c->n_nodes = c->cap_nodes = e->n_nodes;
	c->n_segs = (size_t)e->n_segs;
	c->n_rows = (size_t)e->n_rows;
	for (uint32_t k = 0; k < e->n_nodes; k++)
		c->nodes[k] = (struct ln_node){ str_at(x, nd[k].name), str_at(x, nd[k].linkage),
						str_at(x, nd[k].call_file), nd[k].call_line, nd[k].parent,
						nd[k].depth };
	for (size_t k = 0; k < c->n_segs; k++)
		c->segs[k] = (struct ln_seg){ sg[k].lo, sg[k].hi, sg[k].node };
	for (size_t k = 0; k < c->n_rows; k++)
		c->rows[k] = (struct ln_row){ rw[k].addr, str_at(x, rw[k].file), rw[k].line, rw[k].end, (uint32_t)k };
	return 0;
}

/* ---- writing ---- */

/* The strings of a file being written, each once. */
struct strs {
	char *b;
	size_t n, cap;
	struct str_ent { uint64_t h; uint32_t ref; } *t; /* open addressing, ref 0: empty */
	size_t used, tcap;
};

static int strs_rehash(struct strs *s)
{
	size_t cap = s->tcap ? s->tcap * 2 : 1024;
	struct str_ent *t = calloc(cap, sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < s->tcap; i++) {
		if (!s->t[i].ref)
			continue;
		size_t j = (size_t)s->t[i].h & (cap - 1);
		while (t[j].ref)
			j = (j + 1) & (cap - 1);
		t[j] = s->t[i];
	}
	free(s->t);
	s->t = t;
	s->tcap = cap;
	return 0;
}

/* The reference of str (added if new) into *ref. @return 0 or -1. */
static int strs_ref(struct strs *s, const char *str, uint32_t *ref)
{
	*ref = 0;
	if (!str)
		return 0;
	size_t len = strlen(str) + 1;
	if ((s->used + 1) * 2 > s->tcap && strs_rehash(s) < 0)
		return -1;
	uint64_t h = XXH3_64bits(str, len);
	size_t j = (size_t)h & (s->tcap - 1);
	for (; s->t[j].ref; j = (j + 1) & (s->tcap - 1))
		if (s->t[j].h == h && strcmp(s->b + s->t[j].ref - 1, str) == 0) {
			*ref = s->t[j].ref;
			return 0;
		}
	if (s->n + len >= UINT32_MAX)
		return -1;
	if (s->n + len > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->n + len)
			cap *= 2;
		char *b = realloc(s->b, cap);
		if (!b)
			return -1;
		s->b = b;
		s->cap = cap;
	}
	memcpy(s->b + s->n, str, len);
	s->t[j] = (struct str_ent){ h, (uint32_t)(s->n + 1) };
	s->used++;
	*ref = s->t[j].ref;
	s->n += len;
	return 0;
}

/* The payload of a file of ar and cus, in one malloc'd buffer (*size
 * bytes), its strings in *s. @return it, or NULL. */
static uint8_t *ix_payload(const struct ln_ar *ar, size_t n_ar, struct ln_cu *const *cus, size_t n_cus,
			   struct strs *s, size_t *size)
{
	size_t data = 0;
	for (size_t i = 0; i < n_cus; i++)
		data += 24 * ((size_t)cus[i]->n_nodes + cus[i]->n_segs + cus[i]->n_rows);
	size_t head = n_ar * sizeof(*ar) + n_cus * sizeof(struct ix_cu);
	uint8_t *p = calloc(1, head + data + 1); /* + 1: never calloc(1, 0) */
	if (!p)
		return NULL;
	if (n_ar)
		memcpy(p, ar, n_ar * sizeof(*ar));
	struct ix_cu *tab = (struct ix_cu *)(p + n_ar * sizeof(*ar));
	size_t at = head;
	for (size_t i = 0; i < n_cus; i++) {
		const struct ln_cu *c = cus[i];
		struct ix_node *nd = (struct ix_node *)(p + at);
		struct ix_seg *sg = (struct ix_seg *)(nd + c->n_nodes);
		struct ix_row *rw = (struct ix_row *)(sg + c->n_segs);
		tab[i] = (struct ix_cu){ c->off, at, c->n_segs, c->n_rows, c->n_nodes, 0 };
		int bad = strs_ref(s, c->comp_dir, &tab[i].comp_dir) < 0;
		for (uint32_t k = 0; !bad && k < c->n_nodes; k++) {
			const struct ln_node *n = &c->nodes[k];
			nd[k] = (struct ix_node){ 0, 0, 0, n->call_line, n->parent, n->depth };
			bad = strs_ref(s, n->name, &nd[k].name) < 0 || strs_ref(s, n->linkage, &nd[k].linkage) < 0 ||
			      strs_ref(s, n->call_file, &nd[k].call_file) < 0;
		}
		for (size_t k = 0; !bad && k < c->n_segs; k++)
			sg[k] = (struct ix_seg){ c->segs[k].lo, c->segs[k].hi, c->segs[k].node, 0 };
		for (size_t k = 0; !bad && k < c->n_rows; k++) {
			const struct ln_row *r = &c->rows[k];
			rw[k] = (struct ix_row){ r->addr, 0, r->line, r->end, 0 };
			bad = strs_ref(s, r->file, &rw[k].file) < 0;
		}
		if (bad) {
			free(p);
			return NULL;
		}
		at += 24 * ((size_t)c->n_nodes + c->n_segs + c->n_rows);
	}
	*size = head + data;
	return p;
}

int pfsi_lnidx_store(const char *dir, const uint64_t key[2], const struct ln_ar *ar, size_t n_ar,
		     struct ln_cu *const *cus, size_t n_cus)
{
	char path[4096], tmp[4096];
	if (!dir || !*dir || n_cus > UINT32_MAX || ix_path(dir, key, "", path, sizeof(path)) < 0 ||
	    ix_path(dir, key, ".XXXXXX", tmp, sizeof(tmp)) < 0 || pfsi_dwc_mkdirs(dir) < 0)
		return -1;
	struct strs s;
	memset(&s, 0, sizeof(s));
	size_t size = 0;
	uint8_t *p = ix_payload(ar, n_ar, cus, n_cus, &s, &size);
	int rc = p ? 0 : -1;
	uint8_t *all = NULL;
	struct ix_hdr h;
	if (!rc) {
		/* the strings go after the rest, in the same buffer for the hash
		 * (never realloc(p, 0): glibc frees p and returns NULL, a file
		 * with no ranges and no units being possible) */
		all = realloc(p, size + s.n ? size + s.n : 1);
		if (!all) {
			free(p);
			rc = -1;
		} else if (s.n) {
			memcpy(all + size, s.b, s.n);
		}
	}
	if (!rc) {
		memset(&h, 0, sizeof(h));
		pfsi_cache_id_set(&h.id, IX_MAGIC, (uint32_t)n_cus, key);
		h.n_ar = n_ar;
		h.strs_size = s.n;
		h.payload_size = size + s.n;
		h.hash = ix_hash(&h, all, size + s.n);
		const struct pfsi_piece parts[] = { { &h, sizeof(h) }, { all, size + s.n } };
		rc = pfsi_dwc_publish(dir, path, tmp, parts, 2);
	}
	free(all);
	free(s.b);
	free(s.t);
	return rc;
}
