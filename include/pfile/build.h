/*
 * pfile/build.h - libpfile: raw records -> samples over the resolved
 * profile's tables (the builder), and the name of every thread over time.
 *
 * The builder reads a raw recording's sections (EVENT, MAPS, THREADS,
 * BUILDID, RECORDS, META) and turns every sample into a pf_prof_sample over
 * a struct pf_prof: address -> mapping through maps.h, call-chain context
 * markers, return address - 1, one frame per unique (DSO, file offset) with
 * an optional symbolizer callback (pfsym's reads ELF files; pffold passes
 * none: frames stay module + offset) and an optional unwinder (pfsym's, for
 * stack copies).
 *
 * Errors are negative errno values as in pfile.h.
 */
#ifndef PFILE_BUILD_H
#define PFILE_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include "pfile.h"
#include "records.h"
#include "maps.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The symbolizer callback. Called once per unique (DSO, file offset) of a user
 * address that lies in a mapping. `f` comes filled with dso (string id of the
 * recorded path), file_off, flags = PF_FRAME_UNRESOLVED and name = NONE; the
 * callback sets name (pf_prof_str on `p`), addr, flags, src_file, line as it
 * can. @return 0, or a negative errno that stops the build. */
typedef int (*pf_prof_resolve_fn)(void *ctx, struct pf_prof *p, struct pf_dso *dso,
				  struct pf_prof_frame *f);

/* The kernel symbolizer callback (since 0.2). Called once per unique kernel
 * address. `f` comes filled with file_off = the address, flags =
 * PF_FRAME_KERNEL and name = dso = NONE; the callback sets name (pf_prof_str
 * on `p`), addr, sym_off and their flags as it can. @return 0, or a
 * negative errno that stops the build. */
typedef int (*pf_prof_kresolve_fn)(void *ctx, struct pf_prof *p, struct pf_prof_frame *f);

/* A PERF_RECORD_KSYMBOL (since 0.2): kernel text registered (flags bit 0
 * clear) or unregistered (bit 0 set) while recording: a BPF program
 * (ksym_type 1) or out-of-line code such as a BPF trampoline (2). `addr`
 * and `len` (bytes) bound it; `name` (name_len bytes, no NUL) as the kernel
 * names it. Called when the RECORDS section that holds it is fed, before
 * the samples of the section before it are turned. @return 0, or a
 * negative errno that stops the build. */
typedef int (*pf_prof_ksymbol_fn)(void *ctx, uint64_t addr, uint32_t len, uint16_t ksym_type, uint16_t flags,
				  const char *name, size_t name_len);

/* Called for every sample (and LOST entry) in record order. A sample's
 * period is the record's PERF_SAMPLE_PERIOD, else the event's fixed
 * sample_period, else 1. A SAMPLE record of a leader-sampled group (perf's
 * {A,B}:S: PERF_SAMPLE_READ with PERF_FORMAT_GROUP and PERF_FORMAT_ID) is
 * one sample per member instead, in the group's order, each of its
 * member's event with what the member counted since the previous value of
 * that counter (per id; per thread too for an inherited event) as its
 * period; a member that counted nothing has none (as perf's session,
 * tools/perf/util/session.c). @return 0 or a negative errno that stops the
 * build. */
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

/* The symbolizer callback with inline frames (profile format 1.2): called
 * instead of pf_prof_resolve_fn, once per unique (DSO, file offset) of a
 * user address in a mapping. f[0] comes filled as for pf_prof_resolve_fn
 * and is the outer (real, not inlined) function's frame; the callback fills
 * it as pf_prof_resolve_fn does, and f[1..n) with the functions inlined at
 * that address, outermost first: each with PF_FRAME_INLINE, its depth
 * (1..) in PF_FRAME_DEPTH bits, dso/file_off/addr of f[0], its name,
 * src_file and line. Every frame's line is where the next deeper frame was
 * inlined (its call site), the deepest frame's the address's own line.
 * `max` (>= 1) is the room in f. @return n (>= 1: f[0] alone when nothing is
 * inlined), or a negative errno that stops the build. */
typedef int (*pf_prof_resolve_chain_fn)(void *ctx, struct pf_prof *p, struct pf_dso *dso,
					struct pf_prof_frame *f, uint32_t max);
/* Optional resolver of addresses in anonymous memory (JIT code named by
 * /tmp/perf-PID.map: pfsym passes one over the PERFMAP sections). Called once
 * per unique (pid, address) of a user address that lies in a mapping of kind
 * PF_DSO_ANON or PF_DSO_PSEUDO (dso: that DSO), or in no mapping at all (dso
 * NULL), before `resolve`. `f` comes filled as for pf_prof_resolve_fn with
 * file_off = the address (dso: NONE when no mapping). @return 1 when it named
 * the frame (f->name, f->dso set; the builder keeps f as is), 0 when not (the
 * frame is made as without it), or a negative errno that stops the build. */
