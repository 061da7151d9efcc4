/*
 * tools/common/ratios.c - see ratios.h.
 */
#include <string.h>

#include "ratios.h"

const struct pf_ratio_def pf_ratio_defs[] = {
	{"insn_per_cycle", "instructions per cycle", PF_RK_INSNS, PF_RK_CYCLES, 0},
	{"cache_miss_rate", "cache misses per cache reference", PF_RK_CACHE_MISSES, PF_RK_CACHE_REFS, 1},
	{"branch_miss_rate", "branch misses per branch", PF_RK_BRANCH_MISSES, PF_RK_BRANCHES, 1},
};
const size_t pf_ratio_ndefs = sizeof(pf_ratio_defs) / sizeof(pf_ratio_defs[0]);

static const char *const kind_names[][2] = {
	[PF_RK_CYCLES] = {"cycles", "cpu-cycles"},
	[PF_RK_INSNS] = {"instructions", NULL},
	[PF_RK_CACHE_REFS] = {"cache-references", NULL},
	[PF_RK_CACHE_MISSES] = {"cache-misses", NULL},
	[PF_RK_BRANCHES] = {"branches", "branch-instructions"},
	[PF_RK_BRANCH_MISSES] = {"branch-misses", NULL},
};

enum pf_ratio_kind pf_ratio_kind(const struct perf_event_attr *a, const char *text)
{
	if (!a)
		return PF_RK_NONE;
	if (a->type == PERF_TYPE_HARDWARE) {
		switch (a->config & 0xffffffffu) {
		case PERF_COUNT_HW_CPU_CYCLES: return PF_RK_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS: return PF_RK_INSNS;
		case PERF_COUNT_HW_CACHE_REFERENCES: return PF_RK_CACHE_REFS;
		case PERF_COUNT_HW_CACHE_MISSES: return PF_RK_CACHE_MISSES;
		case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return PF_RK_BRANCHES;
		case PERF_COUNT_HW_BRANCH_MISSES: return PF_RK_BRANCH_MISSES;
		default: return PF_RK_NONE;
		}
	}
	/* PMU/NAME/ or PMU/NAME/MODIFIERS */
	const char *s = text ? strchr(text, '/') : NULL, *e = s ? strchr(s + 1, '/') : NULL;
	if (!e || strchr(e + 1, '/'))
		return PF_RK_NONE;
	size_t n = (size_t)(e - s - 1);
	for (int k = PF_RK_CYCLES; k <= PF_RK_BRANCH_MISSES; k++)
		for (int i = 0; i < 2; i++)
			if (kind_names[k][i] && strlen(kind_names[k][i]) == n && !memcmp(s + 1, kind_names[k][i], n))
				return (enum pf_ratio_kind)k;
	return PF_RK_NONE;
}

int pf_ratio_same_filter(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	return a->exclude_user == b->exclude_user && a->exclude_kernel == b->exclude_kernel &&
	       a->exclude_hv == b->exclude_hv && a->exclude_idle == b->exclude_idle &&
	       a->exclude_host == b->exclude_host && a->exclude_guest == b->exclude_guest;
}

double pf_ratio_scaled(uint64_t value, uint64_t enabled_ns, uint64_t running_ns)
{
	if (running_ns && running_ns < enabled_ns)
		return (double)value * ((double)enabled_ns / (double)running_ns);
	return (double)value;
}
