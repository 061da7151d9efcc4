/*
 * internal/comms.h - libpfile internal: the structure behind struct
 * pf_comms, the name of every thread over time (build.h has its functions
 * and rules). Not installed.
 */
#ifndef PF_INTERNAL_COMMS_H
#define PF_INTERNAL_COMMS_H

#include <stdint.h>
#include "build.h"

struct pf_comm_ev {
	uint64_t time;       /* ns, perf clock; 0 = before the recording */
	uint32_t comm;       /* string id, or PF_COMMS_NONE: inherited */
	uint32_t parent;     /* inherited: the parent's tid at `time` */
	uint32_t seq;        /* insertion order: among equal times, the later wins */
};

struct pf_comm_thread {
	uint32_t key;        /* tid + 1; 0 = empty slot */
	uint32_t n, cap;
	struct pf_comm_ev *v; /* sorted by (time, direct over inherited, seq) */
};

struct pf_comms {
	struct pf_comm_thread *t; /* open addressing by tid */
	uint32_t n, cap;
	uint32_t seq;
	uint32_t gen;        /* changes with every event added */
	/* the last answer: valid for memo_tid while gen is memo_gen and the
	 * time is in [memo_lo, memo_hi) */
	uint32_t memo_tid, memo_gen, memo_comm;
	uint64_t memo_lo, memo_hi;
};

/* A struct pf_comms inside another structure: zeroed, and its contents
 * freed. */
void pfi_comms_init(struct pf_comms *c);
void pfi_comms_free(struct pf_comms *c);

#endif
