/*
 * profile.h - libpfile: the resolved profile (pfsym's output sections) and
 * the folding engine (pffold, pfdiff).
 *
 * A resolved profile is a set of interned tables appended to a recording
 * (format/profile.md): STRINGS, FRAMES, STACKS, SAMPLES and SYMINFO sections,
 * types 0x0100-0x0104. Ids are dense and global across chunks: the first
 * STRINGS chunk defines strings 0..n-1, the next continues at n, and so on.
 * Every chunk is written before the first section that refers to its ids, so
 * a reader builds the tables as it streams.
 *
 * Three layers, each usable alone:
 *  1. struct pf_prof: the in-memory tables (strings, frames, stacks) with
 *     hash interning, and the encoders/decoders of their sections.
 *  2. pf_prof_builder: turns a raw recording (EVENT, MAPS, THREADS, BUILDID,
 *     RECORDS sections) into samples over those tables: address -> mapping
 *     through maps.h, callchain context markers, return address - 1, one
 *     frame per unique (DSO, file offset) with an optional symbolizer callback
 *     (pfsym passes one that reads ELF; pffold passes none: frames stay
 *     module+offset).
 *  3. pf_fold: reads a file (resolved profile if present, else raw records
 *     through the builder) and returns sorted folded stacks
 *     `comm;root;...;leaf COUNT` and top-N functions.
 *
 * Errors are negative errno values as in pfile.h; messages come from the
 * functions that take an errmsg buffer or from pf_fold_errmsg().
 */
#ifndef PF_PROFILE_H
#define PF_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include "pfile.h"
#include "maps.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PF_PROF_NONE UINT32_MAX /* "no id" in every table reference */

/* Frame flags (format/profile.md 3.2). */
#define PF_FRAME_KERNEL     0x01u /* kernel address; name may be NONE: shown "[kernel]" */
#define PF_FRAME_UNRESOLVED 0x02u /* the DSO is known, the symbol is not: "[dso+0xoff]" */
#define PF_FRAME_MISMATCH   0x04u /* the binary found has another build-id than recorded */
#define PF_FRAME_UNKNOWN    0x08u /* no mapping holds the address: "[unknown]" */
#define PF_FRAME_INLINE     0x10u /* reserved: an inlined call (not produced yet) */
#define PF_FRAME_HAS_ADDR   0x20u /* `addr` holds the ELF virtual address */
#define PF_FRAME_TRUNCATED  0x40u /* not code: the root of a stack whose call chain a
				   * depth limit cut, named "[truncated]" */

/* Sample flags. */
#define PF_SAMPLE_LOST 0x01u /* not a sample: `period` samples were lost here */

/* One frame: a code address in a DSO, with what is known of it. */
struct pf_prof_frame {
	uint32_t name;      /* string id of the function name, or NONE */
	uint32_t dso;       /* string id of the DSO path as recorded, or NONE */
	uint64_t file_off;  /* byte offset in the DSO file (kernel: the address) */
	uint64_t addr;      /* ELF virtual address (if PF_FRAME_HAS_ADDR), else 0 */
	uint32_t flags;     /* PF_FRAME_* */
	uint32_t src_file;  /* string id of the source file, or NONE */
	uint32_t line;      /* source line, 0 = unknown */
};

/* One stack node: stacks are a tree (a trie of call paths). A sample's stack
 * is a leaf node; its frames are read by following `parent` to the root
 * (NONE). `parent` is always a smaller id than the node's own. */
struct pf_prof_stack {
	uint32_t parent;    /* stack id of the caller's node, or NONE at the root */
	uint32_t frame;     /* frame id of this node */
};

/* One sample (or one LOST entry). */
struct pf_prof_sample {
	uint64_t time;      /* ns, perf clock */
	uint64_t period;    /* events (ns for cpu-clock); for LOST: samples lost */
	uint32_t pid, tid, cpu;
	uint32_t stack;     /* leaf stack node, or NONE (no frames) */
	uint32_t comm;      /* string id of the thread's name, or NONE */
	uint16_t event;     /* index of the EVENT section (0-based, file order) */
	uint16_t flags;     /* PF_SAMPLE_* */
};

