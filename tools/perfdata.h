/*
 * perfdata.h - pfimport: reading perf.data, the file `perf record` writes,
 * and importing it as a `.pf` recording (built on libpfile's public API).
 *
 * This header is the manual of the perf.data reader (tools/pfimport/perfdata.c)
 * and of the importer (tools/pfimport/import.c) that pfimport(1) drives. Read
 * it top to bottom, after pfile.h.
 *
 * Sources followed (facts and layouts, not code): the kernel tree's
 * tools/perf/Documentation/perf.data-file-format.txt, include/uapi/linux/
 * perf_event.h (kernel records, struct perf_event_attr), tools/lib/perf/
 * include/perf/event.h (perf's own record types 64 and up) and
 * tools/perf/util/header.c (the feature sections' layouts, how perf writes
 * and reads the file header and the attrs).
 *
 * The two layouts of perf.data:
 *  - file mode (`perf record -o FILE`): a 104-byte header (magic "PERFILE2",
 *    its size, the size of one attr entry, where the attrs, the data and the
 *    features are, a 256-bit feature bitmap), the attrs with their sample ids,
 *    the data section (records), and after the data a table of feature
 *    sections (host name, architecture, command line, event names, build-ids
 *    ...). The features sit at the end: a reader needs to seek.
 *  - pipe mode (`perf record -o -`): a 16-byte header (magic, size 16) and
 *    then only records; the attrs and features come as perf's own records
 *    (PERF_RECORD_HEADER_ATTR, PERF_RECORD_HEADER_FEATURE, ...) in the stream.
 * Every field is in the byte order of the machine that wrote the file; the
 * magic tells which ("PERFILE2" as a u64 of that machine).
 *
 * HowTo: read a perf.data file
 *    struct pf_perfdata_opts o = PF_PERFDATA_OPTS_INIT;
 *    pf_perfdata *pd;
 *    if (pf_perfdata_open(&pd, "perf.data", &o) < 0) { print pf_perfdata_errmsg(pd); }
 *    struct pf_pd_item it; int rc;
 *    while ((rc = pf_perfdata_next(pd, &it)) > 0) {
 *        switch (it.kind) {
 *        case PF_PD_ITEM_ATTR:    an event: it.data = attr, it.ids = its ids
 *        case PF_PD_ITEM_FEATURE: a feature section: it.type = HEADER_* number
 *        case PF_PD_ITEM_RECORDS: whole kernel records (types < 64)
 *        case PF_PD_ITEM_USER:    one of perf's own records (types >= 64)
 *        }
 *    }
 *    if (rc < 0) print pf_perfdata_errmsg(pd);   // damaged or truncated
 *    pf_perfdata_close(pd);
 * Items come in this order: in file mode every ATTR, then every FEATURE,
 * then the data section's records; in pipe mode as the stream has them.
 * Records inside PERF_RECORD_COMPRESSED (`perf record -z`) come out
 * decompressed, as if they had been written plainly.
 *
 * HowTo: import a perf.data file as .pf (what pfimport does)
 *    pf_perfdata_open(&pd, path, &o);            // o.features = PF_IMPORT_FEATURES
 *    struct pf_import_opts io = PF_IMPORT_OPTS_INIT;
 *    struct pf_import_stats st;
 *    rc = pf_import(pd, out_fd, &io, &st, msg, sizeof msg);
 *
 * Conventions are pfile.h's: negative errno values, one-line messages with
 * the file name and the byte offset, sizes in bytes, times in ns of the
 * recording's perf clock. Memory is bounded whatever the file size: one read
 * buffer (1 MiB plus at most one record), the zstd decompression state
 * (at most 128 MiB window, about 1 MiB for perf's level 1), one feature at a
 * time (at most 64 MiB), and the attrs with their ids.
 */
#ifndef PF_PERFDATA_H
#define PF_PERFDATA_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "pfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Constants of the perf.data format                                         */
/* ------------------------------------------------------------------------ */

/* The magic: the bytes "PERFILE2" read as a u64 on a little-endian machine.
 * A file whose first 8 bytes read as this value in host order is in host
 * byte order; one that reads as its byte swap is in the other order. The
 * version 1 magic "PERFFILE" (perf before 2011) is not read. */
