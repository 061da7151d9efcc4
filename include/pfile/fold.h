/*
 * pfile/fold.h - libpfile: the folding engine (pffold, pfdiff) and top-N.
 *
 * pf_fold reads a file (its resolved profile if it has one, else the raw
 * records through the builder) and returns sorted folded stacks
 * `comm;root;...;leaf COUNT` and the top functions.
 *
 * Errors are negative errno values as in pfile.h; messages come from
 * pf_fold_errmsg().
 */
#ifndef PFILE_FOLD_H
#define PFILE_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include "pfile.h"

#ifdef __cplusplus
extern "C" {
#endif


enum pf_fold_weight { PF_FOLD_SAMPLES = 0, PF_FOLD_PERIOD = 1 };

#define PF_FOLD_PID     0x01u /* root frame "comm-PID" */
#define PF_FOLD_TID     0x02u /* root frame "comm-PID/TID" */
#define PF_FOLD_NO_COMM 0x04u /* no root frame */
#define PF_FOLD_KERNEL  0x08u /* kernel frames get the suffix "_[k]" */
#define PF_FOLD_DSO     0x10u /* frames get " [libfoo.so]" (basename of the DSO) */
#define PF_FOLD_ADDRS   0x20u /* unresolved frames "[libfoo.so+0x1234]", not "[libfoo.so]" */
#define PF_FOLD_CPU     0x40u /* entries (pf_fold_entry_next()) keyed by CPU too; lines unchanged */
#define PF_FOLD_JIT     0x1000u /* JIT frames (named from /tmp/perf-PID.map: their
                                  module's base name is perf-PID.map) get "_[j]" */
#define PF_FOLD_ALL_EVENTS 0x80u /* fold the samples of every event (`event` ignored), entries
                                    keyed by event; lines sum them (mind the units with periods) */
/* Inline frames and lines (profile format 1.2, format/profile.md 3.3): by
 * default a function inlined at an address is a frame of its own under its
 * caller's frame, named as the function (no mark). */
#define PF_FOLD_NO_INLINE  0x100u /* inlined frames left out: their time is the outer
                                     (real) function's, as before format 1.2 */
#define PF_FOLD_INLINE_MARK 0x200u /* inlined frames get the suffix "_[i]" (flamegraph.pl
                                     colours such frames as inlined) */
#define PF_FOLD_LINES      0x400u /* frames with a known source line get ":LINE" after the
                                     name (before " [module]" and "_[i]"/"_[k]") */
#define PF_FOLD_SRCLINE    0x2000u /* frames with a known source line get " [FILE:LINE]"
                                     after the name (and ":LINE"), before " [module]" and
                                     "_[i]"/"_[k]": FILE as the resolved profile names it,
                                     with '[' and ']' escaped (\x5b, \x5d) like ';' */
#define PF_FOLD_BY_LINE    0x800u /* also sum the weight per source line of the leaf
                                     (innermost) frame, for pf_fold_top_lines() */

struct pf_fold_opts {
	size_t sz;               /* sizeof(struct pf_fold_opts) */
	int weight;              /* enum pf_fold_weight: count samples, or sum periods (events) */
	unsigned flags;          /* PF_FOLD_* */
	const char *event;       /* event name to keep; NULL = the first event's name */
	const char *comm;        /* keep only threads with this name; NULL = all */
	const uint32_t *pids;    /* keep only these pids; NULL = all */
	size_t n_pids;
	int use_time;            /* keep only samples in [time_start_ns, time_end_ns) */
	uint64_t time_start_ns;  /* ns since the earliest sample of the file (the
				  * samples are kept, 48 bytes each, till the end) */
	uint64_t time_end_ns;
	/* since 0.2 (a caller built with 0.1's smaller struct gets no filter): */
	const uint32_t *tids;    /* keep only these threads; NULL = all */
	size_t n_tids;
	const uint32_t *cpus;    /* keep only samples taken on these CPUs; NULL = all */
	size_t n_cpus;
	const char *dso;         /* keep only samples whose leaf frame is in this DSO (its
	                            file name without the directory, "[kernel]", "[vdso]") */
	const char *sym;         /* keep only samples whose leaf frame's name (as the folded
	                            line shows it) matches this POSIX extended regular
	                            expression (regcomp(3) REG_EXTENDED|REG_NOSUB) */
	/* since format 1.3 (a caller built with the smaller struct gets every run): */
	uint32_t run;            /* keep only the samples (and lost counts) of this run,
	                            1-based, of a recording of several runs (pfrec
	                            --repeat; format/pfile.md 4.10: a sample's run is
	                            found from its time); 0 = the sum of all runs. A
	                            file without RUN sections is one run: run 1 is all
	                            of it; a run the file does not have: -ENOENT */
};
#define PF_FOLD_OPTS_INIT { sizeof(struct pf_fold_opts), 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, NULL, 0 }

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

/* The number of runs of the file (its RUN sections, format/pfile.md 4.10): 1
 * for a recording of one run (no RUN section). */
uint32_t pf_fold_runs(const pf_fold *f);

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