/* The tables. Zero-initialise or pf_prof_init(); pf_prof_free() when done. */
struct pf_prof {
	char *blob;           /* string bytes, each NUL-terminated */
	size_t blob_len, blob_cap;
	uint64_t *str_off;    /* offset of string i in blob */
	uint32_t *str_len;    /* bytes of string i (no NUL) */
	uint32_t n_str, cap_str;
	struct pf_prof_frame *frames;
	uint32_t n_frames, cap_frames;
	struct pf_prof_stack *stacks;
	uint32_t n_stacks, cap_stacks;
	/* interning hashes (id+1; 0 = empty), built lazily by the intern calls */
	uint32_t *str_hash, *frame_hash, *stack_hash;
	uint32_t str_hash_cap, frame_hash_cap, stack_hash_cap;
	/* how many entries of each table were encoded by pf_prof_encode_tables() */
	uint32_t enc_str, enc_frames, enc_stacks;
};

void pf_prof_init(struct pf_prof *p);
void pf_prof_free(struct pf_prof *p);

/* Interns `len` bytes as a string. `s` may point into p's own strings (e.g.
 * a part of one from pf_prof_str_get()). @return its id (>= 0) or -ENOMEM /
 * -E2BIG. */
int64_t pf_prof_str(struct pf_prof *p, const char *s, size_t len);
/* The string with id `id` (NUL-terminated, owned by p) or NULL if out of range.
 * *len (may be NULL) gets its length. Valid until the next intern call. */
const char *pf_prof_str_get(const struct pf_prof *p, uint32_t id, size_t *len);
/* Interns a frame (all fields compared). @return its id or -ENOMEM. */
int64_t pf_prof_frame(struct pf_prof *p, const struct pf_prof_frame *f);
/* Interns the stack node (parent, frame). @return its id or -ENOMEM. */
int64_t pf_prof_stack(struct pf_prof *p, uint32_t parent, uint32_t frame);

/* Appends to the three buffers the STRINGS, FRAMES and STACKS payloads of the
 * entries added since the last call (a buffer is left empty when its table
 * has nothing new). Each payload is at most `max_bytes` bytes (<=
 * PF_SECTION_MAX_RAW); when more is pending, the call encodes what fits and
 * returns 1: write the payloads and call again. @return 0 (all encoded), 1
 * (more pending), or -ENOMEM. */
int pf_prof_encode_tables(struct pf_prof *p, struct pf_buf *strings, struct pf_buf *frames,
			  struct pf_buf *stacks, size_t max_bytes);

/* Samples payload: a u32 count, u32 entry size (40), then the entries.
 * pf_prof_samples_begin() starts one in `b` (cleared first),
 * pf_prof_samples_add() appends an entry and bumps the count. */
int pf_prof_samples_begin(struct pf_buf *b);
int pf_prof_samples_add(struct pf_buf *b, const struct pf_prof_sample *s);
#define PF_PROF_SAMPLE_SIZE 40u
#define PF_PROF_FRAME_SIZE 40u
#define PF_PROF_STACK_SIZE 8u

/* Loads a STRINGS, FRAMES or STACKS section into the tables (appending; no
 * interning hash is built). The chunk's first id must equal the table's
 * current size and every reference must be to an id already defined.
 * @return 0, -EBADMSG (with a message in errmsg[errmsg_size]), -ENOMEM.
 * Other section types: 0, nothing done. */
int pf_prof_load_section(struct pf_prof *p, const struct pf_section *sec, char *errmsg, size_t errmsg_size);

/* Iterates a SAMPLES payload. *pos starts at 0. @return 1 with *s filled, 0 at
 * the end, -EBADMSG if the header or an entry runs past `size`. */
int pf_prof_samples_next(const uint8_t *data, size_t size, size_t *pos, struct pf_prof_sample *s);