#define PF_PD_MAGIC 0x32454c4946524550ull
#define PF_PD_FILE_HEADER_SIZE 104 /* perf_file_header: magic, size, attr_size,
                                      attrs, data, event_types, 256-bit features */
#define PF_PD_PIPE_HEADER_SIZE 16  /* perf_pipe_file_header: magic, size */

/* perf's own record types (tools/lib/perf/include/perf/event.h): records
 * that perf writes into perf.data besides the kernel's (types below 64). */
enum pf_pd_user_type {
	PF_PD_HEADER_ATTR = 64,         /* attr + ids (pipe mode) */
	PF_PD_HEADER_EVENT_TYPE = 65,   /* u64 tracepoint id, char name[64] (old) */
	PF_PD_HEADER_TRACING_DATA = 66, /* u32 size; `size` bytes follow the record */
	PF_PD_HEADER_BUILD_ID = 67,     /* one build-id entry (as in the BUILD_ID feature) */
	PF_PD_FINISHED_ROUND = 68,      /* perf's sorting barrier; no payload */
	PF_PD_ID_INDEX = 69,            /* id -> idx, cpu, tid */
	PF_PD_AUXTRACE_INFO = 70,
	PF_PD_AUXTRACE = 71,            /* u64 size, ...; `size` bytes of trace follow */
	PF_PD_AUXTRACE_ERROR = 72,
	PF_PD_THREAD_MAP = 73,
	PF_PD_CPU_MAP = 74,
	PF_PD_STAT_CONFIG = 75,
	PF_PD_STAT = 76,
	PF_PD_STAT_ROUND = 77,
	PF_PD_EVENT_UPDATE = 78,        /* u64 type (0 unit, 1 scale, 2 name, 3 cpus), u64 id, data */
	PF_PD_TIME_CONV = 79,
	PF_PD_HEADER_FEATURE = 80,      /* u64 feature, the feature's bytes (pipe mode) */
	PF_PD_COMPRESSED = 81,          /* zstd stream bytes to the record's end */
	PF_PD_FINISHED_INIT = 82,       /* end of the records perf synthesized at the start */
	PF_PD_COMPRESSED2 = 83,         /* u64 data_size, zstd stream bytes, padding to 8 */
};

/* perf.data features (tools/perf/util/header.h, HEADER_*): bit numbers of
 * the file header's feature bitmap, and feat_id of HEADER_FEATURE records. */
enum pf_pd_feature {
	PF_PD_FEAT_TRACING_DATA = 1, PF_PD_FEAT_BUILD_ID, PF_PD_FEAT_HOSTNAME, PF_PD_FEAT_OSRELEASE,
	PF_PD_FEAT_VERSION, PF_PD_FEAT_ARCH, PF_PD_FEAT_NRCPUS, PF_PD_FEAT_CPUDESC, PF_PD_FEAT_CPUID,
	PF_PD_FEAT_TOTAL_MEM, PF_PD_FEAT_CMDLINE, PF_PD_FEAT_EVENT_DESC, PF_PD_FEAT_CPU_TOPOLOGY,
	PF_PD_FEAT_NUMA_TOPOLOGY, PF_PD_FEAT_BRANCH_STACK, PF_PD_FEAT_PMU_MAPPINGS, PF_PD_FEAT_GROUP_DESC,
	PF_PD_FEAT_AUXTRACE, PF_PD_FEAT_STAT, PF_PD_FEAT_CACHE, PF_PD_FEAT_SAMPLE_TIME,
	PF_PD_FEAT_MEM_TOPOLOGY, PF_PD_FEAT_CLOCKID, PF_PD_FEAT_DIR_FORMAT, PF_PD_FEAT_BPF_PROG_INFO,
	PF_PD_FEAT_BPF_BTF, PF_PD_FEAT_COMPRESSED, PF_PD_FEAT_CPU_PMU_CAPS, PF_PD_FEAT_CLOCK_DATA,
	PF_PD_FEAT_HYBRID_TOPOLOGY, PF_PD_FEAT_PMU_CAPS, PF_PD_FEAT_CPU_DOMAIN_INFO,
	PF_PD_FEAT_KNOWN /* features from this number on are unknown to this reader */
};

