/*
 * pfrec.h - internal interfaces between pfrec's source files (not installed).
 *
 *   pfrec.c        options, the recording session, the drain loop, summary
 *   pfrec/sys.c    event names, perf_event_open, ring buffers, /proc, META
 *   pfrec/elf.c    build-ids read from ELF notes (files and memory images)
 *   pfrec/pmu_*.c  event specs resolved against sysfs and tracefs (pmu.h):
 *                  the PMU model, the parser, --list-events
 *   pfrec/events.c the EVENT section's description of an event, --dry-run
 */
#ifndef PFREC_H
#define PFREC_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include <pfile/records.h>
#include <pfile/maps.h>

#include "buildid.h"

/* ---- perf_event_open and rings (pfrec/sys.c) ---- */

/* The perf_event_open(2) system call. */
int pfrec_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			  unsigned long flags);

/* ---- ring buffers (pfrec/sys.c) ---- */

struct pfrec_ring {
	int fd;             /* the event whose buffer this is */
	int cpu;
	uint8_t *base;      /* the mmapped control page + data pages */
	size_t map_bytes;
	uint8_t *data;      /* base + page size */
	uint64_t data_bytes;/* power of two */
};

/* Maps 1 + `pages` pages of `fd`. @return 0 or -errno from mmap(2). */
int pfrec_ring_map(struct pfrec_ring *r, int fd, int cpu, unsigned pages);
void pfrec_ring_unmap(struct pfrec_ring *r);

/* ---- small file and /proc helpers (pfrec/sys.c) ---- */

/* Reads all of `path` into a malloc'd buffer (NUL-terminated, *len without it),
 * at most `max` bytes. @return 0 or -errno. */
int pfrec_read_file(const char *path, size_t max, char **out, size_t *len);
/* The same from an open descriptor, which it closes. */
int pfrec_read_fd(int fd, size_t max, char **out, size_t *len);
/* Reads the first line of a small file into buf (newline stripped). @return length or -errno. */
int pfrec_read_line(const char *path, char *buf, size_t size);
/* Parses a CPU list "0-3,8,10-11" into a sorted, deduplicated array.
 * @return the count (>0), or -EINVAL / -ENOMEM. *out is malloc'd. */
int pfrec_parse_cpu_list(const char *s, int **out);
/* The online CPUs (from /sys/devices/system/cpu/online, else 0..nprocs-1). */
int pfrec_online_cpus(int **out);
/* Current time of a clock in ns. */
uint64_t pfrec_now_ns(clockid_t clk);
/* The value of /proc/sys/kernel/perf_event_paranoid (or 2 if unreadable). */
int pfrec_paranoid(void);

/* ---- META (pfrec/sys.c) ---- */

struct pfrec_meta_in {
	int argc; char **argv;        /* pfrec's own */
	int cmd_argc; char **cmd_argv;/* the recorded command, or 0 */
	int clock_id;                 /* -1 = perf's default clock */
	uint64_t anchor_mono_ns, anchor_real_ns, start_time_ns;
	const char *event_fallback;   /* NULL if none */
	int exclude_kernel;
};
int pfrec_meta_build(struct pf_buf *b, const struct pfrec_meta_in *in);
/* ELF e_machine of the build target. */

/* ---- events described (pfrec/events.c) ---- */

struct pmu_event;
struct pmu_attr;
/* Appends the description of `ev` (format/pfile.md 4.2.1: spec, text, pmu,
 * group_leader, group_members, scale, unit, tracepoint, tp_format, in the
 * key/value layout) to an EVENT payload; leader_index is the EVENT index of
 * its group's leader (its own when alone), nr_members the group's size on a
 * leader. Reads the tracepoint's format file. @return 0, or -errno with one
 * line in err (errlen bytes). */
int pfrec_event_desc(struct pf_buf *b, const struct pmu_event *ev, int leader_index, int nr_members,
		     char *err, size_t errlen);
/* One --dry-run line: "event N: NAME pmu=... type=... config=0x..." */
void pfrec_event_print(FILE *f, int idx, const struct pmu_event *ev, const struct pmu_attr *pa);

/* ---- counts at the end (pfrec/counts.c) ---- */

struct pfrec_count {
	uint64_t value;          /* events, summed over the event's fds */
	uint64_t enabled_ns;     /* PERF_FORMAT_TOTAL_TIME_ENABLED, summed */
	uint64_t running_ns;     /* PERF_FORMAT_TOTAL_TIME_RUNNING, summed (less: multiplexed) */
	uint32_t nr_read;        /* fds (or group reads) that gave it a value */
};
/* The sample ids of each event, to find the event of a value. */
struct pfrec_count_ids {
	uint64_t *const *ids;
	const uint32_t *nids;
	int nev;
	const struct pmu_attr *pa; /* the attr of each event (read_format), for PERF_RECORD_READ */
};
/* Reads one event fd opened with `read_format` (ID required; GROUP reads
 * every member) and adds its values to out[event]. @return 0, -errno from
 * read(2), or -EIO for a short or id-less read. */
int pfrec_count_read(int fd, uint64_t read_format, const struct pfrec_count_ids *ids, struct pfrec_count *out);
/* Appends the COUNTS payload (format/pfile.md 4.9): N.value,
 * N.time_enabled_ns, N.time_running_ns for each event N read. @return 0 or -ENOMEM. */
