/*
 * pftest-writer.h - the pieces of tests/c/pftest-writer shared by its files:
 *   emit.c       an emitter of perf records in either byte order, the three
 *                events, the records of `all`
 *   write.c      the writing modes (all, many, events-grow, deep) and syminfo
 *   verify.c     verify: every decoded value of a file from `all`
 *   patch.c      byte patching and layout, recode, rawcmp
 *   transform.c  the transform modes (tx-fuzz, tx-hostile)
 * The options are set by main() (../pftest-writer.c).
 */
#ifndef PFTEST_WRITER_H
#define PFTEST_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "advanced.h"
#include "build.h"
#include "fold.h"
#include "testutil.h"

#define T0 12345678901234ull /* ns: 12345.678901234 s */

/* options (main) */
extern int big_endian;
extern int no_end;
extern int level;
extern uint32_t frame_bytes;
extern uint64_t filler;
extern long long sec_off;
extern int transform; /* 1, or 2 with --next */
extern uint64_t flush_bytes;
extern const char *ksyms_damage; /* ksyms-damage HOW, for mode_recode */
extern int ksyms_late;           /* mode_recode: 1 KSYMS moved before END (ksyms-late), 2 dropped (ksyms-drop) */
extern int strip_inode;          /* strip-inode: mode_recode drops BUILDID entries flagged INODE */

/* emit.c: records in the byte order be */
struct em {
	struct pf_buf b;
	int be;
	size_t rec_start;
};
void ebytes(struct em *e, const void *p, size_t n);
void eint(struct em *e, uint64_t v, int n);
#define e64(e, v) eint(e, (uint64_t)(v), 8)
#define e32(e, v) eint(e, (uint64_t)(v), 4)
#define e16(e, v) eint(e, (uint64_t)(v), 2)
void epad8(struct em *e);
void estr(struct em *e, const char *s);
void rec_begin(struct em *e, uint32_t type, uint16_t misc);
void rec_end(struct em *e);

#define ST_ALL                                                                                  \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |          \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |            \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |        \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |              \
	 PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |             \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |                     \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)

struct evdef {
	struct perf_event_attr attr;
	uint64_t ids[2];
	uint32_t n_ids;
	const char *name;
};
extern struct evdef evd[3];
void setup_events(void);
void event_payload(struct pf_buf *out, const struct evdef *d, int be);
void trailer(struct em *e, int k, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu);

extern const uint64_t chain0[4];
void sample_id(struct em *e, uint64_t id, uint64_t time, uint32_t pid, uint32_t tid, uint32_t cpu,
	       uint64_t ip, const uint64_t *chain, unsigned n);
void sample0(struct em *e, uint64_t time, uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t ip,
	     const uint64_t *chain, unsigned n);
void sample_everything(struct em *e, uint64_t time);
void sample_plain(struct em *e, uint64_t time);
void all_records(struct em *e);

/* write.c */
void writer_opts(struct pf_writer_opts *o);
pf_writer *new_writer(int fd);
void sec(pf_writer *w, uint16_t type, const struct pf_buf *b);
void write_head(pf_writer *w);
void write_end(pf_writer *w, uint64_t samples, uint64_t records);
void finish(pf_writer *w, int fd);
void put_records(pf_writer *w, struct em *e);
int mode_all(const char *out, int bad);
int mode_many(uint64_t n, const char *out);
int mode_events_grow(const char *kind, unsigned n, const char *out);
int mode_deep(unsigned n, unsigned m, unsigned limit, const char *out);
int mode_marker_word(const char *out);
int mode_syminfo(const char *path);

/* verify.c */
int mode_verify(const char *path);

/* patch.c */
int mode_flip(const char *path, long long off, int bitno);
int mode_setu32(const char *path, long long off, uint32_t v);
int mode_layout(const char *path);
pf_reader *open_in(const char *path);
int mode_recode(const char *in, const char *out);
int mode_rawcmp(const char *a, const char *b);

/* transform.c */
int mode_tx_fuzz(uint64_t iters);
int mode_tx_hostile(const char *out);

#endif
