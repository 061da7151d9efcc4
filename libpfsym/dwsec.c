/*
 * libpfsym/dwsec.c - the DWARF sections lines.c hands to libdw.
 *
 * libdw (0.188) decompresses every compressed DWARF section it knows in
 * dwarf_begin_elf(), one after the other, and Debian's debug files
 * (libc6-dbg) are zlib-compressed: about 50 ms of CPU for libc's alone,
 * which dominated `pfsym | pffold` on short recordings (bench/RESULTS.md,
 * issue 15). Before lines.c calls dwarf_begin_elf() on an ELF handle of its
 * own, pfsi_dw_prepare():
 *   - hides the sections the index never reads (location lists, macros,
 *     call frames, public names): their type becomes SHT_NOBITS in that
 *     handle's copy of the section headers, which libdw skips (about a
 *     fifth of libc's compressed bytes are .debug_loclists);
 *   - inflates the other zlib-compressed sections itself, on this thread
 *     and one more, largest first, and puts each result in the handle as
 *     the section's data (as libelf's elf_compress() would, with the flag
 *     SHF_COMPRESSED cleared), so libdw finds them decompressed.
 * A section that fails to inflate (or another compression) is left as it
 * was: libdw then decompresses it, or fails, as before. The bytes libdw
 * sees are the same either way, so is everything pfsym writes.
 *
 * With a cache directory (pfsym --dwarf-cache), the inflated sections of a
 * file are kept there, one cache file per debug file, named by a 128-bit
 * XXH3 hash of what was inflated (each section's index, sizes and
 * compressed bytes): the next run maps that file instead of inflating
 * again (libc6-dbg's libc: about 8.5 MB inflated from 3.4 MB). A cache
 * file is used only if its header, section table and payload hash all
 * check out; anything else (a short, corrupt or foreign file) is ignored
 * and written again. Cache files are written to a temporary name and
 * renamed, so concurrent runs never see half of one; a run that uses one
 * touches it, and after each write the least recently used are removed
 * beyond PFSYM_DWARF_CACHE_MB (pfsi_dwc_prune()). Its layout, in this
 * machine's byte order (the cache is not meant to travel):
 *   header (64 bytes): magic "PFDWSEC1", u32 0x01020304, u32 n sections,
 *     u64[2] key (XXH3-128 of a version string and, per section, its index,
 *     sizes, alignment and the XXH3-64 of its compressed bytes), u64 payload
 *     offset, u64 payload size, u64 XXH3-64 of the payload, u64 XXH3-64 of
 *     the header's first 56 bytes and the table;
 *   table: n x { u64 section index, u64 size, u64 offset in the payload },
 *     in section order, offsets 64-byte aligned;
 *   payload at the next multiple of 64 bytes, to the end of the file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include <zlib.h>

#include "internal/lines.h"
#include "internal/pfsym.h"

/* DWARF sections libdw loads that lines.c's calls never read
 * (dwarf_addrdie, dwarf_getaranges, dwarf_child/siblingof, dwarf_attr*,
 * dwarf_formstring, dwarf_ranges, dwarf_getsrclines/getsrcfiles). */
static const char *const unread[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
	".debug_frame", ".debug_pubnames", ".debug_pubtypes",
};

/* The sections libdw (0.188) reads that it would decompress itself:
 * inflated here. Others (unknown to libdw, or .dwo) are left as they are. */
static const char *const inflated[] = {
	".debug_info", ".debug_types", ".debug_abbrev", ".debug_addr", ".debug_aranges",
	".debug_line", ".debug_line_str", ".debug_str", ".debug_str_offsets", ".debug_ranges",
	".debug_rnglists", ".debug_cu_index", ".debug_tu_index",
};

static int listed(const char *nm, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(nm, list[i]) == 0)
			return 1;
	return 0;
}

struct job {
	Elf_Scn *scn;
	const uint8_t *src; /* the deflate stream (after the Chdr) */
	size_t src_size;
	uint8_t *dst;       /* ch_size bytes in the one output buffer */
	size_t dst_size;
	uint64_t align;
	int ok;
};

struct pool {
	struct job *jobs;
	size_t n;
	size_t next; /* the next job to take (atomic) */
};

