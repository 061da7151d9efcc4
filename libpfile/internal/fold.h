/*
 * internal/fold.h - the folding engine's state, shared by fold.c (folding,
 * display names, lines, top-N) and fold_read.c (reading the input, the
 * spool of a pipe, completing a cut resolved profile from the raw
 * records). Private to libpfile.
 */
#ifndef PFILE_INTERNAL_FOLD_H
#define PFILE_INTERNAL_FOLD_H
#include <stdint.h>
#include <regex.h>
#include <sys/types.h>

#include "advanced.h"
#include "build.h"
#include "fold.h"
#include "internal/prof.h"

/* Weights and their sums stop at 2^63-1, the largest count that readers of
 * folded stacks (pfflame, pfdiff, flamegraph.pl's Perl) take. */
#define W_MAX ((uint64_t)INT64_MAX)

struct fold_ent {
	uint32_t node, comm, pid, tid; /* node: display node (stack_dnode()) */
	uint32_t cpu, event;           /* 0 unless PF_FOLD_CPU / PF_FOLD_ALL_EVENTS */
	uint64_t w;
	uint32_t used;
};

struct dnode {
	uint32_t disp, parent; /* display string id; caller's node or NONE */
	uint32_t kanon;        /* a kernel frame without a name */
	uint32_t trunc;        /* under a "[truncated]" root (a cut chain) */
	uint32_t dso;          /* display string id of the frame's DSO name, or NONE */
	uint8_t leaf;          /* as a leaf, for the dso/sym filters: 0 unknown, 1 keep, 2 drop */
};

struct line {
	size_t off;
	uint64_t w;
};