/* "HOSTNAME", "BUILD_ID", ... for a feature number, or NULL if unknown. */
const char *pf_pd_feature_name(uint32_t feat);

/* "HEADER_ATTR", "FINISHED_ROUND", ... for one of perf's record types
 * (64 and up), the kernel's names for the others (pf_record_type_name()),
 * or NULL if unknown. */
const char *pf_pd_record_name(uint32_t type);

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct pf_perfdata pf_perfdata;

/* Options of pf_perfdata_open(); `sz` = sizeof(struct pf_perfdata_opts) (a
 * caller built against an older header keeps working). */
struct pf_perfdata_opts {
	size_t sz;
	/* Features to hand out: bit f set = feature f (f < 64); 0 = all. A file
	 * mode feature that is not wanted is never read. */
	uint64_t features;
	/* Called with one line (no newline, no program name) for each thing the
	 * reader skips without it being damage: an unknown feature, a header
	 * longer than the reader knows, a data size of 0 (perf record was not
	 * stopped cleanly), a file-mode file read from a pipe. NULL: silent. */
	void (*notice)(void *arg, const char *msg);
	void *notice_arg;
	/* The bound on what COMPRESSED records may inflate to, all together: at
	 * most max_inflate_ratio times the compressed bytes read so far (but
	 * never less than PF_PD_INFLATE_FLOOR), and at most max_inflate_bytes.
	 * Past it the reader stops with -EFBIG and a message naming the bound
	 * (pfimport --max-inflate). 0: the defaults, PF_PD_INFLATE_RATIO and
	 * PF_PD_INFLATE_MAX; UINT64_MAX: no bound of that kind. */
	uint64_t max_inflate_ratio;
	uint64_t max_inflate_bytes;
};
#define PF_PERFDATA_OPTS_INIT { sizeof(struct pf_perfdata_opts), 0, NULL, NULL, 0, 0 }
/* perf record -z writes 8 to 14 bytes per sample of 100 to 300 (-g): about
 * 10 to 30 times; repeated records compress further. */
#define PF_PD_INFLATE_RATIO 200u
#define PF_PD_INFLATE_FLOOR (64ull << 20)  /* bytes: small inputs are never cut */
#define PF_PD_INFLATE_MAX   (64ull << 30)  /* bytes */

/* The one line of a notice callback (pf_perfdata_opts and pfimport's
 * options): "NAME: " and fmt with ap, cut at 599 bytes, handed to
 * notice(arg, line); nothing when notice is NULL. */
__attribute__((format(printf, 4, 0))) void pf_notice_vline(void (*notice)(void *arg, const char *msg), void *arg,
							    const char *name, const char *fmt, va_list ap);

/* Opens `path` ("-" = standard input) and reads the header: in file mode
 * also the attrs with their ids and the feature table. A file-mode file on
 * a pipe (`cat perf.data | ...`) is first copied to an unlinked temporary
 * file in $TMPDIR (else /tmp), because its features come after its data.
 * @return 0 and *out set; or -ENOENT etc. from open(2); -EILSEQ (not a
 * perf.data file: bad magic); -EPROTONOSUPPORT (the version 1 format, or a
 * data directory, `perf record --threads`); -ENODATA (shorter than its
 * header or its attrs); -EBADMSG (an impossible header field: sizes,
 * offsets, an attr or ids outside the file); -ENOMEM; -ENOSPC etc. from the
 * temporary copy. On error *out is still set (unless -ENOMEM) for
 * pf_perfdata_errmsg(); pf_perfdata_close() it. */
int pf_perfdata_open(pf_perfdata **out, const char *path, const struct pf_perfdata_opts *o);

/* As pf_perfdata_open() on an open fd (not closed by the reader). `name` is
 * used in messages ("-" is shown as <stdin>). */
int pf_perfdata_open_fd(pf_perfdata **out, int fd, const char *name, const struct pf_perfdata_opts *o);