typedef int (*pf_prof_resolve_anon_fn)(void *ctx, struct pf_prof *p, uint32_t pid, uint64_t addr,
				       struct pf_dso *dso, struct pf_prof_frame *f);

/* The kernel symbolizer callback with inline frames (since 0.3; pfsym
 * --vmlinux): called instead of pf_prof_kresolve_fn, once per unique kernel
 * address. f[0] comes filled as for pf_prof_kresolve_fn and is the outer
 * function's frame; f[1..n) are the functions inlined there, filled as
 * pf_prof_resolve_chain_fn fills them (PF_FRAME_INLINE, depth, name,
 * src_file, line; PF_FRAME_KERNEL kept). `max` (>= 1) is the room in f.
 * @return n (>= 1), or a negative errno that stops the build. */
typedef int (*pf_prof_kresolve_chain_fn)(void *ctx, struct pf_prof *p, struct pf_prof_frame *f, uint32_t max);

struct pf_prof_builder_opts {
	size_t sz;                  /* sizeof(struct pf_prof_builder_opts) */
	pf_prof_resolve_fn resolve; /* NULL: frames stay DSO + offset */
	void *resolve_ctx;
	pf_prof_sample_fn on_sample; /* required */
	void *sample_ctx;
	/* since 0.1 (absent when sz is smaller): */
	pf_prof_unwind_fn unwind;   /* NULL: user frames from the callchain */
	void *unwind_ctx;
	/* since 0.2 (absent when sz is smaller): */
	pf_prof_kresolve_fn resolve_kernel; /* NULL: kernel frames stay "[kernel]" */
	void *resolve_kernel_ctx;
	pf_prof_ksymbol_fn ksymbol;         /* NULL: KSYMBOL records ignored */
	void *ksymbol_ctx;
	pf_prof_resolve_chain_fn resolve_chain; /* non-NULL: used instead of
				     * `resolve`; each address becomes its
				     * frame plus one stack node per inlined
				     * frame, deepest at the leaf side */
	void *resolve_chain_ctx;
	pf_prof_resolve_anon_fn resolve_anon; /* NULL: anonymous memory stays "[anon]"-like */
	void *resolve_anon_ctx;
	/* since 0.3 (absent when sz is smaller): */
	pf_prof_kresolve_chain_fn resolve_kernel_chain; /* non-NULL: used instead
				     * of resolve_kernel; inlined functions
				     * become stack nodes as for user frames */
	void *resolve_kernel_chain_ctx;
};

/* Counters, for pfsym's summary. */
struct pf_prof_stats {
	uint64_t samples;          /* samples made of SAMPLE records (a
				    * leader-sampled group's record: one per
				    * member that counted) */
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
/* Thread names over time                                                    */
/* ------------------------------------------------------------------------ */

/* The name (comm) of every thread over time, as the builder names samples:
 * a thread's name changes at PERF_RECORD_COMM (exec, or prctl(PR_SET_NAME))
 * and starts at PERF_RECORD_FORK as its parent's name at that moment.
 * Records of several CPUs' rings reach a reader out of time order (a child's
 * COMM may come before its FORK), so every change is kept with its time and a
 * lookup asks for the name at the sample's time: the answer depends on the
 * set of records applied, never on their order. Names are the caller's ids
 * (e.g. pf_prof_str() ids). Opaque. */
struct pf_comms;

#define PF_COMMS_NONE UINT32_MAX

/* The name of tid 0, the idle task (the kernel's swapper/N), which no COMM
 * record names: the one perf gives it (perf script, perf report --sort comm).
 * The sample builder names a sample of tid 0 so when nothing else does. */
#define PF_COMM_IDLE "swapper"

/* @return 0 and *out set, or -ENOMEM. */
int pf_comms_new(struct pf_comms **out);
/* NULL is a no-op. */
void pf_comms_delete(struct pf_comms *c);

/* Thread `tid` is named `comm` (an id) from `time_ns` on.
 * @return 0 or -ENOMEM. */
int pf_comms_set(struct pf_comms *c, uint32_t tid, uint64_t time_ns, uint32_t comm);

/* Thread `tid` was created by `ptid` at `time_ns`: from then on (until its
 * own next COMM) it has the name ptid had at that time. @return 0 or -ENOMEM. */
int pf_comms_fork(struct pf_comms *c, uint32_t tid, uint32_t ptid, uint64_t time_ns);

/* The name of `tid` at `time_ns`: the latest change at or before it, else
 * the earliest known; PF_COMMS_NONE when nothing is known of tid. */
uint32_t pf_comms_get(struct pf_comms *c, uint32_t tid, uint64_t time_ns);

#ifdef __cplusplus
}
#endif
#endif /* PFILE_BUILD_H */