int pfrec_counts_encode(struct pf_buf *b, const struct pfrec_count *c, int nev);
/* value x enabled / running when the event was multiplexed, else value. */
double pfrec_count_scaled(const struct pfrec_count *c);

/* The enabled time (ns) to store for a task or thread counted by per-CPU
 * descriptors: `enabled`, as combined from their reads (the largest), but
 * never less than `running`, their running times summed. A per-CPU
 * descriptor is meant to be enabled while its task runs anywhere, but the
 * kernel (6.18, measured) reports less for inherited threads: a main thread
 * 1.2 ms enabled against 152 ms running. No task runs longer than it is
 * enabled, so the sum of the running times is the least the enabled time
 * can be; with no multiplexing the two are equal. */
static inline uint64_t pfrec_count_enabled(uint64_t enabled, uint64_t running)
{
	return enabled > running ? enabled : running;
}

/* ---- per-thread counts, --per-thread (pfrec/counts.c) ----
 *
 * Following a task with inherit, the kernel gives an inherited thread's
 * count to its parent event when the thread exits; with inherit_stat it
 * also writes a PERF_RECORD_READ {pid, tid, read_format values,
 * sample_id} into the ring at that moment (include/uapi/linux/perf_event.h;
 * kernel/events/core.c, sync_child_event()). A thread's count is then the
 * sum of its READ records; the followed task's own is its descriptors'
 * read minus the READ records of their inherited threads (the kernel
 * added exactly those). */
struct pfrec_tcount {
	int event;               /* EVENT index */
	uint32_t pid, tid;
	uint64_t id;             /* the parent event's id (exited entries) */
	uint64_t value, enabled_ns, running_ns;
	uint32_t nr_read;
};
struct pfrec_threads {
	struct pfrec_tcount *exited; size_t nexited, capexited; /* one per READ value */
	struct pfrec_tcount *rest; size_t nrest, caprest;       /* the followed tasks' own, per (event, tid) */
	struct pfrec_tcount *gone; size_t ngone, capgone;       /* PERF_RECORD_EXIT: pid, tid */
	struct pfrec_tcount *sum; size_t nsum, capsum;          /* per (event, tid) */
};
/* Notes a thread's PERF_RECORD_EXIT. @return 0 or -ENOMEM. */
int pfrec_threads_exit(struct pfrec_threads *T, uint32_t pid, uint32_t tid);
/* Keeps the values of one PERF_RECORD_READ of `size` bytes whose sample_id
 * trailer is `trailer` bytes (its last u64 the identifier). @return 0,
 * -EIO when malformed, -ENOENT for an unknown id, -ENOMEM. */
int pfrec_threads_read_record(struct pfrec_threads *T, const uint8_t *rec, size_t size, size_t trailer,
			      const struct pfrec_count_ids *ids);
/* Reads one descriptor of the followed thread `tid` (process `pid`) and
 * adds its own part (without the exited inherited threads). @return 0 or -errno. */
int pfrec_threads_fd(struct pfrec_threads *T, int fd, uint64_t read_format, const struct pfrec_count_ids *ids,
		     uint32_t pid, uint32_t tid);
/* Adds the exited threads and the followed tasks' own counts into the sums,
 * sorted by event and tid. A followed task's own count goes to the one
 * exited thread that wrote no READ record when that thread is not the task
 * (inherit_stat moved the task's events to it; see rest_owner()). @return 0 or -ENOMEM. */
int pfrec_threads_finish(struct pfrec_threads *T);
/* Appends version=2 and N.tid.TID.{pid,value,time_enabled_ns,time_running_ns}
 * (format/pfile.md 4.9). @return 0 or -ENOMEM. */
int pfrec_threads_encode(struct pf_buf *b, const struct pfrec_threads *T);
/* The summary's lines of event `event`: "PROG:   tid T (pid P): VALUE". */
void pfrec_threads_print(FILE *f, const char *prog, const struct pfrec_threads *T, int event, double scale,
			 const char *unit);
void pfrec_threads_free(struct pfrec_threads *T);

struct pmu_events;
/* The summary's lines of the ratios perf stat shows (tools/common/ratios.h)
 * for each pair of counted events of one PMU and privilege filter:
 * "PROG: instructions per cycle: 1.5000 (instructions / cycles)", miss
 * rates in percent, ", scaled" when a count was scaled for multiplexing. */
void pfrec_ratios_print(FILE *f, const char *prog, const struct pfrec_count *c, const struct pmu_events *evs,
			const struct pmu_attr *pa, int nev);

/* ---- ELF build-ids (pfrec/elf.c) ---- */

/* Reads the NT_GNU_BUILD_ID note of an ELF file (program headers first,
 * then section headers). @return the build-id size (1..64), 0 if none or
 * not ELF, or -errno if the file cannot be read. */
int pfrec_elf_build_id_fd(int fd, uint8_t out[64]);
/* The same over an ELF image in memory (e.g. the vDSO), `size` bytes. */
int pfrec_elf_build_id_mem(const void *image, size_t size, uint8_t out[64]);

#endif