struct pf_fold {
	struct pf_fold_opts o;
	struct pf_prof prof;
	int mode; /* 0 undecided, 1 resolved, -1 raw */
	pf_prof_builder *b;
	struct pf_events evs;      /* resolved mode */
	const struct pf_events *ev_src;
	uint8_t ev_keep[65536 / 8];
	uint8_t ev_known[65536 / 8];
	uint8_t ev_grp[65536 / 8];  /* known events that read a group (pf_event_reads_group) */
	uint64_t group_kept;        /* kept samples of such events: their periods hold the lost ones' */
	int have_t0;
	uint64_t t0;
	uint64_t *run_starts;      /* RUN sections read so far: start of run k at [k-1] */
	uint32_t n_rec_runs, cap_rec_runs; /* (runs of the command, pfrec --repeat) */
	struct fold_ent *ent;
	uint32_t n_ent, cap_ent;
	/* the entry a (stack, comm, pid, tid) went to, by stack id: most
	 * samples repeat a recent one (cleared when ent grows) */
	struct fold_memo { uint32_t stack, comm, pid, tid, cpu, event, k; } memo[256];
	regex_t sym_re;            /* opts.sym, compiled */
	int have_sym_re;
	uint8_t *comm_keep;        /* per comm string id: 0 unknown, 1 keep, 2 drop */
	uint32_t comm_keep_cap;
	uint64_t total, samples, lost, lost_period_samples;
	uint64_t seen;             /* samples met (not LOST entries), before any selection */
	uint64_t read_all;         /* samples read from the file, every run (for the note) */
	int in_complete;           /* an intact END was read */
	uint64_t in_claimed;       /* END's samples, UINT64_MAX: none read */
	char note[600];            /* pf_fold_input_note() */
	double period_sum;         /* of kept samples, for the mean period */
	uint64_t period_n;
	uint64_t samples_all;      /* before the comm and pid filters */
	int saturated;             /* a weight reached W_MAX */
	int any_trunc;             /* a "[truncated]" root display node exists */
	uint64_t truncated;        /* kept samples under it */
	const char *path;          /* the input's name, for messages */
	/* output */
	struct pf_prof disp;       /* display names */
	uint32_t *frame_disp;      /* frame id -> disp string id */
	uint32_t frame_disp_cap;
	uint32_t *stack_dn;        /* stack id -> display node, NONE: not yet */
	uint32_t stack_dn_cap;
	struct dnode *dn;          /* display nodes */
	uint32_t n_dn, cap_dn;
	uint32_t *dn_hash;         /* (disp, parent, kanon) -> node + 1 */
	uint32_t dn_hash_cap;
	uint32_t *dn_path;         /* stack_dnode() scratch */
	size_t dn_path_cap;
	struct pf_buf text;
	struct line *lines;
	size_t n_lines;
	uint64_t *line_w;          /* PF_FOLD_BY_LINE: weight per leaf frame id (fold_lines.c) */
	uint32_t line_w_cap;
	uint64_t *agg;             /* top-N scratch, per disp id */
	uint32_t *gen;
	struct pf_buf warn;
	struct pf_buf damage;      /* error lines: what of the input was damaged */
	uint64_t bad_refs;         /* samples whose stack or comm id is never defined */
	uint64_t late_refs;        /* of the deferred, those folded at the end */
	struct pf_buf deferred;    /* SAMPLES entries whose ids were not defined yet */
	struct pf_buf timed;       /* --time: the samples, folded once t0 is known */
	int replaying;             /* folding the deferred (1) or timed (2) samples */
	/* What the resolved profile covers, for folding what it lacks from the
	 * raw records (fold_fill()): pfsym writes one SAMPLES entry per sample
	 * or LOST record in the order of the raw records, so each intact
	 * SAMPLES section covers one run of them, from its first entry to its
	 * last. */
	struct fold_run *runs;
	size_t n_runs;
	uint32_t cap_runs;
	uint64_t res_samples, res_lost; /* entries read from intact SAMPLES sections */
	int raw_records;           /* a RECORDS section was read (whatever the mode) */
	int res_closed;            /* pfsym's closing SYMINFO was read ... */
	uint64_t closed_samples, closed_lost; /* ... and says this many */
	/* the input read again: a regular file is, from in_off0; a pipe's raw
	 * sections are kept (stored, as read) in a spool file of at most
	 * FOLD_SPOOL_MAX bytes */
	int in_fd, own_fd, seekable;
	off_t in_off0;
	int spool_fd;              /* -1: none */
	pf_writer *spool;
	uint64_t spool_bytes;
	int spool_state;           /* 0 none yet, 1 spooling, -1 given up (why: spool_why) */
	const char *spool_why;
	uint64_t *spool_idx;       /* per spooled section: its index and offset in the input */
	size_t n_spool_idx, cap_spool_idx;
	/* fold_fill()'s walk over the raw samples */
	size_t fill_run;           /* the next run to meet */
	uint64_t fill_left;        /* entries left in the run being passed over */
	int fill_stopped;          /* the raw records stopped lining up */
	struct pf_buf fill_pending; /* raw entries between two runs, held until the next run shows */
	uint64_t filled, filled_lost, unplaced;
	char errmsg[512];
};

/* One SAMPLES section's worth of the raw samples: its first and last entry
 * and how many entries it holds. */
struct fold_run {
	struct pf_prof_sample first, last;
	uint64_t n;
};

/* One line on f->warn / f->damage (printf format). */
void pfi_fold_warnf(pf_fold *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pfi_fold_damagef(pf_fold *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Folds one sample or LOST entry (the selection applied). @return 0 or -ENOMEM. */
int pfi_fold_sample(void *ctx, const struct pf_prof_sample *s);
/* Folds every entry of a SAMPLES payload. @return 0, -EBADMSG, -ENOMEM. */
int pfi_fold_samples(pf_fold *f, const uint8_t *data, size_t size);
/* The sorted lines from the folded entries. @return 0 or -ENOMEM. */
int pfi_fold_build_lines(pf_fold *f);
/* Reads and folds `path` ("-" = stdin) to its end (fold_read.c). */
int pfi_fold_read(pf_fold *f, const char *path);
/* Ends the spool of a pipe's raw sections: state 0 (done) or -1 (given up, why). */
void pfi_fold_spool_drop(pf_fold *f, int state, const char *why);

/* fold_lines.c: PF_FOLD_BY_LINE's sum of w for the leaf frame of stack
 * node `stack` (NONE: nothing). @return 0 or -ENOMEM. */
int pfi_fold_line_add(pf_fold *f, uint32_t stack, uint64_t w);

#endif /* PFILE_INTERNAL_FOLD_H */