static void inflate_one(struct job *j)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return;
	int rc = Z_OK;
	size_t in_left = j->src_size, out_left = j->dst_size;
	z.next_in = (Bytef *)(uintptr_t)j->src;
	z.next_out = j->dst;
	/* avail_in/avail_out are 32 bits: feed sections over 4 GiB in steps */
	while (rc == Z_OK) {
		if (!z.avail_in && in_left) {
			z.avail_in = in_left > (1u << 30) ? 1u << 30 : (uInt)in_left;
			in_left -= z.avail_in;
		}
		if (!z.avail_out && out_left) {
			z.avail_out = out_left > (1u << 30) ? 1u << 30 : (uInt)out_left;
			out_left -= z.avail_out;
		}
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc == Z_BUF_ERROR && (z.avail_in || in_left) && (z.avail_out || out_left))
			rc = Z_OK; /* progress is still possible */
		else if (rc == Z_BUF_ERROR)
			break;
	}
	j->ok = rc == Z_STREAM_END && !z.avail_out && !out_left;
	inflateEnd(&z);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (i >= p->n)
			break;
		inflate_one(&p->jobs[i]);
	}
	return NULL;
}

/* The buffer for a file's n inflated bytes (all its sections). Large ones are 2 MiB aligned and advised
 * as transparent huge pages where the kernel offers them (madvise mode):
 * filling libc's sections page by page cost about 5,000 page faults, which
 * are slow in a VM (perf: a fifth of pfsym's time in the fault path).
 * malloc'd memory as far as free() is concerned. */
static uint8_t *out_buf(uint64_t n)
{
	const uint64_t huge = 2u << 20;
	if (n >= SIZE_MAX - huge)
		return NULL;
	if (n < huge / 4)
		return malloc(n);
	size_t sz = (size_t)((n + huge - 1) & ~(huge - 1));
	uint8_t *p = aligned_alloc(huge, sz);
	if (p)
		(void)madvise(p, sz, MADV_HUGEPAGE);
	return p;
}

static int job_cmp(const void *a, const void *b)
{
	const struct job *x = a, *y = b;
	if (x->src_size != y->src_size)
		return x->src_size > y->src_size ? -1 : 1;
	return 0;
}

void pfsi_dw_bufs_free(struct pfsi_dw_bufs *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->p[i]);
	free(k->p);
	k->p = NULL;
	k->n = 0;
	if (k->map)
		munmap(k->map, k->map_size);
	k->map = NULL;
	k->map_size = 0;
}

/* ---- the cache of inflated sections ---- */

#define DWC_MAGIC "PFDWSEC1"

struct dwc_hdr {
	struct pfsi_cache_id id; /* n: the sections in the table */
	uint64_t payload_off, payload_size;
	uint64_t payload_hash;
	uint64_t table_hash; /* of the 56 bytes above and the table */
};
struct dwc_ent {
	uint64_t scn, size, off;
};
_Static_assert(sizeof(struct dwc_hdr) == 64, "cache header layout");
_Static_assert(sizeof(struct dwc_ent) == 24, "cache table layout");

void pfsi_cache_id_set(struct pfsi_cache_id *id, const char *magic, uint32_t n, const uint64_t key[2])
{
	memset(id, 0, sizeof(*id));
	memcpy(id->magic, magic, sizeof(id->magic));
	id->order = PFSI_CACHE_ORDER;
	id->n = n;
	id->key[0] = key[0];
	id->key[1] = key[1];
}

int pfsi_cache_id_ok(const struct pfsi_cache_id *id, const char *magic, const uint64_t key[2])
{
	return memcmp(id->magic, magic, sizeof(id->magic)) == 0 && id->order == PFSI_CACHE_ORDER &&
	       id->key[0] == key[0] && id->key[1] == key[1];
}

XXH3_state_t *pfsi_dwc_key_begin(const char *what)
{
	XXH3_state_t *st = XXH3_createState();
	if (!st || XXH3_128bits_reset(st) != XXH_OK) {
		XXH3_freeState(st);
		return NULL;
	}
	(void)XXH3_128bits_update(st, what, strlen(what) + 1);
	return st;
}

