/*
 * pfdump/counts.h - the COUNTS section (format/pfile.md 4.9) shown by
 * pfdump: each event's count, each thread's (version 2, pfrec
 * --per-thread) and the ratios of events that come in pairs
 * (pfdump-private).
 */
#ifndef PFDUMP_COUNTS_H
#define PFDUMP_COUNTS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* What pfdump knows of an EVENT, by index. */
struct pfd_evinfo {
	int present;
	const char *name;                  /* the EVENT's name */
	const struct perf_event_attr *attr; /* NULL when unknown */
	const char *spec;                  /* description keys (4.2.1), "" when absent */
	const char *pmu;
	double scale;                      /* 1 when absent */
	const char *unit;
};

/* Prints "count", "thread_count" and "ratio" objects for the COUNTS payload
 * kv (len bytes, key/value layout of 4.1). */
void pfd_counts_print(const uint8_t *kv, size_t len, const struct pfd_evinfo *ev, uint32_t nev);

#endif