/* What the header says. */
struct pf_perfdata_info {
	uint8_t endian;          /* enum pf_endian of every field of the file */
	uint8_t pipe;            /* 1: pipe mode */
	uint8_t spooled;         /* 1: file mode read from a pipe via a temporary copy */
	uint8_t data_size_zero;  /* 1: file mode whose header's data size is 0 (perf
	                            record killed): records are read to the end of the
	                            file, and there are no features */
	uint64_t header_size;    /* bytes, as the header says (16 in pipe mode) */
	uint64_t data_offset;    /* file mode: where the records start, bytes */
	uint64_t data_size;      /* file mode: bytes of records (as read, see above) */
	uint64_t features[4];    /* file mode: the feature bitmap (bit f = feature f) */
	uint32_t attr_size;      /* file mode: bytes of each attr (its entry less 16) */
	uint32_t n_attrs;        /* file mode: number of attrs */
};
const struct pf_perfdata_info *pf_perfdata_info(const pf_perfdata *pd);

/* What pf_perfdata_next() hands out. Pointers are into the reader's buffers,
 * valid until the next pf_perfdata_next() or pf_perfdata_close(). Every byte
 * is in the file's byte order (pf_perfdata_info()->endian); the pf_pd_load*()
 * helpers below read integers from it. */
enum pf_pd_item_kind {
	PF_PD_ITEM_ATTR = 1,   /* an event: data/size = struct perf_event_attr
	                          (size = its length: the attr entry's in file
	                          mode, attr.size (0 meaning 64) in pipe mode);
	                          ids/n_ids = its sample ids (u64 each) */
	PF_PD_ITEM_FEATURE,    /* a feature section: type = feature number,
	                          data/size = its bytes */
	PF_PD_ITEM_RECORDS,    /* n_records whole kernel records (types < 64), back
	                          to back, each a multiple of 8 bytes, as perf wrote
	                          them (or decompressed them); data is 8-byte
	                          aligned, whatever came before in the file */
	PF_PD_ITEM_USER,       /* one of perf's records (type >= 64; data/size = the
	                          whole record, header included): every one but
	                          HEADER_ATTR, HEADER_FEATURE (handed out as ATTR and
	                          FEATURE items) and COMPRESSED/COMPRESSED2 (whose
	                          records are handed out). The data that follows a
	                          HEADER_TRACING_DATA or an AUXTRACE record in the
	                          stream is skipped and not part of the item. */
};
struct pf_pd_item {
	uint32_t kind;          /* enum pf_pd_item_kind */
	uint32_t type;          /* USER: the record type; FEATURE: the feature number */
	uint64_t offset;        /* input offset of the item, bytes: of the first record,
	                           the feature's bytes, the attr entry or record; for
	                           records out of a COMPRESSED record, that record's */
	const uint8_t *data;
	size_t size;            /* bytes at data */
	const uint8_t *ids;     /* ATTR: n_ids u64 sample ids */
	uint32_t n_ids;
	uint32_t n_records;     /* RECORDS: number of records at data */
	uint8_t compressed;     /* RECORDS, USER: decompressed from a COMPRESSED record */
};

/* The next item.
 * @return 1 and *it set; 0 at the clean end of the input (the end of the
 * data section in file mode, end of file in pipe mode); or a negative code
 * with pf_perfdata_errmsg() naming the file, the byte offset and the fault.
 * The reader cannot go on after an error, and everything handed out before it
 * was intact:
 *  -ENODATA: truncated: the input ends inside a record (or a record's
 *            trailing data), or before the end the header gives the data
 *            section; every whole record before it was handed out;
 *  -EBADMSG: damaged: a record size below 8, a kernel record size not a
 *            multiple of 8, a record running past the data section, a zstd
 *            error or a damaged record inside compressed data, a feature
 *            table or feature section outside the file (reported after the
 *            data section's records, which are read all the same);
 *  -EIO etc.: read(2) failed; -ENOMEM.
 * Damage in the features is reported at the end, after every record. */
int pf_perfdata_next(pf_perfdata *pd, struct pf_pd_item *it);

/* The error's one-line message ("" if none), e.g.
 * "perf.data: offset 81234: record of 0 bytes (type 9): damaged". Owned by
 * the reader. */
const char *pf_perfdata_errmsg(const pf_perfdata *pd);

/* Input offset of the first damage met, or UINT64_MAX if none. */
uint64_t pf_perfdata_bad_offset(const pf_perfdata *pd);

/* Bytes read from the input so far (the whole file when spooled). */
uint64_t pf_perfdata_bytes_read(const pf_perfdata *pd);

