/*
 * rec.h - what pfrec's own files share (not installed): the options, the
 * recording session's state (struct rec) and the functions one file calls
 * in another. pfrec.c: messages, output, the session; pfrec/args.c: the
 * command line; pfrec/sideband.c: MAPS/BUILDID/DSO_IMAGE side-band and the
 * rings; pfrec/open.c: opening the events; pfrec/child.c: targets and the
 * command's life.
 */
#ifndef PFREC_REC_H
#define PFREC_REC_H
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "keyset.h"
#include "pfrec.h"
#include "pfrec/pmu.h"



#define MAX_EVENTS 64
#define DEFAULT_FREQ 4000
#define DEFAULT_PAGES 128
#define DEFAULT_ZSTD_LEVEL 6
#define DWARF_DEFAULT_STACK 8192
#define DWARF_MAX_STACK 65528
/* --call-graph dwarf: ~8 KiB per sample at 4 kHz is ~33 MB/s per CPU; 512
 * pages (2 MiB) per CPU hold ~60 ms of it (FACTS.md: 64-128 pages lost
 * nothing at ~1 kHz). Scaled with the stack size and the rate. */
#define DWARF_DEFAULT_PAGES 512
#define MAPS_MAX_BYTES (32u << 20)
#define SIDECAR_DELAY_NS 1000000000ull
/* Rings are also drained this often between wake-ups, so that new processes
 * are seen (and their /proc/PID/maps read) while they still run. */
#define DRAIN_TICK_MS 50
/* Records are written at least this often (--flush-interval), so that a
 * pfrec killed, out of memory or without power loses at most about this much
 * of the recording; to a pipe or socket more often, so that its reader sees
 * the samples promptly. Each flush costs about 500 bytes of file (a small
 * section compresses worse than a large one): at 0.25 s that was 9 % of a
 * -g recording at 4 kHz on the 2 loaded cores of bench/pfrec.sh, at 0.5 s
 * within 5 % (bench/RESULTS.md). */
#define FLUSH_FILE_MS 500
#define FLUSH_STREAM_MS 250
#define PF_RECORD_TYPES 32

/* Layout of our records (sample_type below, sample_id_all=1): a SAMPLE starts
 * IDENTIFIER, IP, TID, TIME; the sample_id trailer of the other records is
 * TID, TIME, CPU, IDENTIFIER (32 bytes). PERF_SAMPLE_PERIOD is added for a
 * frequency and for tracepoints only, as perf record does: with a fixed
 * period the kernel makes a sample of every software event that has it
 * (perf_swevent_event(), period 1), and readers take the attr's
 * sample_period. */
#define SAMPLE_TYPE_BASE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define SAMPLE_TIME_OFFSET 32
#define ID_TRAILER_BYTES 32
#define ID_TRAILER_TIME_FROM_END 24

extern const char *prog; /* "pfrec", for messages */

/* RECORDS section size with --call-graph dwarf and the transform: about
 * 1000 samples of 8 KiB stack copies */
#define DWARF_FRAME_BYTES (8u << 20)

struct opts {
	pid_t *pids; int npids;
	pid_t *tids; int ntids;
	int all_cpus;
	const char *cpu_list;
	double duration_s;
	const char **specs; int nspecs; /* the -e arguments as typed */
	const char **filters;           /* --filter of each -e (its index), or NULL */
	struct pmu_events evs; int nev; /* what they resolve to (pfrec/pmu_parse.c) */
	int default_event;          /* no -e: cycles, which may fall back to cpu-clock */
	int list; const char *list_pattern; /* --list [PATTERN] */
	int dry_run;                /* --dry-run: print the attrs, open nothing */
	int count_only;             /* --count-only: count, never sample */
	int per_thread;             /* --per-thread: counts per thread too (inherit_stat) */
	int no_inherit;             /* --no-inherit: not the threads and processes the
				       command or -p's processes start */
	int repeat;                 /* --repeat N: runs of the command (0: not given) */
	unsigned freq; int freq_given;
	uint64_t period;
	int callchain;
	int dwarf; unsigned stack_bytes; /* --call-graph dwarf[,BYTES] */
	unsigned pages; int pages_given;
	const char *output;
	int zlevel; int zlevel_given;
	int no_transform;           /* --no-transform: RECORDS stored as the kernel wrote them */
	int no_kallsyms;            /* --no-kallsyms: no KSYMS section */
	uint64_t flush_ns; int flush_given; /* --flush-interval; 0 = when a section is full */
	int fsync;                  /* --fsync: fdatasync(2) after every flush */
	int quiet, verbose;
	int cmd_argc; char **cmd_argv;
	int argc; char **argv;
};

