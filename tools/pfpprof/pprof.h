/*
 * pfpprof's internals: what is read from a symbolized .pf (read.c) and how it
 * becomes pprof's profile.proto (encode.c).
 */
#ifndef PFPPROF_H
#define PFPPROF_H

#include <stddef.h>
#include <stdint.h>
#include <pfile/profile.h>

#define PP_MAX_GROUPS 64 /* event names: two sample types each */
#define PP_MAX_INLINE 255 /* inline frames of one address (format/profile.md 3.3) */
#define PP_GZIP_LEVEL 6   /* zlib's default level, as pprof's own writer uses */

/* An event name (several EVENT sections, one per CPU, may share it). */
struct pp_group {
	char name[128];
	int clock;               /* cpu-clock or task-clock: periods are ns */
	uint64_t fixed_period;   /* attr.sample_period when not sampled by frequency */
	uint64_t freq_hz;        /* attr.sample_freq when sampled by frequency */
	uint64_t samples;        /* samples kept */
	uint64_t period_sum;     /* their periods, events (ns for clocks) */
	uint64_t lost;           /* samples lost (LOST entries of this event) */
	int reads_group;         /* pf_event_reads_group(): the periods hold the lost samples' */
};

/* One aggregated sample: samples of one event with the same stack, thread
 * name, pid and tid. */
struct pp_agg {
	uint32_t stack, comm, pid, tid; /* stack: leaf node or NONE; comm: string id or NONE */
	uint16_t group;
	uint16_t used;
	uint64_t count;          /* samples */
	uint64_t weight;         /* sum of their periods */
};

/* A mapped range of a file as a MMAP record or a MAPS snapshot gave it. */
struct pp_range {
	uint64_t start, end, pgoff;
};

/* What is known of one mapped file, by its path as recorded. */
struct pp_file {
	char *path;
	uint8_t build_id[64];
	uint8_t build_id_size;
	uint64_t map_time;       /* ns, perf clock: its first mapping record or
				  * maps snapshot; UINT64_MAX when none had a time */
	uint32_t n_ranges;
	size_t cap_ranges;
	struct pp_range *ranges; /* distinct file ranges, first address seen for each */
};

struct pp_input {
	const char *name;        /* as given ("-" for stdin) */
	struct pf_prof *prof;    /* the resolved profile's tables */
	struct pf_events *evs;
	uint16_t ev_group[8192]; /* EVENT index -> group (an EVENT per CPU and event) */
	struct pp_group groups[PP_MAX_GROUPS];
	uint32_t n_groups;
	struct pp_agg *agg;      /* open-addressing table, in insertion order via `order` */
	uint32_t *order;
	uint32_t n_agg, cap_agg;
	struct pp_file *files;
	uint32_t n_files;
	size_t cap_files;
	uint64_t first_time, last_time; /* ns, perf clock, of the samples */
	int have_time;
	uint64_t duration_ns;    /* END's, 0 if none */
	uint64_t end_lost;       /* END's lost_samples, 0 if none */
	int have_anchor;         /* META clock anchors */
	uint64_t anchor_mono_ns, anchor_real_ns;
	int resolved;            /* 1 symbolized, -1 raw, 0 not known yet */
	uint64_t bad_refs;       /* samples that named undefined tables */
	uint64_t used;             /* samples read from intact SAMPLES sections and exported */
	int damaged;             /* errors were reported */
};

/* Reads `in` to its end. Problems are printed on stderr as "pfpprof: ..."
 * lines (in->damaged set); @return 0, or -1 when nothing can be exported
 * (not a .pf file, not symbolized, out of memory). */
int pp_read(struct pp_input *in, const char *name);
void pp_input_free(struct pp_input *in);

/* The pprof name of frame `f`: its function name, else pffold's bracketed
 * names ([kernel], [unknown], [MODULE]). Written to buf[size]. */
const char *pp_frame_name(const struct pf_prof *p, const struct pf_prof_frame *f, char *buf, size_t size);

/* The file `path` (as recorded), or NULL if no mapping named it. */
const struct pp_file *pp_file_find(const struct pp_input *in, const char *path);

/* Encodes the profile, gzip-compressed at `gzip_level` (0-9, zlib's), to
 * `fd`. `inline_lines`: a Line per inlined function in each Location
 * (innermost first), else the real function's alone. @return 0, or a
 * negative errno (-ENOMEM, or a write(2) error). */
int pp_write(const struct pp_input *in, int fd, int gzip_level, int inline_lines);

#endif