/* ------------------------------------------------------------------------ */
/* Builder: raw recording -> samples                                         */
/* ------------------------------------------------------------------------ */

/* The symbolizer callback. Called once per unique (DSO, file offset) of a user
 * address that lies in a mapping. `f` comes filled with dso (string id of the
 * recorded path), file_off, flags = PF_FRAME_UNRESOLVED and name = NONE; the
 * callback sets name (pf_prof_str on `p`), addr, flags, src_file, line as it
 * can. @return 0, or a negative errno that stops the build. */
typedef int (*pf_prof_resolve_fn)(void *ctx, struct pf_prof *p, struct pf_dso *dso,
				  struct pf_prof_frame *f);

/* Called for every sample (and LOST entry) in record order. @return 0 or a
 * negative errno that stops the build. */
typedef int (*pf_prof_sample_fn)(void *ctx, const struct pf_prof_sample *s);

/* Optional user-stack unwinder (pfsym passes one over libdw), called for
 * samples that carry PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER.
 * `maps` is the builder's timeline (mappings of s->pid at s->time). Fills
 * addrs[0..max) with the user frames, leaf first, as addresses to look up:
 * return addresses already moved into their call instruction (minus one),
 * the leaf and signal-interrupted frames as they are. @return the number of
 * frames (0: nothing unwound, the builder uses the callchain or the IP as
 * without an unwinder), or a negative errno that stops the build. The
 * kernel part of the sample's callchain is kept in front of these frames.
 * The builder keeps max - 1 frames (1024): an unwinder that fills all `max`
 * had more, and the stack gets a "[truncated]" root frame. */
typedef int (*pf_prof_unwind_fn)(void *ctx, struct pf_maps *maps, const struct pf_sample *s,
				 uint64_t *addrs, uint32_t max);

struct pf_prof_builder_opts {
	size_t sz;                  /* sizeof(struct pf_prof_builder_opts) */
	pf_prof_resolve_fn resolve; /* NULL: frames stay DSO + offset */
	void *resolve_ctx;
	pf_prof_sample_fn on_sample; /* required */
	void *sample_ctx;
	/* since 0.1 (absent when sz is smaller): */
	pf_prof_unwind_fn unwind;   /* NULL: user frames from the callchain */
	void *unwind_ctx;
};

/* Counters, for pfsym's summary. */
struct pf_prof_stats {
	uint64_t samples;          /* SAMPLE records turned into samples */
	uint64_t bad_samples;      /* SAMPLE records that did not decode */
	uint64_t lost;             /* samples lost (LOST + LOST_SAMPLES records) */
	uint64_t frames;           /* user frames over all samples */
	uint64_t frames_resolved;  /* of them, with a function name */
	uint64_t frames_kernel;    /* kernel frames over all samples */
	uint64_t unique_addrs;     /* unique (DSO, offset) user addresses */
	/* since 0.1 (issue 11): */
	uint64_t truncated;        /* samples whose call chain a depth limit cut:
				    * the kernel's (a chain of exactly its
				    * limit's entries: the event's
				    * sample_max_stack, else META's
				    * perf_event_max_stack, else 127) or the
				    * unwinder's (1024 user frames); their
				    * stacks start at a "[truncated]" frame */
};

typedef struct pf_prof_builder pf_prof_builder;

/* Creates a builder that interns into `p` (not owned). @return 0 or -ENOMEM/-EINVAL. */
int pf_prof_builder_new(pf_prof_builder **out, struct pf_prof *p, const struct pf_prof_builder_opts *o);

/* Feeds one section (host order, as pf_reader_next() gives it). Uses META
 * (perf_event_max_stack), EVENT, MAPS, THREADS, BUILDID and RECORDS; ignores
 * the others. Call chains are kept whole, however long a record holds them. Samples are
 * passed to on_sample one RECORDS section late (see pf_prof_builder_finish).
 * @return 0, -EBADMSG (message in pf_prof_builder_errmsg(); the section's rest
 * is skipped, the build may go on), -ENOMEM or the callbacks' errors. */
