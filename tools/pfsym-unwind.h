/*
 * pfsym-unwind.h - pfsym internals: DWARF unwinding of sampled user stacks
 * (pfsym/unwind.c), for recordings made with `pfrec --call-graph dwarf`.
 *
 * Each sample that carries PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
 * is unwound with libdwfl: one Dwfl per process, modules reported from the
 * mapping timeline as the unwinder meets their addresses, registers from the
 * sample (perf's order mapped to DWARF numbering for the recorded machine),
 * memory from the stack copy, else from the mapped ELF files. Where CFI
 * unwinding stops early, a frame-pointer walk over the stack copy continues
 * when it finds a chain. Every sample's stop reason is counted.
 */
#ifndef PFSYM_UNWIND_H
#define PFSYM_UNWIND_H

#include <stdio.h>
#include "pfsym.h"

struct unwinder;

/* A new unwinder for a recording of machine `e_machine` (the file header's,
 * never the host's) that reads binaries through `sym` (not owned; must
 * outlive the unwinder). @return NULL when out of memory. */
struct unwinder *unw_new(struct symbolizer *sym, const struct pfsym_opts *o, uint16_t e_machine);
void unw_free(struct unwinder *u);

/* Reads the call-graph keys of a META payload: va_bits (user address bits on
 * aarch64; 48 when absent) and pac_enabled. */
void unw_meta(struct unwinder *u, const uint8_t *data, size_t size);

/* pf_prof_unwind_fn: ctx is the struct unwinder. */
int unw_unwind(void *ctx, struct pf_maps *maps, const struct pf_sample *s, uint64_t *addrs, uint32_t max);

/* Adds "unwind.*" counters to a SYMINFO payload. @return 0 or -ENOMEM. */
int unw_syminfo(const struct unwinder *u, struct pf_buf *b);

/* One summary line (nothing if no sample was unwound): samples unwound, how
 * many reached the outermost frame, and a count per stop reason. */
void unw_report(const struct unwinder *u, FILE *out, const char *prog);

#endif
