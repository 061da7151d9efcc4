/*
 * perfdata.c - the perf.data reader (perfdata.h).
 *
 * Follows the layouts of the kernel tree's tools/perf/Documentation/
 * perf.data-file-format.txt, tools/lib/perf/include/perf/event.h and
 * tools/perf/util/header.c (how perf writes the header, attrs and features).
 *
 * Memory is flat: records are streamed through one buffer (file mode with
 * pread(2) from the data section, pipe mode with read(2)); the records of
 * COMPRESSED records through a second one, fed by one zstd stream that runs
 * across all of them (perf compresses the ring buffers' bytes as one endless
 * stream, flushed at each record, so a decompressed record may end in the
 * next COMPRESSED record's data). Nothing is allocated per record.
 */
#include "perfdata.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#define BUF_CAP ((1u << 20) + (64u << 10))  /* stream buffer: 1 MiB + one record */
#define ZOUT_CAP ((1u << 20) + (64u << 10)) /* decompressed records */
#define FEATURE_MAX (64u << 20)             /* bytes of one feature section read */
#define MAX_ATTRS 65536u
#define MAX_IDS (1u << 20)                  /* per attr */
#define MAX_HEADER_SIZE (1u << 20)

struct pd_attr {
	uint8_t *attr;          /* attr_size bytes, then n_ids * 8 bytes of ids */
	uint32_t attr_size;
	uint32_t n_ids;
	uint64_t offset;        /* of the attr entry */
};

struct pd_feat {
	uint32_t id;
	uint64_t offset, size;
};

enum { PH_ATTRS, PH_FEATURES, PH_DATA, PH_DONE };

struct pf_perfdata {
	int fd, own_fd;
	char *name;
	struct pf_perfdata_opts o;
	struct pf_perfdata_info info;
	int swap;
	int use_pread;          /* file mode: pread(2) at absolute offsets */
	uint64_t file_size;     /* file mode */
	int phase;
	/* file mode attrs and features */
	struct pd_attr *attrs;
	uint32_t n_attrs, attr_i;
	struct pd_feat *feats;
	uint32_t n_feats, feat_i;
	uint8_t *fbuf;
	size_t fcap;
	/* the stream */
	uint8_t *buf;
	size_t start, end;
	uint64_t pos;           /* input offset of buf[end] */
	uint64_t limit;         /* input offset where the records end (UINT64_MAX: EOF) */
	int eof;
	uint64_t skip;          /* bytes following the last record to skip */
	uint64_t skip_off;      /* offset of the record they belong to */
	/* decompression */
	ZSTD_DCtx *dctx;
	uint8_t *zout;
	size_t zs, ze;
	const uint8_t *zin;
	size_t zin_left;
	uint64_t zrec_off;      /* offset of the COMPRESSED record being decompressed */
	uint64_t n_compressed;
	uint64_t z_in, z_out;   /* compressed bytes read so far, and what they inflated to */
	uint64_t z_ratio, z_max; /* the bound (pf_perfdata_opts max_inflate_*) */
	/* errors */
	int err_rc;
	uint64_t bad_off;
	char err[512];
	struct pf_pd_damage deferred; /* damage in the features: reported after the records */
	uint64_t bytes_read;
};

/* ------------------------------------------------------------------------ */
/* Names                                                                     */
/* ------------------------------------------------------------------------ */