struct evfd {
	int fd;
	int ev;
};

struct pending {
	uint16_t type;
	struct pf_buf b;
};

struct rec {
	struct opts o;
	int ncpus; int *cpus;
	pid_t *tasks; int ntasks;       /* -1 alone for -a */
	struct pmu_attr pa[MAX_EVENTS];  /* attr as opened (config3 beside it on old headers) */
	char evname[MAX_EVENTS][128];
	uint64_t *ids[MAX_EVENTS]; uint32_t nids[MAX_EVENTS];
	int *slot_fd[MAX_EVENTS];        /* fd of each event per task x CPU, -1: none */
	struct evfd *fds; int nfds; size_t capfds;
	struct pfrec_ring *rings;        /* one per cpus[] entry */
	int clock_id;                    /* -1: perf's default clock */
	char fallback[256];
	int kernel_build_ids;
	struct pfrec_count counts[MAX_EVENTS]; /* read at the end */
	struct pfrec_threads threads;    /* --per-thread */
	uint32_t *task_pid;              /* the process of each tasks[] entry (0: unknown) */
	int no_inherit_read;             /* the kernel refused inherit with PERF_SAMPLE_READ */
	int per_thread_read;             /* --per-thread or --repeat added PERF_SAMPLE_READ to event 0 */
	int no_per_thread_read;          /* ... and the kernel refused it */
	int no_ksymbol;                  /* the kernel refused attr.ksymbol/bpf_event */
	int forced_user_only;            /* perf_event_paranoid made pfrec drop kernel samples */

	pf_writer *w; int outfd; const char *outname; int out_regular;
	uint64_t good_bytes; int werr;
	uint64_t flush_ns;               /* the interval in force (0: none) */
	uint64_t last_flush;             /* CLOCK_MONOTONIC ns of the last section written */
	uint64_t flushed_bytes;          /* pf_writer_bytes() then */
	uint64_t synced_bytes;           /* pf_writer_bytes() at the last fdatasync */
	uint64_t final_bytes;

	pid_t child; int child_reaped; int child_status;
	int go_fd, err_fd;
	/* --repeat: the runner (the child) tells each run's end on run_fd and
	 * waits for a byte on ack_fd before it starts the next */
	int run_fd, ack_fd;
	int nruns;                       /* runs begun (RUN sections written) */
	struct pf_run *runs;             /* o.repeat entries */
	uint64_t run_mono;               /* CLOCK_MONOTONIC ns when the current run began */
	uint64_t run_samples0, run_lost0; /* R->samples, R->lost then */
	sigset_t oldmask;
	int sigfd;
	int stop_signal;

	uint64_t samples, lost, throttles, records, by_type[PF_RECORD_TYPES];
	uint64_t first_time, last_time, ring_errors;
	uint64_t start_mono, start_wall_mono;

	struct pf_keyset known;
	struct pf_keyset perfmaps;          /* pids whose /tmp/perf-PID.map was copied */
	struct pid_uid { uint32_t pid, uid; } *owners; /* each process's owner when first seen
					       * (open addressing by pid, pid 0: empty) */
	size_t cap_owners, n_owners;
	struct pf_keyset seen_paths;        /* xxh3 of each file's path and inode, >> 1 */
	struct pf_buf pend_bid;
	struct pending *pend; int npend; size_t cappend;
	uint64_t pend_since;
	int vdso_done;
	uint8_t *tmp;
	struct pf_event id_ev;           /* attr[0], for the record decoders */
	struct ksyms_job *ksyms;         /* the KSYMS reader thread (pfrec/ksyms.c), or NULL */
};