int pf_prof_builder_section(pf_prof_builder *b, const struct pf_section *sec);

/* As pf_prof_builder_section() for a RECORDS section, without copying its
 * payload: *buf (malloc'd, *cap bytes) holds sec->data and is taken over by
 * the builder; *buf and *cap come back as another malloc'd buffer (or NULL
 * and 0) for the caller's reuse, e.g. with pf_reader_swap_data().
 * @return as pf_prof_builder_section(). */
int pf_prof_builder_records_swap(pf_prof_builder *b, const struct pf_section *sec, uint8_t **buf, size_t *cap);

/* Samples of a RECORDS section are turned when the next RECORDS section (or
 * this call) comes, after that section's mappings are applied: call it once
 * at the end of the input. @return 0 or as pf_prof_builder_section(). */
int pf_prof_builder_finish(pf_prof_builder *b);

const struct pf_prof_stats *pf_prof_builder_stats(const pf_prof_builder *b);
const struct pf_events *pf_prof_builder_events(const pf_prof_builder *b);
struct pf_maps *pf_prof_builder_maps(pf_prof_builder *b);
const char *pf_prof_builder_errmsg(const pf_prof_builder *b);
void pf_prof_builder_free(pf_prof_builder *b);

/* ------------------------------------------------------------------------ */
/* Folding                                                                   */
/* ------------------------------------------------------------------------ */

enum pf_fold_weight { PF_FOLD_SAMPLES = 0, PF_FOLD_PERIOD = 1 };

#define PF_FOLD_PID     0x01u /* root frame "comm-PID" */
#define PF_FOLD_TID     0x02u /* root frame "comm-PID/TID" */
#define PF_FOLD_NO_COMM 0x04u /* no root frame */
#define PF_FOLD_KERNEL  0x08u /* kernel frames get the suffix "_[k]" */
#define PF_FOLD_DSO     0x10u /* frames get " [libfoo.so]" (basename of the DSO) */
#define PF_FOLD_ADDRS   0x20u /* unresolved frames "[libfoo.so+0x1234]", not "[libfoo.so]" */

struct pf_fold_opts {
	size_t sz;               /* sizeof(struct pf_fold_opts) */
	int weight;              /* enum pf_fold_weight: count samples, or sum periods (events) */
	unsigned flags;          /* PF_FOLD_* */
	const char *event;       /* event name to keep; NULL = the first event's name */
	const char *comm;        /* keep only threads with this name; NULL = all */
	const uint32_t *pids;    /* keep only these pids; NULL = all */
	size_t n_pids;
	int use_time;            /* keep only samples in [time_start_ns, time_end_ns) */
	uint64_t time_start_ns;  /* ns since the first sample of the file */
	uint64_t time_end_ns;
};
#define PF_FOLD_OPTS_INIT { sizeof(struct pf_fold_opts), 0, 0, NULL, NULL, NULL, 0, 0, 0, 0 }

typedef struct pf_fold pf_fold;

/* Reads `path` ("-" = stdin) to the end and folds it: the resolved profile
 * when the file has one (a SYMINFO section before its first RECORDS), else the
 * raw records with frames as DSO + offset. Damage does not stop the fold:
 * damaged sections, samples that refer to tables no earlier section defines,
 * and anything after the END section (another file appended) are left out,
 * each problem told once by pf_fold_damage(); every intact sample is folded.
 * A resolved profile that lacks samples (no closing SYMINFO, or fewer
 * samples than it says: pfsym's output cut short, a SAMPLES section damaged)
 * is completed from the raw records: the raw sections are read a second
 * time (a regular file from its start; a pipe's raw sections, kept as stored
 * in a memory file of at most 64 MiB while read) and every raw sample that
 * lies outside the runs the intact SAMPLES sections hold is folded with
 * frames as DSO + offset, with a warning; samples that cannot be placed are
 * damage, never counted twice.
 * Memory grows with unique stacks, not samples (save that pipe's spool).
 * @return 0 and *out set; or a negative errno with *out set (when not
 * -ENOMEM) so that pf_fold_errmsg() can be read; pf_fold_close() it. */