/* COMPRESSED and COMPRESSED2 records decompressed so far. */
uint64_t pf_perfdata_compressed_records(const pf_perfdata *pd);

/* The name given at open ("-" for standard input). */
const char *pf_perfdata_name(const pf_perfdata *pd);

/* Closes the fd if the reader opened it (and the temporary copy), frees
 * everything. NULL is a no-op. */
void pf_perfdata_close(pf_perfdata *pd);

/* Integers of the file's byte order at p (unaligned). */
uint16_t pf_pd_load16(const pf_perfdata *pd, const void *p);
uint32_t pf_pd_load32(const pf_perfdata *pd, const void *p);
uint64_t pf_pd_load64(const pf_perfdata *pd, const void *p);

/* Damage kept to be reported later (the reader's deferred damage in the
 * features, pf_import()'s first damage in perf's own data). Zeroed: none. */
struct pf_pd_damage {
	int rc;                 /* 0, or -EBADMSG once noted */
	uint64_t off;           /* the input offset of the damage */
	char msg[512];          /* "NAME: offset OFF: TEXT", cut to fit */
};

/* Notes in d the damage found at byte `off` of the input `name`: the line
 * "NAME: offset OFF: " then fmt and ap, rc -EBADMSG and off (whatever d
 * held before; the caller decides which damage to keep). */
void pf_pd_damage_vnote(struct pf_pd_damage *d, const char *name, uint64_t off, const char *fmt, va_list ap);

/* ------------------------------------------------------------------------ */
/* Decoders of the feature sections and of perf's records                    */
/* ------------------------------------------------------------------------ */

/* Common rules: `data`/`size` are a feature's bytes or a record as handed
 * out; *pos (bytes, start at 0) is the cursor, advanced past what is read.
 * @return 1 with the outputs set (pointers into `data`), 0 at the end (no
 * bytes left), -EBADMSG if a length runs past `size` (the rest is lost). */

/* A perf_header_string: u32 len (bytes, NUL and padding to 64 included),
 * then the bytes. *s and *len: the string up to its first NUL. Used by the
 * HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC and CPUID features (one
 * string each) and CMDLINE (u32 count, then that many strings: the perf
 * binary's path, then its arguments). */
int pf_pd_string_next(const pf_perfdata *pd, const uint8_t *data, size_t size, size_t *pos,
		      const char **s, size_t *len);

/* One event of the EVENT_DESC feature (u32 nr, u32 attr_size, then nr times:
 * attr, u32 nr_ids, a perf_header_string name, nr_ids u64 ids). Call with
 * *pos = 0 first: it reads nr and attr_size into the iterator. */
struct pf_pd_event_desc {
	uint32_t nr_left;        /* events not read yet (iterator state) */
	uint32_t attr_size;      /* bytes of each attr (iterator state) */
	const uint8_t *attr;     /* file byte order */
	uint32_t n_ids;
	const uint8_t *ids;      /* n_ids u64, file byte order */
	const char *name;        /* the event's name as perf showed it, e.g.
	                            "cpu-clock:ppp"; name_len bytes, no NUL */
	size_t name_len;
};
int pf_pd_event_desc_next(const pf_perfdata *pd, const uint8_t *data, size_t size, size_t *pos,
			  struct pf_pd_event_desc *e);

/* One build-id entry: of the BUILD_ID feature (a sequence of them) or a
 * HEADER_BUILD_ID record (one). Each is a perf_event_header (its misc: the
 * cpumode PERF_RECORD_MISC_KERNEL, _USER, _GUEST_KERNEL ...; bit 15 = the
 * size byte is valid; its size: the entry's length), s32 pid, 20 build-id
 * bytes, u8 size, 3 reserved bytes, the file name (NUL-padded). */
struct pf_pd_build_id {
	int32_t pid;             /* -1 (the host kernel) or a process; perf writes 0 */
	uint16_t misc;           /* header.misc: cpumode in bits 0-2 */
	uint8_t build_id_size;   /* bytes: the size byte when bit 15 of misc is set,
	                            else 20 (perf before 5.12 wrote 20-byte SHA-1 ids) */
	uint8_t build_id[20];
	const char *filename;    /* into data, filename_len bytes, no NUL */
	size_t filename_len;
};
int pf_pd_build_id_next(const pf_perfdata *pd, const uint8_t *data, size_t size, size_t *pos,
			struct pf_pd_build_id *e);