/* 1 if kept samples read a group (pf_event_reads_group(), records.h: perf's
 * leader sampling): their periods count from the counter's previous sample,
 * so they hold what the lost samples counted, and with PF_FOLD_PERIOD there
 * is no [lost] line (a warning says why); a caller that scales a total up
 * for the lost samples must not. 0 otherwise. Since 0.2. */
int pf_fold_periods_hold_lost(const pf_fold *f);

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

/* The name of the folded event (opts event's, else the file's first
 * event's), or NULL for a file without an EVENT section. Owned by f, valid
 * until pf_fold_close(). Since 0.2. */
const char *pf_fold_event_name(const pf_fold *f);

/* The position of the event named `name` among the file's EVENT sections
 * read so far (0 for the first, in file order: the order perf report's
 * tables follow), or -1 when no EVENT section has that name. Since 0.5. */
int pf_fold_event_index(const pf_fold *f, const char *name);

/* Warnings met while reading (damaged sections, lost samples, other events
 * present): lines separated by '\n', "" if none. Owned by f. */
const char *pf_fold_warnings(const pf_fold *f);
/* What of the input was damaged and left out (see pf_fold_open()): one line
 * per problem, each "FILE: ...", separated by '\n'; "" if the input was
 * intact. A tool prints these as errors and exits 1. Owned by f. */
const char *pf_fold_damage(const pf_fold *f);
const char *pf_fold_errmsg(const pf_fold *f);

/* How much of the input was used, when it was not whole (format/pfile.md
 * 5.4): one line as pf_input_note() writes it (pfile.h), e.g. "run.pf:
 * incomplete (no END section: ...): 812 samples used", counting every
 * sample read from the file (all events and runs, before the selection);
 * "" when the input was complete, intact, and every sample END claims was
 * read. A tool prints it once, on standard error (pffold also carries it
 * into its folded output, see pffold(1)). Owned by f. Since 0.2. */
const char *pf_fold_input_note(const pf_fold *f);

/* Top functions. self: weight of samples whose leaf frame has this name;
 * total: weight of samples with the name anywhere in the stack (counted once
 * per sample). Names as shown in the folded lines (without the root comm).
 * Fills up to `n` entries sorted by decreasing weight (ties by name).
 * @return the number filled. Pointers are owned by f. */
struct pf_fold_top { const char *name; uint64_t weight; };

/* Top source lines (with PF_FOLD_BY_LINE, else 0 entries): the self weight of
 * each source line, i.e. of the samples whose innermost frame (an inlined
 * function's, when one is inlined at the leaf address) was at that line.
 * Entries with the same file, line and function are one. `file` is the
 * source file's path as the DWARF names it (NULL when the frame has no
 * line: then `line` is 0 and the entry holds the function's samples without
 * a line), `func` the function's name without suffixes, "[kernel]" for a
 * kernel frame without a name, NULL for another frame without one. Fills up to `n` entries sorted by decreasing weight (ties
 * by file, line, function). @return the number filled; pointers are owned
 * by f. Source: the resolved profile's frame fields src_file and line. */
struct pf_fold_top_line { const char *file; uint32_t line; const char *func; uint64_t weight; };
size_t pf_fold_top_lines(pf_fold *f, struct pf_fold_top_line *out, size_t n);
size_t pf_fold_top_self(pf_fold *f, struct pf_fold_top *out, size_t n);
size_t pf_fold_top_total(pf_fold *f, struct pf_fold_top *out, size_t n);

/* The folded entries, one per distinct (stack, comm, pid, tid, cpu, event)
 * after the selection; pid and tid are 0 unless PF_FOLD_PID/PF_FOLD_TID,
 * cpu unless PF_FOLD_CPU, event is the folded event unless
 * PF_FOLD_ALL_EVENTS. For views that the folded lines cannot give (perf
 * report's sort keys, callers and callees). Strings are owned by f. */
struct pf_fold_entry {
	uint32_t node;     /* leaf display node (pf_fold_node()), or PF_PROF_NONE: no frames */
	uint32_t pid, tid, cpu;
	const char *comm;  /* "" when unknown or PF_FOLD_NO_COMM */
	const char *event; /* the event's name */
	uint64_t weight;   /* samples, or the sum of periods (opts.weight) */
};
/* Iterates the entries: *pos starts at 0. @return 1 and *e filled, or 0 at
 * the end. The order is unspecified but the same for the same input. */
int pf_fold_entry_next(const pf_fold *f, size_t *pos, struct pf_fold_entry *e);

/* A display node: one frame of a folded line under its caller's node. */
struct pf_fold_node {
	uint32_t parent;  /* the caller's node, or PF_PROF_NONE at the root */
	const char *name; /* as the folded line shows it (escaped), owned by f */
	const char *dso;  /* the frame's DSO file name without directory, "[kernel]"
	                     for a kernel frame, "" when in no mapping */
};
/* @return 0 and *n filled, or -EINVAL for a node that does not exist. */
int pf_fold_node(const pf_fold *f, uint32_t node, struct pf_fold_node *n);

void pf_fold_close(pf_fold *f);


#ifdef __cplusplus
}
#endif
#endif /* PFILE_FOLD_H */
