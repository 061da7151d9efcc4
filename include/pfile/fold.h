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
#endif /* PFILE_FOLD_H */