/* ------------------------------------------------------------------------ */
/* Import: perf.data to .pf (tools/pfimport/import.c)                          */
/* ------------------------------------------------------------------------ */

/* The features pf_import() reads; give them as pf_perfdata_opts.features. */
#define PF_IMPORT_FEATURES                                                                          \
	((1ull << PF_PD_FEAT_BUILD_ID) | (1ull << PF_PD_FEAT_HOSTNAME) | (1ull << PF_PD_FEAT_OSRELEASE) | \
	 (1ull << PF_PD_FEAT_VERSION) | (1ull << PF_PD_FEAT_ARCH) | (1ull << PF_PD_FEAT_NRCPUS) |       \
	 (1ull << PF_PD_FEAT_CPUDESC) | (1ull << PF_PD_FEAT_CPUID) | (1ull << PF_PD_FEAT_TOTAL_MEM) |     \
	 (1ull << PF_PD_FEAT_CMDLINE) | (1ull << PF_PD_FEAT_EVENT_DESC) |                               \
	 (1ull << PF_PD_FEAT_SAMPLE_TIME) | (1ull << PF_PD_FEAT_CLOCKID) |                              \
	 (1ull << PF_PD_FEAT_COMPRESSED) | (1ull << PF_PD_FEAT_CLOCK_DATA))

/* Options of pf_import(); `sz` = sizeof(struct pf_import_opts). */
struct pf_import_opts {
	size_t sz;
	int zstd_level;               /* as pf_writer_opts.zstd_level: 1..19, 0 = 3, < 0 stored */
	uint32_t transform;           /* as pf_writer_opts.transform; PF_IMPORT_OPTS_INIT:
	                                 PF_TRANSFORM_COLUMNS */
	uint32_t records_frame_bytes; /* raw bytes per RECORDS section; 0 = 1 MiB, 8 MiB
	                                 for recordings with user stack copies; else as
	                                 pf_writer_opts (64 KiB or more) */
	const char *cmdline;          /* the importing program's command line, for META
	                                 `pfimport_cmdline`; NULL: not written */
	const char *tool_version;     /* META `tool_version`; NULL: "pfimport (pftools) VERSION" */
	/* Called with one line (no newline) for everything left out on purpose
	 * that the man page does not promise to leave out silently: an unknown
	 * record type, a guest build-id, an event or feature that came after the
	 * records had started. NULL: silent. */
	void (*notice)(void *arg, const char *msg);
	void *notice_arg;
	/* perf's build-id cache (~/.debug by default in perf), where the
	 * [vdso] image of a BUILD_ID entry is read from (pf_import_vdso());
	 * NULL: not looked up, the vDSO's frames stay unnamed */
	const char *buildid_dir;
	/* no KSYMS section, even when the running kernel is the recorded one
	 * (pfimport --no-kallsyms) */
	int no_kallsyms;
	/* no PERFMAP sections: the recorded processes' /tmp/perf-PID.map are
	 * not read (pfimport --no-perf-maps) */
	int no_perf_maps;
	/* the uid owning the input file, whose JIT maps are accepted besides
	 * root's and the importing user's; -1: unknown */
	int64_t input_owner;
};
#define PF_IMPORT_OPTS_INIT { sizeof(struct pf_import_opts), 0, PF_TRANSFORM_COLUMNS, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, -1 }