int pf_fold_open(pf_fold **out, const char *path, const struct pf_fold_opts *o);

/* Number of folded lines (distinct stacks, sorted by their text). */
size_t pf_fold_count(const pf_fold *f);
/* Line i: the stack text (NUL-terminated, no count, owned by f) and its weight. */
const char *pf_fold_line(const pf_fold *f, size_t i, uint64_t *weight);
/* Writes every line as "STACK WEIGHT\n" to `fd`. @return 0 or a write(2) error. */
int pf_fold_write(const pf_fold *f, int fd);

/* Samples kept whose stack starts at a "[truncated]" frame
 * (PF_FRAME_TRUNCATED: a depth limit cut their call chain). */
uint64_t pf_fold_truncated(const pf_fold *f);

/* Totals: weight of all kept samples, samples kept, samples lost (as counted
 * in the "[lost]" line, which is included in the lines). Weights, their sums
 * and the lost count stop at 2^63-1 (with a warning), the largest count that
 * readers of folded stacks take; a LOST entry of more is damage. With
 * PF_FOLD_PERIOD the [lost] line weighs the lost count times the mean period
 * of the kept samples, and is left out (with a warning) when none is kept. */
uint64_t pf_fold_total(const pf_fold *f);
uint64_t pf_fold_samples(const pf_fold *f);
uint64_t pf_fold_lost(const pf_fold *f);

/* Samples of the folded event (and --time range) before the process filters
 * (opts comm and pids): what lost samples, which carry no process, are a
 * fraction of. Equals pf_fold_samples() without those filters. */
uint64_t pf_fold_samples_all(const pf_fold *f);

/* Mean period of the kept samples (sum of their periods / their number), in
 * the unit that pf_fold_unit() names; 0 when no sample is kept. A sample
 * recorded without PERF_SAMPLE_PERIOD counts as period 1. For cpu-clock and
 * task-clock sampled at -F HZ the period is fixed (1e9/HZ ns, the kernel
 * turns the frequency into a fixed hrtimer period), so the mean is exact. */
double pf_fold_mean_period(const pf_fold *f);

/* The unit of the folded event's period: "ns" for the software clock events
 * (PERF_TYPE_SOFTWARE with PERF_COUNT_SW_CPU_CLOCK or _TASK_CLOCK), "events"
 * for everything else (counters, tracepoints, or a file without an EVENT
 * section). A static string. */
const char *pf_fold_unit(const pf_fold *f);

/* Warnings met while reading (damaged sections, lost samples, other events
 * present): lines separated by '\n', "" if none. Owned by f. */
const char *pf_fold_warnings(const pf_fold *f);
/* What of the input was damaged and left out (see pf_fold_open()): one line
 * per problem, each "FILE: ...", separated by '\n'; "" if the input was
 * intact. A tool prints these as errors and exits 1. Owned by f. */
const char *pf_fold_damage(const pf_fold *f);
const char *pf_fold_errmsg(const pf_fold *f);

/* Top functions. self: weight of samples whose leaf frame has this name;
 * total: weight of samples with the name anywhere in the stack (counted once
 * per sample). Names as shown in the folded lines (without the root comm).
 * Fills up to `n` entries sorted by decreasing weight (ties by name).
 * @return the number filled. Pointers are owned by f. */
struct pf_fold_top { const char *name; uint64_t weight; };
size_t pf_fold_top_self(pf_fold *f, struct pf_fold_top *out, size_t n);
size_t pf_fold_top_total(pf_fold *f, struct pf_fold_top *out, size_t n);

void pf_fold_close(pf_fold *f);

#ifdef __cplusplus
}
#endif
#endif /* PF_PROFILE_H */