void pfsi_dwc_key_end(XXH3_state_t *st, uint64_t key[2])
{
	XXH128_hash_t h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	key[0] = h.low64;
	key[1] = h.high64;
}

uint64_t pfsi_dwc_hash2(const void *a, size_t na, const void *b, size_t nb)
{
	XXH3_state_t *st = XXH3_createState();
	if (!st)
		return 0;
	(void)XXH3_64bits_reset(st);
	(void)XXH3_64bits_update(st, a, na);
	(void)XXH3_64bits_update(st, b, nb);
	uint64_t v = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return v;
}

/* The key of jobs[0..n) (in section order): what they inflate from. */
static int dwc_key(const struct job *jobs, size_t n, uint64_t key[2])
{
	XXH3_state_t *st = pfsi_dwc_key_begin("pfsym dwsec 1: zlib sections inflated");
	if (!st)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* each section's compressed bytes by libpfile's XXH3-64 (an
		 * AVX2 build where the CPU has it: 3x the shared library's) */
		uint64_t rec[5] = { elf_ndxscn(jobs[i].scn), jobs[i].dst_size, jobs[i].align, jobs[i].src_size,
				    pf_xxh3(jobs[i].src, jobs[i].src_size) };
		(void)XXH3_128bits_update(st, rec, sizeof(rec));
	}
	pfsi_dwc_key_end(st, key);
	return 0;
}

static uint64_t dwc_table_hash(const struct dwc_hdr *h, const struct dwc_ent *t, size_t n)
{
	return pfsi_dwc_hash2(h, offsetof(struct dwc_hdr, table_hash), t, n * sizeof(*t));
}

static uint64_t dwc_payload_off(size_t n)
{
	return (sizeof(struct dwc_hdr) + n * sizeof(struct dwc_ent) + 63) & ~(uint64_t)63;
}

/* "DIR/KEY.dwsec" at path (PATH_MAX bytes). @return 0, or -1 if too long. */
static int dwc_path(const char *dir, const uint64_t key[2], const char *suffix, char *path, size_t size)
{
	int w = snprintf(path, size, "%s/%016llx%016llx.dwsec%s", dir, (unsigned long long)key[1],
			 (unsigned long long)key[0], suffix);
	return w > 0 && (size_t)w < size ? 0 : -1;
}

/* Maps the cache file of key and, if it checks out against jobs (in
 * section order), points each job's dst into it (ok = 1). @return 1 used, 0
 * not (absent or not valid: nothing changed). */
static int dwc_load(const char *dir, const uint64_t key[2], struct job *jobs, size_t n, struct pfsi_dw_bufs *keep)
{
	char path[4096];
	if (dwc_path(dir, key, "", path, sizeof(path)) < 0)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	uint64_t poff = dwc_payload_off(n);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size <= poff ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return 0;
	}
	size_t len = (size_t)st.st_size;
	/* read-only: libdw never writes to section data (for a debug file;
	 * relocations of ET_REL files are libdwfl's, not used here); writable
	 * would make MAP_POPULATE copy every page */
	uint8_t *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (m != MAP_FAILED)
		(void)futimens(fd, NULL); /* used now: the last to be pruned (a read-only cache stays as it is) */
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	const struct dwc_hdr *h = (const struct dwc_hdr *)m;
	const struct dwc_ent *t = (const struct dwc_ent *)(m + sizeof(*h));
	int good = pfsi_cache_id_ok(&h->id, DWC_MAGIC, key) && h->id.n == n && h->payload_off == poff &&
		   h->payload_size == len - poff && h->table_hash == dwc_table_hash(h, t, n);
	for (size_t i = 0; good && i < n; i++)
		good = t[i].scn == elf_ndxscn(jobs[i].scn) && t[i].size == jobs[i].dst_size && !(t[i].off & 63) &&
		       t[i].off <= h->payload_size && t[i].size <= h->payload_size - t[i].off;
	if (!good || pf_xxh3(m + poff, len - poff) != h->payload_hash) {
		munmap(m, len);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		jobs[i].dst = m + poff + t[i].off;
		jobs[i].ok = 1;
	}
	keep->map = m;
	keep->map_size = len;
	return 1;
}

