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
 */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

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
}

int pfsi_dw_prepare(Elf *e, struct pfsi_dw_bufs *keep)
{
	size_t shstrndx;
	keep->p = NULL;
	keep->n = 0;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
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
		if (!(sh.sh_flags & SHF_COMPRESSED) || !listed(nm, inflated, sizeof(inflated) / sizeof(inflated[0])))
			continue;
		GElf_Chdr ch;
		Elf_Data *raw = elf_rawdata(scn, NULL);
		if (!raw || !raw->d_buf || raw->d_size <= chdr_size || !gelf_getchdr(scn, &ch) ||
		    ch.ch_type != ELFCOMPRESS_ZLIB || !ch.ch_size)
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
	if (!n || !(buf = out_buf(total)) || !(keep->p = calloc(1, sizeof(*keep->p))))
		goto out; /* libdw decompresses them */
	keep->p[keep->n++] = buf;
	for (size_t i = 0; i < n; i++)
		jobs[i].dst = buf + (uintptr_t)jobs[i].dst;
	/* largest first: the other thread takes the next while one inflates
	 * .debug_info */
	qsort(jobs, n, sizeof(*jobs), job_cmp);
	struct pool pool = { jobs, n, 0 };
	pthread_t th;
	int two = n > 1 && pthread_create(&th, NULL, worker, &pool) == 0;
	worker(&pool);
	if (two)
		pthread_join(th, NULL);
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
