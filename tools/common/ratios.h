/*
 * tools/common/ratios.h - the ratios of two counted events that perf stat
 * shows (instructions per cycle, cache and branch miss rates), for pfrec's
 * summary and pfdump --stats (not installed).
 */
#ifndef PF_TOOLS_RATIOS_H
#define PF_TOOLS_RATIOS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* What an event counts, for the ratios: perf's generic hardware events
 * (PERF_TYPE_HARDWARE, the config's low 32 bits; a hybrid PMU's type sits
 * above) or a PMU's sysfs event of the same name, given as "PMU/NAME/" or
 * "PMU/NAME/MODIFIERS" (NAME cycles, cpu-cycles, instructions,
 * cache-references, cache-misses, branches, branch-instructions,
 * branch-misses). */
enum pf_ratio_kind {
	PF_RK_NONE,
	PF_RK_CYCLES,
	PF_RK_INSNS,
	PF_RK_CACHE_REFS,
	PF_RK_CACHE_MISSES,
	PF_RK_BRANCHES,
	PF_RK_BRANCH_MISSES,
};

/* The kind of the event of attr `a` (NULL: none) typed as `text` (the
 * event's own text, "" if unknown). */
enum pf_ratio_kind pf_ratio_kind(const struct perf_event_attr *a, const char *text);

/* Two events count at the same places: the same privilege filter. (The
 * caller also compares their PMUs.) */
int pf_ratio_same_filter(const struct perf_event_attr *a, const struct perf_event_attr *b);

struct pf_ratio_def {
	const char *name;         /* "insn_per_cycle", "cache_miss_rate", "branch_miss_rate" */
	const char *what;         /* "instructions per cycle", ... */
	enum pf_ratio_kind num, den;
	int rate;                 /* a share of the denominator: shown in percent too */
};
extern const struct pf_ratio_def pf_ratio_defs[];
extern const size_t pf_ratio_ndefs;

/* value x enabled / running when the event was multiplexed (running less
 * than enabled, not 0), else value. */
double pf_ratio_scaled(uint64_t value, uint64_t enabled_ns, uint64_t running_ns);

#endif