int pfsi_dwc_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* mkdir -p dir (new folders 0700, as XDG asks of the cache's). */
int pfsi_dwc_mkdirs(const char *dir)
{
	char p[4096];
	size_t len = strlen(dir);
	if (!len || len >= sizeof(p))
		return -1;
	memcpy(p, dir, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		char c = p[i];
		p[i] = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -1;
		p[i] = c;
	}
	return 0;
}

int pfsi_dwc_publish(const char *dir, const char *path, char *tmp, const struct pfsi_piece *parts, size_t n)
{
	int fd = mkstemps(tmp, 0);
	int rc = fd < 0 ? -1 : 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = pfsi_dwc_write_all(fd, parts[i].p, parts[i].n);
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	if (!rc && rename(tmp, path) < 0)
		rc = -1;
	if (rc && fd >= 0)
		unlink(tmp);
	if (!rc)
		pfsi_dwc_prune(dir, path + strlen(dir) + 1);
	return rc;
}

/* ---- the cache's size ---- */

#define DWC_NAME_LEN (32 + 6) /* 32 hex digits and ".dwsec" (or lnidx.c's ".lnidx") */

/* PFSYM_DWARF_CACHE_MB: the most the folder's cache files may hold, in MiB
 * (default 1024; 0: no limit; anything else that is not a number: the
 * default). */
static uint64_t dwc_limit(void)
{
	const uint64_t dflt = (uint64_t)1024 << 20;
	const char *v = getenv("PFSYM_DWARF_CACHE_MB");
	if (!v || !*v)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long mb = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-' || mb > (UINT64_MAX >> 20))
		return dflt;
	return (uint64_t)mb << 20;
}

struct dwc_file {
	char name[DWC_NAME_LEN + 1];
	int64_t mtime_ns;
	uint64_t size;
};

static int dwc_file_cmp(const void *a, const void *b)
{
	const struct dwc_file *x = a, *y = b;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int is_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

/* Removes the least recently used cache files of dir (by modification time:
 * a run that uses one touches it) until they hold at most dwc_limit(),
 * never `keep` (the file just written); and temporary files a run killed
 * while writing left behind, after a day. Only names of the cache's own
 * forms are looked at: KEY.dwsec and lnidx.c's KEY.lnidx (the line index). */
void pfsi_dwc_prune(const char *dir, const char *keep)
{
	uint64_t limit = dwc_limit();
	DIR *d = opendir(dir);
	if (!d)
		return;
	int dfd = dirfd(d);
	struct dwc_file *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		size_t len = strlen(nm);
		if (len < DWC_NAME_LEN || !is_hex(nm, 32) ||
		    (strncmp(nm + 32, ".dwsec", 6) != 0 && strncmp(nm + 32, ".lnidx", 6) != 0))
			continue;
		struct stat st;
		if (fstatat(dfd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (len == DWC_NAME_LEN + 7 && nm[DWC_NAME_LEN] == '.') { /* KEY.dwsec.XXXXXX */
			if (now.tv_sec - st.st_mtim.tv_sec > 24 * 3600)
				(void)unlinkat(dfd, nm, 0);
			continue;
		}
		if (len != DWC_NAME_LEN)
			continue;
		if (n == cap && pfsi_grow((void **)&v, &cap, sizeof(*v), 64) < 0)
			break;
		memcpy(v[n].name, nm, DWC_NAME_LEN + 1);
		v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		v[n].size = (uint64_t)st.st_size;
		total += v[n++].size;
	}
	if (limit && total > limit) {
		qsort(v, n, sizeof(*v), dwc_file_cmp);
		for (size_t i = 0; i < n && total > limit; i++)
			if (strcmp(v[i].name, keep) != 0 && unlinkat(dfd, v[i].name, 0) == 0)
				total -= v[i].size;
	}
	free(v);
	closedir(d);
}

/* Writes the cache file of key: jobs (in section order, all inflated) in
 * buf (total bytes). @return 0, or -1 (nothing left behind). */
static int dwc_store(const char *dir, const uint64_t key[2], const struct job *jobs, size_t n, const uint8_t *buf,
		     uint64_t total)
{
	char path[4096], tmp[4096];
	if (dwc_path(dir, key, "", path, sizeof(path)) < 0 || dwc_path(dir, key, ".XXXXXX", tmp, sizeof(tmp)) < 0 ||
	    pfsi_dwc_mkdirs(dir) < 0)
		return -1;
	struct dwc_ent *t = calloc(n, sizeof(*t));
	if (!t)
		return -1;
	struct dwc_hdr h;
	memset(&h, 0, sizeof(h));
	pfsi_cache_id_set(&h.id, DWC_MAGIC, (uint32_t)n, key);
	h.payload_off = dwc_payload_off(n);
	h.payload_size = total;
	h.payload_hash = pf_xxh3(buf, (size_t)total);
	for (size_t i = 0; i < n; i++)
		t[i] = (struct dwc_ent){ elf_ndxscn(jobs[i].scn), jobs[i].dst_size, (uint64_t)(jobs[i].dst - buf) };
	h.table_hash = dwc_table_hash(&h, t, n);
	static const uint8_t zeros[64];
	size_t pad = (size_t)(h.payload_off - sizeof(h) - n * sizeof(*t));
	const struct pfsi_piece parts[] = {
		{ &h, sizeof(h) }, { t, n * sizeof(*t) }, { zeros, pad }, { buf, (size_t)total },
	};
	int rc = pfsi_dwc_publish(dir, path, tmp, parts, sizeof(parts) / sizeof(parts[0]));
	free(t);
	return rc;
}

/* Whether `claim` inflated bytes cannot come from n compressed bytes. */
static int over_claim(uint64_t claim, uint64_t n)
{
	return claim > PFSI_DW_MAX_BYTES || claim / PFSI_DW_MAX_RATIO > n;
}

/* Hides a section whose claimed size is refused (as the unread ones), and
 * notes the first. */
static void refuse(struct pfsi_dw_bufs *keep, Elf_Scn *scn, GElf_Shdr *sh, const char *nm, uint64_t claim,
		   uint64_t n)
{
	sh->sh_type = SHT_NOBITS;
	(void)gelf_update_shdr(scn, sh);
	if (!keep->refused++)
		snprintf(keep->refused_what, sizeof(keep->refused_what), "%.40s claims %llu bytes inflated from %llu",
			 nm, (unsigned long long)claim, (unsigned long long)n);
}

/* GNU's older form, .zdebug_NAME: "ZLIB", the inflated size (8 bytes, big
 * endian), the stream. libdw (0.188) inflates them itself: only their
 * claims are checked here. */
static void check_zdebug(Elf *e, size_t shstrndx, struct pfsi_dw_bufs *keep)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm || strncmp(nm, ".zdebug_", 8) != 0)
			continue;
		Elf_Data *raw = elf_rawdata(scn, NULL);
		if (!raw || !raw->d_buf || raw->d_size < 12 || memcmp(raw->d_buf, "ZLIB", 4) != 0)
			continue;
		const uint8_t *h = (const uint8_t *)raw->d_buf + 4;
		uint64_t claim = 0;
		for (int i = 0; i < 8; i++)
			claim = claim << 8 | h[i];
		if (over_claim(claim, raw->d_size - 12))
			refuse(keep, scn, &sh, nm, claim, raw->d_size - 12);
	}
}