static const char *const feat_names[PF_PD_FEAT_KNOWN] = {
	[PF_PD_FEAT_TRACING_DATA] = "TRACING_DATA", [PF_PD_FEAT_BUILD_ID] = "BUILD_ID",
	[PF_PD_FEAT_HOSTNAME] = "HOSTNAME", [PF_PD_FEAT_OSRELEASE] = "OSRELEASE",
	[PF_PD_FEAT_VERSION] = "VERSION", [PF_PD_FEAT_ARCH] = "ARCH", [PF_PD_FEAT_NRCPUS] = "NRCPUS",
	[PF_PD_FEAT_CPUDESC] = "CPUDESC", [PF_PD_FEAT_CPUID] = "CPUID", [PF_PD_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[PF_PD_FEAT_CMDLINE] = "CMDLINE", [PF_PD_FEAT_EVENT_DESC] = "EVENT_DESC",
	[PF_PD_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY", [PF_PD_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[PF_PD_FEAT_BRANCH_STACK] = "BRANCH_STACK", [PF_PD_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PF_PD_FEAT_GROUP_DESC] = "GROUP_DESC", [PF_PD_FEAT_AUXTRACE] = "AUXTRACE", [PF_PD_FEAT_STAT] = "STAT",
	[PF_PD_FEAT_CACHE] = "CACHE", [PF_PD_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
	[PF_PD_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY", [PF_PD_FEAT_CLOCKID] = "CLOCKID",
	[PF_PD_FEAT_DIR_FORMAT] = "DIR_FORMAT", [PF_PD_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
	[PF_PD_FEAT_BPF_BTF] = "BPF_BTF", [PF_PD_FEAT_COMPRESSED] = "COMPRESSED",
	[PF_PD_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS", [PF_PD_FEAT_CLOCK_DATA] = "CLOCK_DATA",
	[PF_PD_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY", [PF_PD_FEAT_PMU_CAPS] = "PMU_CAPS",
	[PF_PD_FEAT_CPU_DOMAIN_INFO] = "CPU_DOMAIN_INFO",
};

const char *pf_pd_feature_name(uint32_t feat)
{
	return feat < PF_PD_FEAT_KNOWN ? feat_names[feat] : NULL;
}

static const char *const user_names[] = {
	"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID", "FINISHED_ROUND",
	"ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG",
	"STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT",
	"COMPRESSED2",
};

const char *pf_pd_record_name(uint32_t type)
{
	if (type < 64)
		return pf_record_type_name(type);
	if (type - 64 < sizeof(user_names) / sizeof(user_names[0]))
		return user_names[type - 64];
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Byte order                                                                */
/* ------------------------------------------------------------------------ */

uint16_t pf_pd_load16(const pf_perfdata *pd, const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return pd && pd->swap ? __builtin_bswap16(v) : v;
}

uint32_t pf_pd_load32(const pf_perfdata *pd, const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return pd && pd->swap ? __builtin_bswap32(v) : v;
}

uint64_t pf_pd_load64(const pf_perfdata *pd, const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return pd && pd->swap ? __builtin_bswap64(v) : v;
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

static const char *shown_name(const pf_perfdata *pd)
{
	return strcmp(pd->name, "-") == 0 ? "<stdin>" : pd->name;
}

void pf_notice_vline(void (*notice)(void *arg, const char *msg), void *arg, const char *name, const char *fmt,
		     va_list ap)
{
	if (!notice)
		return;
	char line[600];
	int n = snprintf(line, sizeof(line), "%s: ", name);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	notice(arg, line);
}

__attribute__((format(printf, 2, 3))) static void notice(pf_perfdata *pd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pf_notice_vline(pd->o.notice, pd->o.notice_arg, shown_name(pd), fmt, ap);
	va_end(ap);
}

/* "NAME: offset OFF: " then fmt and ap, into buf (size bytes), cut to fit. */
static void damage_vfmt(char *buf, size_t size, const char *name, uint64_t off, const char *fmt, va_list ap)
{
	int n = snprintf(buf, size, "%s: offset %llu: ", name, (unsigned long long)off);
	if (n >= 0 && (size_t)n < size) /* else the name alone filled buf */
		vsnprintf(buf + n, size - (size_t)n, fmt, ap);
}

/* Sets the (sticky) error: "NAME: offset X: TEXT". @return rc. */
__attribute__((format(printf, 4, 5))) static int fail(pf_perfdata *pd, int rc, uint64_t off, const char *fmt, ...)
{
	if (pd->err_rc)
		return pd->err_rc;
	va_list ap;
	va_start(ap, fmt);
	damage_vfmt(pd->err, sizeof(pd->err), shown_name(pd), off, fmt, ap);
	va_end(ap);
	pd->err_rc = rc;
	if (pd->bad_off == UINT64_MAX || off < pd->bad_off)
		pd->bad_off = off;
	return rc;
}

void pf_pd_damage_vnote(struct pf_pd_damage *d, const char *name, uint64_t off, const char *fmt, va_list ap)
{
	damage_vfmt(d->msg, sizeof(d->msg), name, off, fmt, ap);
	d->rc = -EBADMSG;
	d->off = off;
}

/* Damage in the features, reported after the records: the first kept. */
__attribute__((format(printf, 3, 4))) static void defer(pf_perfdata *pd, uint64_t off, const char *fmt, ...)
{
	if (pd->deferred.rc)
		return;
	va_list ap;
	va_start(ap, fmt);
	pf_pd_damage_vnote(&pd->deferred, shown_name(pd), off, fmt, ap);
	va_end(ap);
}

static const char *type_str(uint32_t type, char *tmp, size_t n)
{
	const char *s = pf_pd_record_name(type);
	if (s)
		return s;
	snprintf(tmp, n, "type %u", type);
	return tmp;
}

/* ------------------------------------------------------------------------ */
/* Input                                                                     */
/* ------------------------------------------------------------------------ */

/* Reads exactly n bytes at `off` (pread) or next (read). @return bytes read
 * (< n at end of input), or -errno. */
static ssize_t read_full(int fd, void *p, size_t n, int use_pread, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = use_pread ? pread(fd, (uint8_t *)p + got, n - got, (off_t)(off + got))
				      : read(fd, (uint8_t *)p + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Makes at least `need` bytes available at buf[start], reading more unless
 * the input (or the data section) ends. @return the bytes available, or -errno. */
static ssize_t fill(pf_perfdata *pd, size_t need)
{
	while (pd->end - pd->start < need && !pd->eof) {
		if (pd->start > 0 && pd->end + need > BUF_CAP) {
			memmove(pd->buf, pd->buf + pd->start, pd->end - pd->start);
			pd->end -= pd->start;
			pd->start = 0;
		}
		size_t want = BUF_CAP - pd->end;
		if (pd->limit != UINT64_MAX && (uint64_t)want > pd->limit - pd->pos)
			want = (size_t)(pd->limit - pd->pos);
		if (want == 0) {
			pd->eof = 1;
			break;
		}
		ssize_t r;
		for (;;) {
			r = pd->use_pread ? pread(pd->fd, pd->buf + pd->end, want, (off_t)pd->pos)
					  : read(pd->fd, pd->buf + pd->end, want);
			if (r >= 0 || errno != EINTR)
				break;
		}
		if (r < 0)
			return -errno;
		if (r == 0) {
			pd->eof = 1;
			break;
		}
		pd->end += (size_t)r;
		pd->pos += (uint64_t)r;
		pd->bytes_read += (uint64_t)r;
	}
	return (ssize_t)(pd->end - pd->start);
}

/* Input offset of buf[start]. */
static uint64_t cur_off(const pf_perfdata *pd)
{
	return pd->pos - (pd->end - pd->start);
}

/* Skips pd->skip bytes of data that follow a record. @return 0 or < 0. */
static int do_skip(pf_perfdata *pd)
{
	while (pd->skip) {
		size_t have = pd->end - pd->start;
		if (have) {
			size_t n = (uint64_t)have < pd->skip ? have : (size_t)pd->skip;
			pd->start += n;
			pd->skip -= n;
			continue;
		}
		if (pd->use_pread) {
			/* nothing buffered: move the read position */
			uint64_t room = pd->limit - pd->pos;
			if (pd->skip <= room && pd->pos + pd->skip <= pd->file_size) {
				pd->pos += pd->skip;
				pd->skip = 0;
				break;
			}
		}
		ssize_t r = fill(pd, 1);
		if (r < 0)
			return fail(pd, (int)r, cur_off(pd), "read: %s", strerror((int)-r));
		if (r == 0)
			return fail(pd, -ENODATA, pd->skip_off,
				    "the data that follows this record ends %llu bytes early: truncated",
				    (unsigned long long)pd->skip);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

/* Length of the run of whole kernel records at p[0..avail): each a multiple
 * of 8 and at least 8 bytes, types below 64. Stops before anything else
 * (handled, or found damaged, by the caller on its own). */
static size_t kernel_run(const pf_perfdata *pd, const uint8_t *p, size_t avail, uint32_t *n_out)
{
	size_t off = 0;
	uint32_t n = 0;
	while (avail - off >= 8) {
		uint32_t type = pf_pd_load32(pd, p + off);
		uint16_t sz = pf_pd_load16(pd, p + off + 6);
		if (type >= 64 || sz < 8 || (sz & 7) || sz > avail - off)
			break;
		off += sz;
		n++;
	}
	*n_out = n;
	return off;
}

/* One of perf's records at rec[0..sz) (whole, type >= 64, not COMPRESSED):
 * fills an item. @return 1 (an item), 0 (skipped: a feature not wanted or
 * unknown), or < 0. */
static int user_item(pf_perfdata *pd, const uint8_t *rec, size_t sz, uint64_t off, int compressed,
		     struct pf_pd_item *it)
{
	uint32_t type = pf_pd_load32(pd, rec);
	if (type == PF_PD_HEADER_ATTR) {
		if (sz < 8 + PERF_ATTR_SIZE_VER0)
			return fail(pd, -EBADMSG, off, "HEADER_ATTR record of %zu bytes, shorter than an attr: damaged",
				    sz);
		uint32_t asz = pf_pd_load32(pd, rec + 12);
		if (asz == 0)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz < PERF_ATTR_SIZE_VER0 || asz > sz - 8)
			return fail(pd, -EBADMSG, off, "HEADER_ATTR record of %zu bytes with an attr of %u bytes: damaged",
				    sz, asz);
		it->kind = PF_PD_ITEM_ATTR;
		it->data = rec + 8;
		it->size = asz;
		it->ids = rec + 8 + asz;
		it->n_ids = (uint32_t)((sz - 8 - asz) / 8);
		it->offset = off;
		it->compressed = (uint8_t)compressed;
		return 1;
	}
	if (type == PF_PD_HEADER_FEATURE) {
		if (sz < 16)
			return fail(pd, -EBADMSG, off, "HEADER_FEATURE record of %zu bytes: damaged", sz);
		uint64_t f = pf_pd_load64(pd, rec + 8);
		if (f == 0 || f >= PF_PD_FEAT_KNOWN) {
			notice(pd, "offset %llu: feature %llu unknown to this reader: skipped", (unsigned long long)off,
			       (unsigned long long)f);
			return 0;
		}
		if (pd->o.features && !(f < 64 && (pd->o.features >> f & 1)))
			return 0;
		it->kind = PF_PD_ITEM_FEATURE;
		it->type = (uint32_t)f;
		it->data = rec + 16;
		it->size = sz - 16;
		it->offset = off + 16;
		it->compressed = (uint8_t)compressed;
		return 1;
	}
	it->kind = PF_PD_ITEM_USER;
	it->type = type;
	it->data = rec;
	it->size = sz;
	it->offset = off;
	it->compressed = (uint8_t)compressed;
	return 1;
}

/* Records out of the zstd stream. @return 1 (an item), 0 (all input of the
 * current COMPRESSED record used; a partial record may stay), or < 0. */
static int z_next(pf_perfdata *pd, struct pf_pd_item *it)
{
	char tmp[32];
	for (;;) {
		size_t avail = pd->ze - pd->zs;
		if (avail >= 8) {
			const uint8_t *p = pd->zout + pd->zs;
			uint32_t type = pf_pd_load32(pd, p);
			uint16_t sz = pf_pd_load16(pd, p + 6);
			if (sz < 8)
				return fail(pd, -EBADMSG, pd->zrec_off,
					    "compressed data: a %s record of %u bytes: damaged",
					    type_str(type, tmp, sizeof tmp), sz);
			if (sz <= avail) {
				if (type < 64) {
					if (sz & 7)
						return fail(pd, -EBADMSG, pd->zrec_off,
							    "compressed data: a %s record of %u bytes, not a multiple of 8: "
							    "damaged",
							    type_str(type, tmp, sizeof tmp), sz);
					if ((uintptr_t)p & 7) { /* after a perf record of an odd size */
						memmove(pd->zout, p, avail);
						pd->ze = avail;
						pd->zs = 0;
						p = pd->zout;
					}
					uint32_t n;
					size_t run = kernel_run(pd, p, avail, &n);
					it->kind = PF_PD_ITEM_RECORDS;
					it->data = p;
					it->size = run;
					it->n_records = n;
					it->offset = pd->zrec_off;
					it->compressed = 1;
					pd->zs += run;
					return 1;
				}
				if (type == PF_PD_COMPRESSED || type == PF_PD_COMPRESSED2 ||
				    type == PF_PD_HEADER_TRACING_DATA || type == PF_PD_AUXTRACE)
					return fail(pd, -EBADMSG, pd->zrec_off,
						    "compressed data: a %s record inside compressed data: damaged",
						    type_str(type, tmp, sizeof tmp));
				pd->zs += sz;
				int rc = user_item(pd, p, sz, pd->zrec_off, 1, it);
				if (rc != 0)
					return rc;
				continue;
			}
		}
		if (!pd->zin_left)
			return 0;
		if (pd->zs > 0) {
			memmove(pd->zout, pd->zout + pd->zs, avail);
			pd->ze = avail;
			pd->zs = 0;
		}
		ZSTD_outBuffer ob = { pd->zout, ZOUT_CAP, pd->ze };
		ZSTD_inBuffer ib = { pd->zin, pd->zin_left, 0 };
		size_t r = ZSTD_decompressStream(pd->dctx, &ob, &ib);
		if (ZSTD_isError(r))
			return fail(pd, -EBADMSG, pd->zrec_off, "compressed data: zstd: %s: damaged",
				    ZSTD_getErrorName(r));
		/* a few KiB may inflate to GiBs (a decompression bomb, or
		 * damage): bound what they may give, by a ratio and in all */
		pd->z_out += ob.pos - pd->ze;
		uint64_t by_ratio = pd->z_ratio == UINT64_MAX || pd->z_in > UINT64_MAX / pd->z_ratio
					    ? UINT64_MAX
					    : pd->z_in * pd->z_ratio;
		if (by_ratio < PF_PD_INFLATE_FLOOR)
			by_ratio = PF_PD_INFLATE_FLOOR;
		if (pd->z_out > pd->z_max)
			return fail(pd, -EFBIG, pd->zrec_off,
				    "compressed data inflates past %llu bytes, the bound in all: stopped "
				    "(pfimport --max-inflate=RATIO,BYTES raises it)",
				    (unsigned long long)pd->z_max);
		if (pd->z_out > by_ratio)
			return fail(pd, -EFBIG, pd->zrec_off,
				    "compressed data inflates past %llu bytes (%llu times the %llu compressed bytes "
				    "read, at least %llu): stopped (pfimport --max-inflate=RATIO raises the bound)",
				    (unsigned long long)by_ratio, (unsigned long long)pd->z_ratio,
				    (unsigned long long)pd->z_in, (unsigned long long)PF_PD_INFLATE_FLOOR);
		if (ib.pos == 0 && ob.pos == pd->ze)
			return fail(pd, -EBADMSG, pd->zrec_off, "compressed data: zstd made no progress: damaged");
		pd->zin += ib.pos;
		pd->zin_left -= ib.pos;
		pd->ze = ob.pos;
	}
}

/* The end of the input: what is pending is damage. @return 0 or < 0. */
static int at_end(pf_perfdata *pd)
{
	if (pd->ze > pd->zs)
		return fail(pd, -ENODATA, pd->zrec_off,
			    "compressed data ends inside a record (%zu bytes of it): truncated", pd->ze - pd->zs);
	if (!pd->info.pipe && !pd->info.data_size_zero && pd->pos < pd->limit)
		return fail(pd, -ENODATA, pd->pos,
			    "the file ends here, inside the data section, which the header says ends at offset %llu: "
			    "truncated",
			    (unsigned long long)pd->limit);
	pd->phase = PH_DONE;
	if (pd->deferred.rc) {
		snprintf(pd->err, sizeof(pd->err), "%s", pd->deferred.msg);
		pd->err_rc = pd->deferred.rc;
		if (pd->bad_off == UINT64_MAX || pd->deferred.off < pd->bad_off)
			pd->bad_off = pd->deferred.off;
		return pd->err_rc;
	}
	return 0;
}

/* The next item of the stream. @return 1, 0 (end), or < 0. */
static int stream_next(pf_perfdata *pd, struct pf_pd_item *it)
{
	char tmp[32];
	for (;;) {
		if (pd->skip) {
			int rc = do_skip(pd);
			if (rc < 0)
				return rc;
		}
		if (pd->ze > pd->zs || pd->zin_left) {
			int rc = z_next(pd, it);
			if (rc != 0)
				return rc;
		}
		ssize_t avail = fill(pd, 8);
		if (avail < 0)
			return fail(pd, (int)avail, cur_off(pd), "read: %s", strerror((int)-avail));
		uint64_t off = cur_off(pd);
		if (avail == 0)
			return at_end(pd);
		if (avail < 8)
			return fail(pd, -ENODATA, off, "the input ends inside a record header (%zd of 8 bytes): truncated",
				    avail);
		const uint8_t *p = pd->buf + pd->start;
		uint32_t type = pf_pd_load32(pd, p);
		uint16_t sz = pf_pd_load16(pd, p + 6);
		if (sz < 8)
			return fail(pd, -EBADMSG, off, "a %s record of %u bytes: damaged",
				    type_str(type, tmp, sizeof tmp), sz);
		if (type < 64 && (sz & 7))
			return fail(pd, -EBADMSG, off, "a %s record of %u bytes, not a multiple of 8: damaged",
				    type_str(type, tmp, sizeof tmp), sz);
		avail = fill(pd, sz);
		if (avail < 0)
			return fail(pd, (int)avail, cur_off(pd), "read: %s", strerror((int)-avail));
		p = pd->buf + pd->start;
		if ((size_t)avail < sz) {
			if (!pd->info.pipe && pd->pos == pd->limit && !pd->info.data_size_zero && pd->limit < pd->file_size)
				return fail(pd, -EBADMSG, off,
					    "a %s record of %u bytes runs past the end of the data section at offset %llu: "
					    "damaged",
					    type_str(type, tmp, sizeof tmp), sz, (unsigned long long)pd->limit);
			return fail(pd, -ENODATA, off,
				    "the input ends inside a %s record (%zd of %u bytes): truncated",
				    type_str(type, tmp, sizeof tmp), avail, sz);
		}
		if (type < 64) {
			if ((uintptr_t)p & 7) {
				/* records are handed out 8-byte aligned, as the
				 * kernel wrote them; a perf record of an odd size,
				 * or the odd-sized data after one, moved them */
				memmove(pd->buf, p, (size_t)avail);
				pd->end = (size_t)avail;
				pd->start = 0;
				p = pd->buf;
			}
			uint32_t n;
			size_t run = kernel_run(pd, p, (size_t)avail, &n);
			it->kind = PF_PD_ITEM_RECORDS;
			it->data = p;
			it->size = run;
			it->n_records = n;
			it->offset = off;
			pd->start += run;
			return 1;
		}
		if (type == PF_PD_COMPRESSED || type == PF_PD_COMPRESSED2) {
			const uint8_t *z = p + 8;
			size_t zn = sz - 8u;
			if (type == PF_PD_COMPRESSED2) {
				if (sz < 16)
					return fail(pd, -EBADMSG, off, "a COMPRESSED2 record of %u bytes: damaged", sz);
				uint64_t dsz = pf_pd_load64(pd, p + 8);
				if (dsz > (uint64_t)sz - 16)
					return fail(pd, -EBADMSG, off,
						    "a COMPRESSED2 record of %u bytes with %llu bytes of data: damaged", sz,
						    (unsigned long long)dsz);
				z = p + 16;
				zn = (size_t)dsz;
			}
			if (!pd->dctx) {
				pd->dctx = ZSTD_createDCtx();
				pd->zout = malloc(ZOUT_CAP);
				if (!pd->dctx || !pd->zout)
					return fail(pd, -ENOMEM, off, "out of memory");
			}
			pd->zin = z;
			pd->zin_left = zn;
			pd->z_in += zn;
			pd->zrec_off = off;
			pd->n_compressed++;
			pd->start += sz;
			continue;
		}
		if (type == PF_PD_HEADER_TRACING_DATA || type == PF_PD_AUXTRACE) {
			/* data that is not part of the record follows it */
			if (sz < 16)
				return fail(pd, -EBADMSG, off, "a %s record of %u bytes: damaged",
					    type_str(type, tmp, sizeof tmp), sz);
			pd->skip = type == PF_PD_AUXTRACE ? pf_pd_load64(pd, p + 8) : pf_pd_load32(pd, p + 8);
			pd->skip_off = off;
		}
		pd->start += sz;
		int rc = user_item(pd, p, sz, off, 0, it);
		if (rc != 0)
			return rc;
	}
}

/* ------------------------------------------------------------------------ */
/* File mode: attrs and features                                             */
/* ------------------------------------------------------------------------ */

static int feature_item(pf_perfdata *pd, struct pf_pd_item *it)
{
	while (pd->feat_i < pd->n_feats) {
		const struct pd_feat *f = &pd->feats[pd->feat_i++];
		const char *nm = pf_pd_feature_name(f->id);
		int known = nm && f->id != 0;
		/* every feature of the table is checked against the file's size,
		 * also one not read (unknown, or not asked for): a file cut inside
		 * it is damaged all the same */
		if (f->offset > pd->file_size || f->size > pd->file_size - f->offset) {
			char num[32];
			if (!known) {
				snprintf(num, sizeof num, "%u", f->id);
				nm = num;
			}
			defer(pd, f->offset, "feature %s of %llu bytes runs past the end of the file (%llu bytes): damaged",
			      nm, (unsigned long long)f->size, (unsigned long long)pd->file_size);
			continue;
		}
		if (!known) {
			notice(pd, "feature %u unknown to this reader: skipped", f->id);
			continue;
		}
		if (pd->o.features && !(f->id < 64 && (pd->o.features >> f->id & 1)))
			continue;
		if (f->size > FEATURE_MAX) {
			notice(pd, "feature %s of %llu bytes is larger than %u bytes: skipped", nm,
			       (unsigned long long)f->size, FEATURE_MAX);
			continue;
		}
		if (f->size > pd->fcap) {
			uint8_t *nb = realloc(pd->fbuf, (size_t)f->size);
			if (!nb)
				return fail(pd, -ENOMEM, f->offset, "out of memory");
			pd->fbuf = nb;
			pd->fcap = (size_t)f->size;
		}
		ssize_t r = read_full(pd->fd, pd->fbuf, (size_t)f->size, 1, f->offset);
		if (r < 0)
			return fail(pd, (int)r, f->offset, "read: %s", strerror((int)-r));
		if ((uint64_t)r < f->size) {
			defer(pd, f->offset, "feature %s ends early: truncated", nm);
			continue;
		}
		it->kind = PF_PD_ITEM_FEATURE;
		it->type = f->id;
		it->data = pd->fbuf;
		it->size = (size_t)f->size;
		it->offset = f->offset;
		return 1;
	}
	return 0;
}

int pf_perfdata_next(pf_perfdata *pd, struct pf_pd_item *it)
{
	if (!pd || !it)
		return -EINVAL;
	memset(it, 0, sizeof(*it));
	if (pd->err_rc)
		return pd->err_rc;
	if (pd->phase == PH_ATTRS) {
		if (pd->attr_i < pd->n_attrs) {
			const struct pd_attr *a = &pd->attrs[pd->attr_i++];
			it->kind = PF_PD_ITEM_ATTR;
			it->data = a->attr;
			it->size = a->attr_size;
			it->ids = a->attr + a->attr_size;
			it->n_ids = a->n_ids;
			it->offset = a->offset;
			return 1;
		}
		pd->phase = PH_FEATURES;
	}
	if (pd->phase == PH_FEATURES) {
		int rc = feature_item(pd, it);
		if (rc != 0)
			return rc;
		pd->phase = PH_DATA;
	}
	if (pd->phase == PH_DONE)
		return 0;
	return stream_next(pd, it);
}

/* Reads the attrs of a file-mode file. @return 0 or < 0 (error set). */
static int read_attrs(pf_perfdata *pd, uint64_t entry, uint64_t off, uint64_t size)
{
	if (entry < PERF_ATTR_SIZE_VER0 + 16 || entry > 4096 + 16)
		return fail(pd, -EBADMSG, 16, "attr entry size %llu (from %u to %u expected): damaged header",
			    (unsigned long long)entry, PERF_ATTR_SIZE_VER0 + 16, 4096 + 16);
	if (size % entry)
		return fail(pd, -EBADMSG, 24, "attrs of %llu bytes are not a multiple of the entry size %llu: damaged",
			    (unsigned long long)size, (unsigned long long)entry);
	uint64_t n = size / entry;
	if (n > MAX_ATTRS)
		return fail(pd, -EBADMSG, 24, "%llu attrs: damaged header", (unsigned long long)n);
	if (off > pd->file_size || size > pd->file_size - off)
		return fail(pd, -ENODATA, off, "the attrs (%llu bytes) run past the end of the file (%llu bytes): truncated",
			    (unsigned long long)size, (unsigned long long)pd->file_size);
	pd->attrs = calloc(n ? n : 1, sizeof(*pd->attrs));
	if (!pd->attrs)
		return -ENOMEM;
	uint32_t asz = (uint32_t)(entry - 16);
	uint8_t e[4096 + 16];
	for (uint64_t i = 0; i < n; i++) {
		uint64_t eo = off + i * entry;
		ssize_t r = read_full(pd->fd, e, (size_t)entry, 1, eo);
		if (r < 0)
			return fail(pd, (int)r, eo, "read: %s", strerror((int)-r));
		if ((uint64_t)r < entry)
			return fail(pd, -ENODATA, eo, "attr %llu ends early: truncated", (unsigned long long)i);
		uint32_t fsz = pf_pd_load32(pd, e + 4);
		if (fsz != 0 && fsz != asz)
			return fail(pd, -EBADMSG, eo, "attr %llu says it has %u bytes, its entry holds %u: damaged",
				    (unsigned long long)i, fsz, asz);
		uint64_t ids_off = pf_pd_load64(pd, e + asz), ids_size = pf_pd_load64(pd, e + asz + 8);
		if (ids_size % 8 || ids_size / 8 > MAX_IDS || ids_off > pd->file_size ||
		    ids_size > pd->file_size - ids_off)
			return fail(pd, -EBADMSG, eo + asz,
				    "attr %llu: ids of %llu bytes at offset %llu, outside the file (%llu bytes): damaged",
				    (unsigned long long)i, (unsigned long long)ids_size, (unsigned long long)ids_off,
				    (unsigned long long)pd->file_size);
		struct pd_attr *a = &pd->attrs[i];
		a->attr = malloc(asz + (size_t)ids_size);
		if (!a->attr)
			return -ENOMEM;
		memcpy(a->attr, e, asz);
		a->attr_size = asz;
		a->n_ids = (uint32_t)(ids_size / 8);
		a->offset = eo;
		pd->n_attrs = (uint32_t)(i + 1);
		r = read_full(pd->fd, a->attr + asz, (size_t)ids_size, 1, ids_off);
		if (r < 0)
			return fail(pd, (int)r, ids_off, "read: %s", strerror((int)-r));
		if ((uint64_t)r < ids_size)
			return fail(pd, -ENODATA, ids_off, "the ids of attr %llu end early: truncated", (unsigned long long)i);
	}
	pd->info.attr_size = asz;
	pd->info.n_attrs = (uint32_t)n;
	return 0;
}

/* The feature table after the data section. Damage is deferred. */
static int read_feature_table(pf_perfdata *pd)
{
	uint32_t n = 0;
	for (int w = 0; w < 4; w++)
		n += (uint32_t)__builtin_popcountll(pd->info.features[w]);
	if (!n)
		return 0;
	uint64_t off = pd->info.data_offset + pd->info.data_size;
	uint64_t bytes = (uint64_t)n * 16;
	if (off > pd->file_size || bytes > pd->file_size - off) {
		defer(pd, off, "the table of %u features runs past the end of the file (%llu bytes): damaged", n,
		      (unsigned long long)pd->file_size);
		return 0;
	}
	uint8_t *t = malloc((size_t)bytes);
	pd->feats = calloc(n, sizeof(*pd->feats));
	if (!t || !pd->feats) {
		free(t);
		return -ENOMEM;
	}
	ssize_t r = read_full(pd->fd, t, (size_t)bytes, 1, off);
	if (r < 0 || (uint64_t)r < bytes) {
		free(t);
		if (r < 0)
			return fail(pd, (int)r, off, "read: %s", strerror((int)-r));
		defer(pd, off, "the feature table ends early: truncated");
		return 0;
	}
	uint32_t k = 0;
	for (uint32_t f = 0; f < 256; f++) {
		if (!(pd->info.features[f / 64] >> (f % 64) & 1))
			continue;
		pd->feats[k].id = f;
		pd->feats[k].offset = pf_pd_load64(pd, t + 16 * k);
		pd->feats[k].size = pf_pd_load64(pd, t + 16 * k + 8);
		k++;
	}
	pd->n_feats = n;
	free(t);
	return 0;
}

/* Copies the rest of a pipe into an unlinked temporary file (a file-mode
 * perf.data needs seeking). `head` holds the bytes read already.
 * @return the file's fd, or -errno. */
static int spool(pf_perfdata *pd, const uint8_t *head, size_t nhead)
{
	const char *dir;
	int t = pf_tmpfile("pfimport", &dir);
	if (t < 0)
		return t;
	uint8_t *b = malloc(1u << 20);
	if (!b) {
		close(t);
		return -ENOMEM;
	}
	int rc = 0;
	size_t n = nhead;
	memcpy(b, head, nhead);
	for (;;) {
		size_t off = 0;
		while (off < n) {
			ssize_t w = write(t, b + off, n - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = w < 0 ? -errno : -EIO;
				break;
			}
			off += (size_t)w;
		}
		if (rc)
			break;
		ssize_t r = read_full(pd->fd, b, 1u << 20, 0, 0);
		if (r < 0) {
			rc = (int)r;
			break;
		}
		if (r == 0)
			break;
		pd->bytes_read += (uint64_t)r;
		n = (size_t)r;
	}
	free(b);
	if (rc) {
		close(t);
		return rc;
	}
	notice(pd, "a perf.data file (not pipe mode) on a pipe: copied to a temporary file in %s", dir);
	return t;
}

static int open_common(pf_perfdata *pd)
{
	uint8_t h[PF_PD_FILE_HEADER_SIZE];
	struct stat st;
	if (fstat(pd->fd, &st) == 0 && S_ISDIR(st.st_mode))
		return fail(pd, -EISDIR, 0, "a directory (perf record --threads writes one: not supported)");
	ssize_t r = read_full(pd->fd, h, 16, 0, 0);
	if (r < 0)
		return fail(pd, (int)r, 0, "read: %s", strerror((int)-r));
	pd->bytes_read = (uint64_t)r;
	if (r < 8)
		return fail(pd, r == 0 ? -ENODATA : -EILSEQ, 0, "%s", r == 0 ? "empty input: not a perf.data file"
									: "too short for a perf.data file");
	uint64_t magic;
	memcpy(&magic, h, 8);
	if (magic == PF_PD_MAGIC)
		pd->swap = 0;
	else if (magic == __builtin_bswap64(PF_PD_MAGIC))
		pd->swap = 1;
	else if (memcmp(h, "PERFFILE", 8) == 0)
		return fail(pd, -EPROTONOSUPPORT, 0, "perf.data version 1 (magic PERFFILE, perf before 2011): not supported");
	else
		return fail(pd, -EILSEQ, 0, "not a perf.data file (bad magic)");
	pd->info.endian = pd->swap ? (pf_host_endian() == PF_LITTLE_ENDIAN ? PF_BIG_ENDIAN : PF_LITTLE_ENDIAN)
				   : pf_host_endian();
	if (r < 16)
		return fail(pd, -ENODATA, (uint64_t)r, "the input ends inside the header: truncated");
	uint64_t hsz = pf_pd_load64(pd, h + 8);
	pd->info.header_size = hsz;
	if (hsz == PF_PD_PIPE_HEADER_SIZE) {
		pd->info.pipe = 1;
		pd->use_pread = 0;
		pd->pos = 16;
		pd->limit = UINT64_MAX;
		pd->phase = PH_DATA;
		return 0;
	}
	/* file mode: the features come after the data, so the input must seek */
	off_t here = lseek(pd->fd, 0, SEEK_CUR);
	if (here != 16 || !S_ISREG(st.st_mode)) {
		int t = spool(pd, h, 16);
		if (t < 0)
			return fail(pd, t, 0, "copying the input to a temporary file: %s", strerror(-t));
		if (pd->own_fd)
			close(pd->fd);
		pd->fd = t;
		pd->own_fd = 1;
		pd->info.spooled = 1;
		if (fstat(t, &st) < 0)
			return fail(pd, -errno, 0, "fstat: %s", strerror(errno));
	}
	pd->file_size = (uint64_t)st.st_size;
	pd->use_pread = 1;
	if (hsz < 72 || (hsz > 72 && hsz < PF_PD_FILE_HEADER_SIZE) || hsz > MAX_HEADER_SIZE)
		return fail(pd, -EBADMSG, 8, "header size %llu (16, 72 or 104 expected): damaged header",
			    (unsigned long long)hsz);
	size_t want = hsz < PF_PD_FILE_HEADER_SIZE ? (size_t)hsz : PF_PD_FILE_HEADER_SIZE;
	memset(h + 16, 0, sizeof(h) - 16);
	r = read_full(pd->fd, h, want, 1, 0);
	if (r < 0)
		return fail(pd, (int)r, 0, "read: %s", strerror((int)-r));
	if ((size_t)r < want || pd->file_size < hsz)
		return fail(pd, -ENODATA, (uint64_t)r, "the file ends inside its %llu-byte header: truncated",
			    (unsigned long long)hsz);
	if (hsz > PF_PD_FILE_HEADER_SIZE)
		notice(pd, "a header of %llu bytes, longer than the %u this reader knows: the rest skipped",
		       (unsigned long long)hsz, PF_PD_FILE_HEADER_SIZE);
	uint64_t entry = pf_pd_load64(pd, h + 16);
	uint64_t a_off = pf_pd_load64(pd, h + 24), a_size = pf_pd_load64(pd, h + 32);
	uint64_t d_off = pf_pd_load64(pd, h + 40), d_size = pf_pd_load64(pd, h + 48);
	if (hsz >= PF_PD_FILE_HEADER_SIZE) {
		for (int w = 0; w < 4; w++)
			pd->info.features[w] = pf_pd_load64(pd, h + 72 + 8 * w);
		if (pd->swap && !(pd->info.features[0] >> PF_PD_FEAT_HOSTNAME & 1)) {
			/* written by a 32-bit machine: the bitmap is made of u32
			 * words of the other order (perf always sets HOSTNAME) */
			uint32_t w32[8];
			for (int w = 0; w < 8; w++)
				w32[w] = pf_pd_load32(pd, h + 72 + 4 * w);
			for (int w = 0; w < 4; w++)
				pd->info.features[w] = (uint64_t)w32[2 * w] | (uint64_t)w32[2 * w + 1] << 32;
		}
	}
	if (a_off < hsz || d_off < hsz)
		return fail(pd, -EBADMSG, 24, "the attrs (offset %llu) or the data (offset %llu) overlap the header: "
			    "damaged header", (unsigned long long)a_off, (unsigned long long)d_off);
	if ((a_off <= d_off && a_size > d_off - a_off) || (a_off > d_off && d_size > a_off - d_off))
		return fail(pd, -EBADMSG, 24, "the attrs and the data overlap: damaged header");
	int rc = read_attrs(pd, entry, a_off, a_size);
	if (rc < 0)
		return rc;
	if (d_off > pd->file_size)
		return fail(pd, -ENODATA, d_off, "the data section starts after the end of the file (%llu bytes): "
			    "truncated", (unsigned long long)pd->file_size);
	pd->info.data_offset = d_off;
	pd->info.data_size = d_size;
	if (d_size == 0) {
		/* perf record was killed before it wrote the header again */
		pd->info.data_size_zero = 1;
		pd->info.data_size = pd->file_size - d_off;
		memset(pd->info.features, 0, sizeof(pd->info.features));
		notice(pd, "the header's data size is 0 (perf record was not stopped cleanly): records read to the "
		       "end of the file, no features");
	} else if ((rc = read_feature_table(pd)) < 0) {
		return rc;
	}
	pd->pos = d_off;
	pd->limit = d_off + pd->info.data_size;
	pd->phase = PH_ATTRS;
	return 0;
}

static pf_perfdata *pd_new(int fd, const char *name, const struct pf_perfdata_opts *o)
{
	pf_perfdata *pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->fd = fd;
	pd->name = strdup(name ? name : "-");
	pd->buf = malloc(BUF_CAP);
	pd->bad_off = UINT64_MAX;
	pd->limit = UINT64_MAX;
	if (!pd->name || !pd->buf) {
		free(pd->name);
		free(pd->buf);
		free(pd);
		return NULL;
	}
	pd->o.sz = sizeof(pd->o);
	if (o) {
		size_t n = o->sz < sizeof(pd->o) ? o->sz : sizeof(pd->o);
		memcpy(&pd->o, o, n);
		pd->o.sz = sizeof(pd->o);
	}
	pd->z_ratio = pd->o.max_inflate_ratio ? pd->o.max_inflate_ratio : PF_PD_INFLATE_RATIO;
	pd->z_max = pd->o.max_inflate_bytes ? pd->o.max_inflate_bytes : PF_PD_INFLATE_MAX;
	return pd;
}

int pf_perfdata_open_fd(pf_perfdata **out, int fd, const char *name, const struct pf_perfdata_opts *o)
{
	if (!out)
		return -EINVAL;
	*out = pd_new(fd, name, o);
	if (!*out)
		return -ENOMEM;
	if (fd < 0)
		return fail(*out, -EBADF, 0, "bad file descriptor");
	return open_common(*out);
}

int pf_perfdata_open(pf_perfdata **out, const char *path, const struct pf_perfdata_opts *o)
{
	if (!out || !path)
		return -EINVAL;
	*out = NULL;
	int fd = 0;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			*out = pd_new(-1, path, o);
			if (!*out)
				return -ENOMEM;
			snprintf((*out)->err, sizeof((*out)->err), "%s: %s", path, strerror(e));
			(*out)->err_rc = -e;
			return -e;
		}
	}
	*out = pd_new(fd, path, o);
	if (!*out) {
		if (fd != 0)
			close(fd);
		return -ENOMEM;
	}
	(*out)->own_fd = fd != 0;
	return open_common(*out);
}

const struct pf_perfdata_info *pf_perfdata_info(const pf_perfdata *pd)
{
	return pd ? &pd->info : NULL;
}

const char *pf_perfdata_errmsg(const pf_perfdata *pd)
{
	return pd ? pd->err : "";
}

uint64_t pf_perfdata_bad_offset(const pf_perfdata *pd)
{
	return pd ? pd->bad_off : UINT64_MAX;
}

uint64_t pf_perfdata_bytes_read(const pf_perfdata *pd)
{
	return pd ? pd->bytes_read : 0;
}

uint64_t pf_perfdata_compressed_records(const pf_perfdata *pd)
{
	return pd ? pd->n_compressed : 0;
}

const char *pf_perfdata_name(const pf_perfdata *pd)
{
	return pd ? pd->name : "";
}

void pf_perfdata_close(pf_perfdata *pd)
{
	if (!pd)
		return;
	if (pd->own_fd && pd->fd >= 0)
		close(pd->fd);
	for (uint32_t i = 0; i < pd->n_attrs; i++)
		free(pd->attrs[i].attr);
	free(pd->attrs);
	free(pd->feats);
	free(pd->fbuf);
	free(pd->buf);
	free(pd->zout);
	ZSTD_freeDCtx(pd->dctx);
	free(pd->name);
	free(pd);
}

/* ------------------------------------------------------------------------ */
/* Feature and record decoders                                               */
/* ------------------------------------------------------------------------ */

int pf_pd_string_next(const pf_perfdata *pd, const uint8_t *data, size_t size, size_t *pos, const char **s,
		      size_t *len)
{
	if (!data || !pos || !s || !len || *pos > size)
		return -EINVAL;
	if (*pos == size)
		return 0;
	if (size - *pos < 4)
		return -EBADMSG;
	uint32_t n = pf_pd_load32(pd, data + *pos);
	if (n > size - *pos - 4)
		return -EBADMSG;
	const char *p = (const char *)data + *pos + 4;
	const char *z = memchr(p, 0, n);
	*s = p;
	*len = z ? (size_t)(z - p) : n;
	*pos += 4 + (size_t)n;
	return 1;
}

int pf_pd_event_desc_next(const pf_perfdata *pd, const uint8_t *data, size_t size, size_t *pos,
			  struct pf_pd_event_desc *e)
{
	if (!data || !pos || !e || *pos > size)
		return -EINVAL;
	if (*pos == 0) {
		if (size < 8)
			return size == 0 ? 0 : -EBADMSG;
		e->nr_left = pf_pd_load32(pd, data);
		e->attr_size = pf_pd_load32(pd, data + 4);
		if (e->attr_size < PERF_ATTR_SIZE_VER0)
			return -EBADMSG;
		*pos = 8;
	}
	if (e->nr_left == 0)
		return 0;
	size_t p = *pos;
	if (size - p < (size_t)e->attr_size + 4)
		return -EBADMSG;
	e->attr = data + p;
	p += e->attr_size;
	e->n_ids = pf_pd_load32(pd, data + p);
	p += 4;
	const char *s;
	size_t sl;
	if (pf_pd_string_next(pd, data, size, &p, &s, &sl) != 1)
		return -EBADMSG;
	if ((uint64_t)e->n_ids * 8 > size - p)
		return -EBADMSG;
	e->name = s;
	e->name_len = sl;
	e->ids = data + p;
	p += (size_t)e->n_ids * 8;
	e->nr_left--;
	*pos = p;
	return 1;
}

int pf_pd_build_id_next(const pf_perfdata *pd, const uint8_t *data, size_t size, size_t *pos,
			struct pf_pd_build_id *e)
{
	if (!data || !pos || !e || *pos > size)
		return -EINVAL;
	if (*pos == size)
		return 0;
	size_t left = size - *pos;
	const uint8_t *p = data + *pos;
	if (left < 8)
		return -EBADMSG;
	uint16_t sz = pf_pd_load16(pd, p + 6);
	/* header, pid, 24 bytes of build-id and size */
	if (sz < 36 || sz > left)
		return -EBADMSG;
	memset(e, 0, sizeof(*e));
	e->misc = pf_pd_load16(pd, p + 4);
	e->pid = (int32_t)pf_pd_load32(pd, p + 8);
	memcpy(e->build_id, p + 12, 20);
	e->build_id_size = (e->misc & 0x8000) ? p[32] : 20;
	if (e->build_id_size > 20)
		return -EBADMSG;
	const char *fn = (const char *)p + 36;
	size_t fl = sz - 36u;
	const char *z = memchr(fn, 0, fl);
	e->filename = fn;
	e->filename_len = z ? (size_t)(z - fn) : fl;
	*pos += sz;
	return 1;
}
