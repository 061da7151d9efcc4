/*
 * libpfsym/internal/lines.h - the index of a compilation unit's inline
 * frames and source lines (lines.c builds it from libdw; lnidx.c keeps it
 * on disk, so that a later run of the same debug file needs no libdw).
 * Private to libpfsym.
 */
#ifndef PFSI_INTERNAL_LINES_H
#define PFSI_INTERNAL_LINES_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

#define LN_NONE UINT32_MAX

struct ln_node {
	const char *name;      /* DW_AT_name of the inlined function */
	const char *linkage;   /* DW_AT_linkage_name, or NULL */
	const char *call_file; /* full path, or NULL */
	uint32_t call_line;
	uint32_t parent;       /* the node it is inlined into (a lower index),
				  LN_NONE: the real function */
	uint32_t depth;        /* 1: inlined into the real function */
};

struct ln_seg {
	uint64_t lo, hi; /* [lo, hi) */
	uint32_t node;   /* the deepest inlined node covering it */
};

struct ln_row {
	uint64_t addr;
	const char *file; /* full path, or NULL */
	uint32_t line;
	uint32_t end;     /* an end_sequence row: no line from here */
	uint32_t order;   /* the row's index in libdw's table (ties) */
};

/* One compilation unit: its strings are libdw's memory, or the index
 * file's (lnidx.c), never its own. */
struct ln_cu {
	uint64_t off;         /* the CU DIE's offset in .debug_info */
	const char *comp_dir; /* DW_AT_comp_dir, or NULL */
	struct ln_node *nodes;
	uint32_t n_nodes;
	size_t cap_nodes;
	struct ln_seg *segs;  /* sorted, disjoint */
	size_t n_segs;
	struct ln_row *rows;  /* sorted by address */
	size_t n_rows;
};

/* An address range of a CU, as libdw's dwarf_getaranges() gives those of
 * .debug_aranges, or from the CU DIE's own ranges for a CU no .debug_aranges
 * set lists (lines.c ar_add_units()): [lo, lo + len) belongs to the CU whose
 * DIE is at off. */
struct ln_ar {
	uint64_t lo, len, off;
};

/* ---- lnidx.c: the line index kept in the DWARF cache folder ---- */

struct pfsi_lnidx;

/* The key of the DWARF in e (an ELF handle whose section headers are as in
 * the file): XXH3-128 of a format string, the ELF header, every section
 * header and name, and every note section's bytes. @return 0, or -1 when e
 * has no GNU build-id note (such a file is never indexed on disk: its
 * section sizes alone cannot tell two builds apart) or cannot be read. */
int pfsi_lnidx_key(Elf *e, uint64_t key[2]);

/* The index file of key in dir, mapped and checked (its header, sizes,
 * payload hash and every offset in it), or NULL (none, or not valid: a
 * file that does not check out is ignored and later written again). */
struct pfsi_lnidx *pfsi_lnidx_load(const char *dir, const uint64_t key[2]);
void pfsi_lnidx_free(struct pfsi_lnidx *x);

/* The address ranges it holds, sorted as libdw sorts them; n gets their
 * count. Owned by x. */
const struct ln_ar *pfsi_lnidx_aranges(const struct pfsi_lnidx *x, size_t *n);

/* How many CUs it holds, and the index of its i-th (by DIE offset) into
 * *c (arrays malloc'd, strings x's: valid until pfsi_lnidx_free()).
 * @return 0, or -ENOMEM. */
size_t pfsi_lnidx_n_cus(const struct pfsi_lnidx *x);
uint64_t pfsi_lnidx_cu_off(const struct pfsi_lnidx *x, size_t i);
int pfsi_lnidx_cu(const struct pfsi_lnidx *x, size_t i, struct ln_cu *c);

/* Writes the index file of key in dir (made if missing): the aranges and
 * cus[0..n_cus) (sorted by off), to a temporary name renamed into place;
 * then prunes the folder as the section cache does. @return 0, or -1
 * (nothing left behind). */
int pfsi_lnidx_store(const char *dir, const uint64_t key[2], const struct ln_ar *ar, size_t n_ar,
		     struct ln_cu *const *cus, size_t n_cus);

/* ---- dwsec.c's cache folder, shared ---- */

/* A 128-bit key (XXH3-128): begun with the NUL-terminated label what
 * (NULL when out of memory), fed with XXH3_128bits_update(), ended (and
 * st freed) into key[0] (low 64 bits), key[1]. */
XXH3_state_t *pfsi_dwc_key_begin(const char *what);
void pfsi_dwc_key_end(XXH3_state_t *st, uint64_t key[2]);
/* XXH3-64 of a[0..na) then b[0..nb); 0 when out of memory. */
uint64_t pfsi_dwc_hash2(const void *a, size_t na, const void *b, size_t nb);

/* The first 32 bytes of every cache file, the inflated sections' (dwsec.c)
 * and the line index's (lnidx.c): which kind of file (magic), the writer's
 * PFSI_CACHE_ORDER in its own byte order (a reader of the other order sees
 * another value and rebuilds the file), a count of the kind's own units and
 * the 128-bit key the file is named by. */
#define PFSI_CACHE_ORDER 0x01020304u
struct pfsi_cache_id {
	char magic[8];
	uint32_t order;
	uint32_t n;
	uint64_t key[2];
};
/* Fills id (all of it) with magic (8 bytes, no NUL), PFSI_CACHE_ORDER, n
 * and key. */
void pfsi_cache_id_set(struct pfsi_cache_id *id, const char *magic, uint32_t n, const uint64_t key[2]);
/* Whether id has magic, PFSI_CACHE_ORDER and key (its n is the caller's to
 * check). */
int pfsi_cache_id_ok(const struct pfsi_cache_id *id, const char *magic, const uint64_t key[2]);

/* mkdir -p dir (new folders 0700). @return 0 or -1. */
int pfsi_dwc_mkdirs(const char *dir);
/* write(2) all n bytes. @return 0 or -1. */
int pfsi_dwc_write_all(int fd, const void *p, size_t n);
/* Removes the least recently used cache files of dir beyond
 * PFSYM_DWARF_CACHE_MB, never `keep` (a name in dir). */
void pfsi_dwc_prune(const char *dir, const char *keep);
/* Writes parts[0..n) one after the other to a new file made from tmp (a
 * mkstemps() template in dir, "PATH.XXXXXX": changed), renames it to path
 * (in dir), then prunes dir keeping it. @return 0, or -1 (nothing left
 * behind). */
struct pfsi_piece {
	const void *p;
	size_t n;
};
int pfsi_dwc_publish(const char *dir, const char *path, char *tmp, const struct pfsi_piece *parts, size_t n);

#endif