/* What pf_import() did. */
struct pf_import_stats {
	uint64_t samples;          /* PERF_RECORD_SAMPLE records written */
	uint64_t bad_samples;      /* PERF_RECORD_SAMPLE records left out: their
	                              fields run past their size (damage, the
	                              import ends without END and fails) */
	uint64_t lost_samples;     /* sum of LOST.lost and LOST_SAMPLES.lost */
	uint64_t records;          /* kernel records written */
	uint64_t records_by_type[32]; /* of them, by PERF_RECORD_* type */
	uint64_t perf_records[32]; /* perf's own records read, by type - 64 (types 64..95) */
	uint64_t perf_records_other; /* perf's records of types 96 and up */
	uint64_t compressed;       /* COMPRESSED/COMPRESSED2 records decompressed */
	uint64_t lost_counters;    /* LOST_SAMPLES records left out: those perf record
	                              writes at the end from each event's lost-sample
	                              counter (PERF_FORMAT_LOST), which count the
	                              samples that the LOST records count already */
	uint32_t events;           /* EVENT sections written */
	uint32_t build_ids;        /* BUILDID entries written from perf's build-id table */
	uint32_t inode_proofs;     /* BUILDID entries (flag INODE) of files proven by inode */
	uint32_t perf_maps;        /* PERFMAP sections: JIT maps proven to be the recorded processes' */
	uint32_t inode_unproven;   /* files without a build-id that no proof vouches for */
	uint64_t mmap_build_ids;   /* MMAP2 records that carry a build-id
	                              (perf record --buildid-mmap) */
	uint32_t dso_images;       /* DSO_IMAGE sections written (vDSO images from
	                              opts.buildid_dir) */
	uint64_t bytes_in;         /* bytes read from the perf.data input */
	uint64_t bytes_out;        /* bytes of .pf written */
	uint8_t complete;          /* 1: the input was whole and END was written */
	int output_error;          /* 0, or the errno of the write that failed */
};

/* Whether `path` (len bytes) names a vDSO as perf does: [vdso], [vdso32],
 * [vdsox32]. */
int pf_import_is_vdso(const char *path, size_t len);

/* The vDSO image of the BUILD_ID entry `path` (a name for which
 * pf_import_is_vdso() holds) with build-id bid[bid_size], read from perf's
 * build-id cache `dir` (DIR/PATH/HEX/vdso, the layout of perf's
 * build-id.c) and checked against that build-id, is appended to `out` as a
 * DSO_IMAGE payload (format/pfile.md 4.7; pid and addr 0: the cache does not
 * say). @return 1 (appended), 0 (not there, or not that build-id: `why`
 * says which, with the path), or -ENOMEM. */
int pf_import_vdso(const char *dir, const char *path, size_t path_len, const uint8_t *bid, uint8_t bid_size,
		   struct pf_buf *out, char *why, size_t why_size);

/* Reads everything `pd` holds and writes it to `out_fd` as a .pf file
 * (format/pfile.md) through libpfile's writer, in the byte order of the
 * perf.data file, with the ELF machine and word size of its ARCH feature:
 *  - META from the features (pfimport(1), OUTPUT, names every key);
 *  - one EVENT per attr, with its ids, named as EVENT_DESC, an EVENT_UPDATE
 *    name record or a HEADER_EVENT_TYPE record say, else after its
 *    type and config ("cpu-clock", "raw 0x1234", ...);
 *  - RECORDS: every kernel record, byte for byte, in the order of the file
 *    (compressed ones decompressed), but for those of a type libpfile does
 *    not know and perf's lost-sample counter records (st->lost_counters);
 *    perf's own records (types 64 and up) are used (attrs, features,
 *    build-ids, names) or dropped, none is written;
 *  - BUILDID: the build-ids of the BUILD_ID feature and HEADER_BUILD_ID
 *    records (file size and mtime unknown: 0), guest machines' left out;
 *  - END with the totals, only when the input was read to its clean end.
 * The META and EVENT sections are written once the attrs and features are
 * known: in pipe mode at FINISHED_INIT, the first sample, or 16 MiB of
 * records, whichever comes first (the records before are held in memory).
 * @return 0; or, with msg[msg_size] set to one line: the reader's error
 * (pf_perfdata_next(); everything intact was written, END was not); a write
 * error (st->output_error set; the output stops there); -ENOMEM. `st` may be
 * NULL. */
int pf_import(pf_perfdata *pd, int out_fd, const struct pf_import_opts *o, struct pf_import_stats *st,
	      char *msg, size_t msg_size);

/* ELF e_machine and user-space word size (4 or 8 bytes) of a `uname -m`
 * name ("x86_64", "aarch64", "armv7l", "i686", "riscv64", "ppc64le", ...).
 * @return 0, or -ENOENT when the name is unknown (outputs untouched). */
int pf_arch_machine(const char *arch, uint16_t *e_machine, uint8_t *word_size);

#ifdef __cplusplus
}
#endif
#endif /* PF_PERFDATA_H */