extern struct rec *G; /* the session, for notices (quiet flag) */

/* A usage error: one line, the hint, exit 2 (tools/common/cli.h). */
#define usage_error(...) pf_cli_usage_exit(prog, __VA_ARGS__)

/* pfrec.c: messages, small sets, output */
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* "pfrec: ..." on stderr */
void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* unless --quiet */
void verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* with -v */
void put_section(struct rec *R, uint16_t type, const struct pf_buf *b);
void put_records(struct rec *R, const void *p, size_t n);
/* a section compressed by the caller (pf_writer_section_stored()) */
void put_section_stored(struct rec *R, const struct pf_section *sec, const void *stored);

/* pfrec/args.c: the command line (exits 2 on a usage error) */
void parse_args(struct opts *o, int argc, char **argv);

/* pfrec/sideband.c: side-band sections and the rings */
void flush_pending(struct rec *R);
uint64_t perf_now(struct rec *R, uint64_t rec_time);
void save_vdso(struct rec *R, uint32_t pid, uint64_t addr);
int snapshot_maps(struct rec *R, uint32_t pid, uint64_t time);
void drain_all(struct rec *R);
struct pf_buf *pend_new(struct rec *R, uint16_t type); /* a pending side-band section */

/* pfrec/perfmap.c: JIT symbol maps (/tmp/perf-PID.map) into PERFMAP sections */
void save_perfmap(struct rec *R, uint32_t pid, uint64_t time);
void save_perfmaps(struct rec *R, uint64_t time);
/* Notes the owner of a process seen for the first time (the uid of
 * /proc/PID), whose map files are then accepted as its own. */
void note_owner(struct rec *R, uint32_t pid);
/* The uid noted for pid when pfrec first saw it (note_owner()), else the
 * owner of /proc/PID now; -1 when neither is known. */
int64_t process_owner(const struct rec *R, uint32_t pid);

/* pfrec/ksyms.c: the KSYMS section (the kernel's symbols, modules, build-ids),
 * read before the recording starts, so that it precedes every record:
 * ksyms_start() starts reading it in a thread (when ksyms_wanted());
 * ksyms_finish() waits for it and prints its warnings, @return 1 when there
 * is a section to write (META's ksyms key), 0 when none; ksyms_write()
 * writes it (nothing when none). */
void ksyms_start(struct rec *R);
int ksyms_finish(struct rec *R);
void ksyms_write(struct rec *R);
/* Whether a KSYMS section is to be written (kernel samples, not --no-kallsyms). */
int ksyms_wanted(const struct rec *R);
/* META kernel_build_id (/sys/kernel/notes) and kernel_text (the runtime
 * address of _text, /proc/kallsyms read up to its line) when kernel samples
 * are recorded, with or without KSYMS (format/pfile.md 4.1). @return 0 or
 * -ENOMEM. */
int ksyms_meta(struct rec *R, struct pf_buf *b);

/* pfrec/open.c: the events */
void attr_init(struct rec *R, int e);
int meta_call_graph(struct pf_buf *b, const struct opts *o);
int open_events(struct rec *R);
void enable_all(struct rec *R, int on);

/* pfrec/child.c: targets and the command */
int add_task(struct rec *R, pid_t t);
int task_pids(struct rec *R);
int list_threads(struct rec *R, pid_t pid);
void snapshot_existing(struct rec *R);
int check_command(const char *cmd);
int start_command(struct rec *R, int stdout_is_output);
int release_command(struct rec *R);
void reap_child(struct rec *R, int block);
void end_child(struct rec *R, int sig);
int exit_code_of(int st);

#endif /* PFREC_REC_H */