int pfsi_dw_prepare(Elf *e, const char *cache_dir, struct pfsi_dw_bufs *keep)
{
	size_t shstrndx;
	memset(keep, 0, sizeof(*keep));
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	check_zdebug(e, shstrndx, keep);
	int cls = gelf_getclass(e);
	size_t chdr_size = cls == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	struct job *jobs = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0; /* bytes of the output buffer */
	uint8_t *buf = NULL;
	int rc = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm || strncmp(nm, ".debug_", 7) != 0)
			continue;
		if (listed(nm, unread, sizeof(unread) / sizeof(unread[0]))) {
			sh.sh_type = SHT_NOBITS;
			(void)gelf_update_shdr(scn, &sh);
			continue;
		}
		if (!(sh.sh_flags & SHF_COMPRESSED))
			continue;
		GElf_Chdr ch;
		Elf_Data *raw = elf_rawdata(scn, NULL);
		if (!raw || !raw->d_buf || raw->d_size < chdr_size || !gelf_getchdr(scn, &ch))
			continue;
		/* the size it claims, against what its compressed bytes can give:
		 * libelf (and so libdw) would allocate ch_size as it is */
		if (over_claim(ch.ch_size, raw->d_size - chdr_size)) {
			refuse(keep, scn, &sh, nm, ch.ch_size, raw->d_size - chdr_size);
			continue;
		}
		if (!listed(nm, inflated, sizeof(inflated) / sizeof(inflated[0])) || ch.ch_type != ELFCOMPRESS_ZLIB ||
		    !ch.ch_size || raw->d_size == chdr_size)
			continue;
		if (n == cap && (rc = pfsi_grow((void **)&jobs, &cap, sizeof(*jobs), 16)) < 0)
			goto out;
		if (ch.ch_size > SIZE_MAX / 2 || total > SIZE_MAX / 2)
			continue; /* libdw will try */
		/* its place in the one output buffer, 64-byte aligned */
		jobs[n++] = (struct job){ scn, (const uint8_t *)raw->d_buf + chdr_size, raw->d_size - chdr_size,
					  (uint8_t *)(uintptr_t)total, ch.ch_size, ch.ch_addralign, 0 };
		total += (ch.ch_size + 63) & ~(uint64_t)63;
	}
	if (!n)
		goto out;
	uint64_t key[2];
	int cached = cache_dir && *cache_dir && dwc_key(jobs, n, key) == 0;
	if (cached && dwc_load(cache_dir, key, jobs, n, keep)) {
		keep->cache = PFSI_DWC_HIT;
		goto install;
	}
	if (!(buf = out_buf(total)) || !(keep->p = calloc(1, sizeof(*keep->p))))
		goto out; /* libdw decompresses them */
	keep->p[keep->n++] = buf;
	for (size_t i = 0; i < n; i++) {
		jobs[i].dst = buf + (uintptr_t)jobs[i].dst;
		/* the gap to the next 64-byte boundary: zeros, as the cache
		 * file holds them (never what the heap had there) */
		size_t gap = (size_t)(((jobs[i].dst_size + 63) & ~(uint64_t)63) - jobs[i].dst_size);
		memset(jobs[i].dst + jobs[i].dst_size, 0, gap);
	}
	/* largest first: the other thread takes the next while one inflates
	 * .debug_info */
	struct job *order = malloc(n * sizeof(*order));
	if (order) {
		memcpy(order, jobs, n * sizeof(*jobs));
		qsort(order, n, sizeof(*order), job_cmp);
	}
	struct pool pool = { order ? order : jobs, n, 0 };
	pthread_t th;
	int two = n > 1 && pthread_create(&th, NULL, worker, &pool) == 0;
	worker(&pool);
	if (two)
		pthread_join(th, NULL);
	int all_ok = 1;
	if (order) {
		/* the results, back in section order */
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < n; k++)
				if (order[k].scn == jobs[i].scn)
					jobs[i].ok = order[k].ok;
		free(order);
	}
	for (size_t i = 0; i < n; i++)
		all_ok &= jobs[i].ok;
	if (cached && all_ok)
		keep->cache = dwc_store(cache_dir, key, jobs, n, buf, total) == 0 ? PFSI_DWC_WRITTEN
										     : PFSI_DWC_NOT_WRITTEN;
install:
	for (size_t i = 0; i < n; i++) {
		struct job *j = &jobs[i];
		GElf_Shdr sh;
		Elf_Data *d;
		if (!j->ok || !gelf_getshdr(j->scn, &sh) || !(d = elf_getdata(j->scn, NULL)))
			continue;
		sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		sh.sh_size = j->dst_size;
		sh.sh_addralign = j->align;
		if (!gelf_update_shdr(j->scn, &sh))
			continue;
		d->d_buf = j->dst;
		d->d_size = j->dst_size;
		d->d_type = ELF_T_BYTE;
		d->d_off = 0;
		d->d_align = j->align ? j->align : 1;
	}
out:
	if (!keep->n)
		free(buf);
	free(jobs);
	return rc;
}
