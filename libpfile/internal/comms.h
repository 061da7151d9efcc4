/*
 * comms.h - libpfile internal: the name (comm) of every thread over time.
 *
 * Not installed. A thread's name changes at PERF_RECORD_COMM (exec, or
 * prctl(PR_SET_NAME)) and starts at PERF_RECORD_FORK as its parent's name at
 * that moment. Records of several CPUs' rings reach a reader out of time
 * order (a child's COMM may come before its FORK), so every change is kept
 * with its time and a lookup asks for the name at the sample's time: the
 * answer depends on the set of records applied, never on their order.
 */
#ifndef PF_INTERNAL_COMMS_H
#define PF_INTERNAL_COMMS_H

#include <stdint.h>

#define PF_COMMS_NONE UINT32_MAX

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

void pf_comms_init(struct pf_comms *c);
void pf_comms_free(struct pf_comms *c);

/* Thread `tid` is named `comm` (a string id) from `time_ns` on.
 * @return 0 or -ENOMEM. */
int pf_comms_set(struct pf_comms *c, uint32_t tid, uint64_t time_ns, uint32_t comm);

/* Thread `tid` was created by `ptid` at `time_ns`: from then on (until its
 * own next COMM) it has the name ptid had at that time. @return 0 or -ENOMEM. */
int pf_comms_fork(struct pf_comms *c, uint32_t tid, uint32_t ptid, uint64_t time_ns);

/* The name of `tid` at `time_ns`: the latest change at or before it, else
 * the earliest known; PF_COMMS_NONE when nothing is known of tid. */
uint32_t pf_comms_get(struct pf_comms *c, uint32_t tid, uint64_t time_ns);

#endif
