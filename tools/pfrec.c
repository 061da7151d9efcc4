/*
 * pfrec - record perf_event samples, side-band records, /proc maps snapshots
 * and build-ids into a .pf file (format/pfile.md).
 *
 * One session: parse options, open one event per CPU (and per task) with
 * every CPU's events writing into one ring buffer, write META and EVENT
 * sections, start the command (or enable the events), then drain the rings on
 * poll() wake-ups into RECORDS sections until the command exits, --duration
 * ends, a signal comes or the targets are gone; then disable, drain, write END.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
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
#include "pfrec/rec.h"

const char *prog = "pfrec";

/* ------------------------------------------------------------------ */
/* messages                                                             */

/* One "pfrec: ..." line on stderr (errmsg, notice and verbose share it). */
static void vmsg(const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s: %s\n", prog, buf);
}

void errmsg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

struct rec *G; /* for notices (quiet flag) */

void notice(const char *fmt, ...)
{
	if (G && G->o.quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void verbose(const char *fmt, ...)
{
	if (!G || !G->o.verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* output                                                               */

static void note_write(struct rec *R, int rc)
{
	if (rc < 0) {
		if (!R->werr)
			R->werr = rc;
	} else {
		R->good_bytes = pf_writer_bytes(R->w);
	}
}

void put_section(struct rec *R, uint16_t type, const struct pf_buf *b)
{
	if (R->werr)
		return;
	note_write(R, pf_writer_section(R->w, type, 0, b->data, b->len));
}

void put_section_stored(struct rec *R, const struct pf_section *sec, const void *stored)
{
	if (R->werr)
		return;
	note_write(R, pf_writer_section_stored(R->w, sec, stored));
}

void put_records(struct rec *R, const void *p, size_t n)
{
	if (R->werr || !n)
		return;
	note_write(R, pf_writer_records(R->w, p, n));
}

static int open_output(struct rec *R)
{
	const char *path = R->o.output;
	R->outname = path;
	if (strcmp(path, "-") == 0) {
		if (isatty(1)) {
			errmsg("-: standard output is a terminal; redirect it or use -o FILE");
			return -1;
		}
		R->outfd = 1;
		R->outname = "<stdout>";
		struct stat st;
		R->out_regular = fstat(1, &st) == 0 && S_ISREG(st.st_mode);
		return 0;
	}
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		char old[PATH_MAX];
		if (snprintf(old, sizeof(old), "%s.old", path) >= (int)sizeof(old) || rename(path, old) < 0) {
			errmsg("%s: cannot keep the existing file as %s.old: %s", path, path, strerror(errno));
			return -1;
		}
	}
	R->outfd = pf_out_create_recording(path);
	if (R->outfd < 0) {
		if (errno == EMFILE)
			errmsg("%s: too many open files: raise the limit with `ulimit -n`", path);
		else
			errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	R->out_regular = fstat(R->outfd, &st) == 0 && S_ISREG(st.st_mode);
	return 0;
}

static int start_writer(struct rec *R)
{
	struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
	/* level 6: about 15 % smaller than 3 on sampled call chains, for a few
	 * ms of CPU per MB (bench/RESULTS.md) */
	wo.zstd_level = DEFAULT_ZSTD_LEVEL;
	if (R->o.zlevel_given)
		wo.zstd_level = R->o.zlevel == 0 ? -1 : R->o.zlevel;
	/* the columnar transform (format/pfile.md 3.6) halves -g files; with
	 * dwarf, stack copies are coded against the thread's previous copy, so
	 * larger sections pay off. The sections of the flush timer continue
	 * each other's coding (transform 2, 3.6.7) until they add up to a
	 * frame: they cost little more than one frame would */
	wo.transform = R->o.no_transform ? PF_TRANSFORM_NONE : PF_TRANSFORM_COLUMNS_NEXT;
	/* KSYMS (by default) and PERFMAP (whenever a process has a JIT map)
	 * sections may follow: 1.4; RUN sections and END's run table: 1.3 */
	wo.min_minor = 4;
	if (!R->o.no_transform && R->o.dwarf)
		wo.records_frame_bytes = DWARF_FRAME_BYTES;
	int rc = pf_writer_open_fd(&R->w, R->outfd, &wo);
	if (rc < 0) {
		errmsg("%s: %s", R->outname, strerror(-rc));
		return -1;
	}
	R->good_bytes = pf_writer_bytes(R->w);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the session                                                          */

static void write_end(struct rec *R)
{
	ksyms_write(R); /* written already, unless the setup failed */
	struct pf_end e;
	memset(&e, 0, sizeof(e));
	e.start_time = R->first_time;
	e.stop_time = R->clock_id >= 0 ? pfrec_now_ns(R->clock_id) : R->last_time;
	if (e.stop_time < R->last_time)
		e.stop_time = R->last_time;
	e.duration_ns = pfrec_now_ns(CLOCK_MONOTONIC) - R->start_wall_mono;
	e.samples = R->samples;
	e.lost_samples = R->lost;
	e.throttle_events = R->throttles;
	e.records = R->records;
	for (int i = 0; i < PF_RECORD_TYPES; i++)
		e.records_by_type[i] = R->by_type[i];
	struct pf_buf b = {0};
	if (pf_end_encode(&b, &e) == 0 && (!R->o.repeat || pf_end_runs_encode(&b, R->runs, (uint32_t)R->nruns) == 0))
		put_section(R, PF_SEC_END, &b);
	pf_buf_free(&b);
}

/* --repeat (format/pfile.md 4.10): a RUN section before the first record
 * of the run. Every record of the runs before has been written (the caller
 * drained the rings after the previous run's command had ended). */
static void begin_run(struct rec *R)
{
	uint64_t t = R->clock_id >= 0 ? pfrec_now_ns(R->clock_id) : R->last_time + 1;
	if (t <= R->last_time)
		t = R->last_time + 1;
	struct pf_run r = PF_RUN_INIT;
	r.start_time = t;
	R->runs[R->nruns++] = r;
	R->run_mono = pfrec_now_ns(CLOCK_MONOTONIC);
	R->run_samples0 = R->samples;
	R->run_lost0 = R->lost;
	struct pf_run_mark m = { (uint32_t)R->nruns, t };
	struct pf_buf b = {0};
	if (pf_run_mark_encode(&b, &m) == 0)
		put_section(R, PF_SEC_RUN, &b);
	pf_buf_free(&b);
}

/* The current run's totals, once its records are all drained. */
static void end_run(struct rec *R, int status)
{
	if (!R->nruns || R->runs[R->nruns - 1].stop_time)
		return;
	struct pf_run *r = &R->runs[R->nruns - 1];
	r->stop_time = R->clock_id >= 0 ? pfrec_now_ns(R->clock_id) : R->last_time;
	if (r->stop_time < r->start_time)
		r->stop_time = r->start_time;
	r->duration_ns = pfrec_now_ns(CLOCK_MONOTONIC) - R->run_mono;
	r->samples = R->samples - R->run_samples0;
	r->lost_samples = R->lost - R->run_lost0;
	r->exit_status = status;
}

/* The runner's messages: run K ended with STATUS. Before the next run
 * starts: drain its records, write them, the next RUN section, and let the
 * runner go on. `final`: the recording stops, no run follows. */
static void runs_poll(struct rec *R, int final)
{
	int32_t msg[2];
	while (R->run_fd >= 0) {
		ssize_t n = read(R->run_fd, msg, sizeof(msg));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(msg)) {
			if (n == 0 || (n < 0 && errno != EAGAIN)) {
				close(R->run_fd);
				R->run_fd = -1;
			}
			break;
		}
		drain_all(R);
		flush_pending(R);
		end_run(R, msg[1]);
		if (msg[0] < R->o.repeat && !final && !R->werr) {
			begin_run(R);
			ssize_t w;
			do
				w = write(R->ack_fd, "g", 1);
			while (w < 0 && errno == EINTR);
		}
	}
}

/* Each event's total count (COUNTS, format/pfile.md 4.9): one read per fd,
 * of the leader's fd for groups read together. Following a task, an event
 * has one fd per CPU, each meant to be enabled while the task runs anywhere
 * and running while it runs on that CPU: the task's running time is their
 * sum, its enabled time the largest of theirs but not less than that sum
 * (pfrec_count_enabled(): with inherited threads the kernel reports less).
 * With -a, both are sums over the CPUs. */
static void write_counts(struct rec *R)
{
	struct pfrec_count_ids ids = {R->ids, R->nids, R->o.nev, R->pa};
	struct pfrec_count task[MAX_EVENTS], one[MAX_EVENTS];
	for (int t = 0; t < R->ntasks; t++) {
		memset(task, 0, sizeof(task));
		for (int e = 0; e < R->o.nev; e++) {
			const struct perf_event_attr *a = &R->pa[e].attr;
			if (!R->slot_fd[e] || ((a->read_format & PERF_FORMAT_GROUP) && R->o.evs.ev[e].leader != e))
				continue;
			for (int c = 0; c < R->ncpus; c++) {
				int fd = R->slot_fd[e][t * R->ncpus + c];
				if (fd < 0)
					continue;
				memset(one, 0, sizeof(one));
				int rc = pfrec_count_read(fd, a->read_format, &ids, one);
				if (rc == 0 && R->o.per_thread)
					rc = pfrec_threads_fd(&R->threads, fd, a->read_format, &ids,
							      R->task_pid ? R->task_pid[t] : 0, (uint32_t)R->tasks[t]);
				if (rc < 0) {
					verbose("%s: cannot read its count: %s", R->evname[e], strerror(-rc));
					continue;
				}
				for (int k = 0; k < R->o.nev; k++) {
					if (!one[k].nr_read)
						continue;
					task[k].value += one[k].value;
					task[k].running_ns += one[k].running_ns;
					if (R->tasks[t] == -1)
						task[k].enabled_ns += one[k].enabled_ns;
					else if (one[k].enabled_ns > task[k].enabled_ns)
						task[k].enabled_ns = one[k].enabled_ns;
					task[k].nr_read += one[k].nr_read;
				}
			}
		}
		for (int k = 0; k < R->o.nev; k++) {
			task[k].enabled_ns = pfrec_count_enabled(task[k].enabled_ns, task[k].running_ns);
			R->counts[k].value += task[k].value;
			R->counts[k].enabled_ns += task[k].enabled_ns;
			R->counts[k].running_ns += task[k].running_ns;
			R->counts[k].nr_read += task[k].nr_read;
		}
	}
	struct pf_buf b = {0};
	if (R->o.per_thread && (pfrec_threads_finish(&R->threads) < 0 || pfrec_threads_encode(&b, &R->threads) < 0))
		errmsg("out of memory: the counts per thread are not stored");
	if (pfrec_counts_encode(&b, R->counts, R->o.nev) == 0 && b.len)
		put_section(R, PF_SEC_COUNTS, &b);
	pf_buf_free(&b);
}

static void summary(struct rec *R)
{
	if (R->o.quiet)
		return;
	uint64_t bytes = R->final_bytes;
	double per = R->samples ? (double)bytes / (double)R->samples : 0;
	fprintf(stderr, "%s: %llu samples, %llu lost, %llu bytes written to %s (%.1f bytes/sample)\n", prog,
		(unsigned long long)R->samples, (unsigned long long)R->lost, (unsigned long long)bytes,
		R->outname, per);
	for (int k = 0; k < R->nruns; k++) {
		const struct pf_run *r = &R->runs[k];
		char st[32];
		if (r->exit_status < 0)
			snprintf(st, sizeof(st), "cut short");
		else
			snprintf(st, sizeof(st), "exit status %d", (int)r->exit_status);
		fprintf(stderr, "%s: run %d: %llu samples, %llu lost, %.3f s, %s\n", prog, k + 1,
			(unsigned long long)r->samples, (unsigned long long)r->lost_samples, (double)r->duration_ns / 1e9,
			st);
	}
	for (int e = 0; e < R->o.nev; e++) {
		const struct pfrec_count *c = &R->counts[e];
		const struct pmu_event *pe = &R->o.evs.ev[e];
		if (!c->nr_read)
			continue;
		char val[64], scaled[96] = "";
		if (pe->scale != 1.0 || pe->unit[0])
			snprintf(val, sizeof(val), "%.6g %s", pfrec_count_scaled(c) * pe->scale, pe->unit);
		else
			snprintf(val, sizeof(val), "%.0f", pfrec_count_scaled(c));
		if (c->running_ns < c->enabled_ns)
			snprintf(scaled, sizeof(scaled), " (scaled from %.1f%% of the time%s)",
				 c->enabled_ns ? 100.0 * (double)c->running_ns / (double)c->enabled_ns : 0.0,
				 c->running_ns ? "" : ": never counted");
		fprintf(stderr, "%s: %s: %s%s\n", prog, R->evname[e], val, scaled);
		if (R->o.per_thread)
			pfrec_threads_print(stderr, prog, &R->threads, e, pe->scale, pe->unit);
	}
	pfrec_ratios_print(stderr, prog, R->counts, &R->o.evs, R->pa, R->o.nev);
	uint64_t all = R->samples + R->lost;
	if (all && R->lost * 100 > all)
		fprintf(stderr, "%s: warning: %.1f%% of the samples were lost: use a larger -m or a lower -F\n", prog,
			100.0 * (double)R->lost / (double)all);
	if (R->ring_errors)
		fprintf(stderr, "%s: warning: %llu ring buffer(s) held damaged data that was skipped\n", prog,
			(unsigned long long)R->ring_errors);
}

static int write_header_sections(struct rec *R)
{
	struct pf_buf b = {0};
	struct pfrec_meta_in mi;
	memset(&mi, 0, sizeof(mi));
	mi.argc = R->o.argc;
	mi.argv = R->o.argv;
	mi.cmd_argc = R->o.cmd_argc;
	mi.cmd_argv = R->o.cmd_argv;
	mi.clock_id = R->clock_id;
	/* read the two clocks together: realtime between two monotonic reads */
	uint64_t m1 = pfrec_now_ns(CLOCK_MONOTONIC);
	uint64_t rt = pfrec_now_ns(CLOCK_REALTIME);
	uint64_t m2 = pfrec_now_ns(CLOCK_MONOTONIC);
	mi.anchor_mono_ns = m1 + (m2 - m1) / 2;
	mi.anchor_real_ns = rt;
	mi.start_time_ns = R->clock_id >= 0 ? pfrec_now_ns(R->clock_id) : 0;
	mi.event_fallback = R->fallback[0] ? R->fallback : NULL;
	mi.exclude_kernel = R->pa[0].attr.exclude_kernel;
	/* META "ksyms" = 1: a KSYMS section follows (format/pfile.md 4.11),
	 * before any RECORDS: it is read before the recording starts */
	int ksyms = ksyms_finish(R);
	if (pfrec_meta_build(&b, &mi) < 0 || meta_call_graph(&b, &R->o) < 0 ||
	    (ksyms && pf_kv_add(&b, "ksyms", "1") < 0) || ksyms_meta(R, &b) < 0) {
		errmsg("out of memory");
		return -1;
	}
	/* META filter.N: what the samples of a filtered tracepoint are */
	for (int e = 0; e < R->o.nev; e++) {
		char key[32];
		snprintf(key, sizeof(key), "filter.%d", e);
		if (R->o.evs.ev[e].filter && pf_kv_add(&b, key, R->o.evs.ev[e].filter) < 0) {
			errmsg("out of memory");
			return -1;
		}
	}
	put_section(R, PF_SEC_META, &b);
	for (int e = 0; e < R->o.nev; e++) {
		b.len = 0;
		/* attr.size covers config3 when it is used, from the pmu_attr
		 * that holds it whatever this system's header has */
		if (pf_event_encode_bytes(&b, &R->pa[e], R->pa[e].attr.size, R->ids[e], R->nids[e], R->evname[e]) < 0) {
			errmsg("out of memory");
			pf_buf_free(&b);
			return -1;
		}
		/* after the name: the spec, PMU, group, tracepoint format */
		const struct pmu_event *pe = &R->o.evs.ev[e];
		char err[512];
		if (pfrec_event_desc(&b, pe, pe->leader, pe->nr_members, err, sizeof(err)) < 0) {
			errmsg("%s", err);
			pf_buf_free(&b);
			return -1;
		}
		put_section(R, PF_SEC_EVENT, &b);
	}
	pf_buf_free(&b);
	/* The [vdso] image before any RECORDS: a reader on a pipe (pfrec -o - |
	 * pfsym) can then name and unwind vDSO frames as the samples arrive.
	 * Every 64-bit process of this kernel maps the same image as pfrec. */
	save_vdso(R, (uint32_t)getpid(), getauxval(AT_SYSINFO_EHDR));
	/* the kernel's symbols before any RECORDS too, for the same reader */
	ksyms_write(R);
	flush_pending(R);
	return R->werr ? -1 : 0;
}

static void report_write_error(struct rec *R)
{
	int err = -R->werr;
	/* a partly written section is already gone: libpfile's writer cuts a
	 * regular file back to its last whole section on a failed write */
	unsigned long long n = (unsigned long long)R->good_bytes;
	if (R->out_regular)
		errmsg("%s: %s (recording stopped; the %llu bytes written before are kept)", R->outname,
		       strerror(err), n);
	else if (err == EPIPE) /* the pipe held bytes that its reader may never have read */
		errmsg("%s: %s (recording stopped: the reader closed the pipe; %llu bytes had been "
		       "written to it, not necessarily all read)", R->outname, strerror(err), n);
	else
		errmsg("%s: %s (recording stopped after %llu bytes were written)", R->outname,
		       strerror(err), n);
}

/* --fsync: the sections written so far onto the file's storage. fdatasync(2)
 * also writes the file's new size (needed to read the data back). Not for
 * pipes, sockets and devices, which have no storage of their own. */
static void sync_output(struct rec *R)
{
	uint64_t b = pf_writer_bytes(R->w);
	if (!R->o.fsync || !R->out_regular || R->werr || b == R->synced_bytes)
		return;
	if (fdatasync(R->outfd) < 0) {
		R->werr = -errno;
		return;
	}
	R->synced_bytes = b;
}

/* The flush timer (--flush-interval): when the last section went out at least
 * flush_ns ago, writes the records drained since and the side-band sections
 * waiting, so that at most that much of the recording is only in memory.
 * A section that went out on its own (a full RECORDS batch, a MAPS snapshot:
 * every section written empties the batch first) restarts the timer. */
static void flush_due(struct rec *R, uint64_t now)
{
	uint64_t b = pf_writer_bytes(R->w);
	if (b != R->flushed_bytes) {
		R->flushed_bytes = b;
		R->last_flush = now;
		sync_output(R);
	}
	if (!R->flush_ns || now - R->last_flush < R->flush_ns || R->werr)
		return;
	flush_pending(R);
	note_write(R, pf_writer_flush(R->w));
	sync_output(R);
	R->flushed_bytes = pf_writer_bytes(R->w);
	R->last_flush = now;
}

/* The poll loop. @return when the recording should stop. */
static void record_loop(struct rec *R, uint64_t deadline)
{
	int npfd = 1 + R->nfds;
	/* --repeat: the runner's messages after the events' fds */
	struct pollfd *pfd = calloc((size_t)npfd + 1, sizeof(*pfd));
	if (!pfd) {
		errmsg("out of memory");
		return;
	}
	pfd[0].fd = R->sigfd;
	pfd[0].events = POLLIN;
	for (int i = 0; i < R->nfds; i++) {
		pfd[1 + i].fd = R->fds[i].fd;
		pfd[1 + i].events = POLLIN;
	}
	pfd[npfd].fd = R->run_fd;
	pfd[npfd].events = POLLIN;
	int hup = 0;
	for (;;) {
		int timeout = -1;
		uint64_t now = pfrec_now_ns(CLOCK_MONOTONIC);
		if (deadline) {
			if (now >= deadline)
				break;
			uint64_t ms = (deadline - now + 999999) / 1000000;
			timeout = ms > INT_MAX ? INT_MAX : (int)ms;
		}
		if (timeout < 0 || timeout > DRAIN_TICK_MS)
			timeout = DRAIN_TICK_MS;
		if (R->pend_since) {
			uint64_t due = R->pend_since + SIDECAR_DELAY_NS;
			int ms = now >= due ? 0 : (int)((due - now + 999999) / 1000000);
			if (timeout < 0 || ms < timeout)
				timeout = ms;
		}
		if (R->flush_ns) {
			uint64_t due = R->last_flush + R->flush_ns;
			int ms = now >= due ? 0 : (int)((due - now + 999999) / 1000000);
			if (ms < timeout)
				timeout = ms;
		}
		pfd[npfd].fd = R->run_fd;
		int n = poll(pfd, (nfds_t)npfd + (R->run_fd >= 0), timeout);
		if (n < 0 && errno != EINTR) {
			errmsg("poll: %s", strerror(errno));
			break;
		}
		int stop = 0;
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			while (read(R->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					reap_child(R, 0);
					if (R->child_reaped)
						stop = 1;
				} else {
					R->stop_signal = (int)si.ssi_signo;
					stop = 1;
				}
			}
		}
		if (n > 0) {
			for (int i = 1; i < npfd; i++) {
				if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLHUP | POLLERR))) {
					pfd[i].fd = -1;
					hup++;
				}
			}
		}
		if (n > 0 && R->run_fd >= 0 && (pfd[npfd].revents & (POLLIN | POLLHUP | POLLERR)))
			runs_poll(R, stop);
		drain_all(R);
		uint64_t after = pfrec_now_ns(CLOCK_MONOTONIC);
		if (R->pend_since && after >= R->pend_since + SIDECAR_DELAY_NS)
			flush_pending(R);
		flush_due(R, after);
		if (R->werr)
			break;
		/* every event ended: the recorded tasks are all gone */
		if (hup == R->nfds && !R->o.all_cpus)
			stop = 1;
		if (stop)
			break;
	}
	free(pfd);
}

/* Whether an event samples at -F's frequency (attr_init()'s choice): not
 * one with its own period= or freq=, a member read by its leader, or a
 * tracepoint without -F (every hit, as perf record). */
static int uses_freq(const struct rec *R)
{
	for (int e = 0; e < R->o.nev; e++) {
		unsigned f = R->o.evs.ev[e].flags;
		if (f & (PMU_EV_NO_SAMPLE | PMU_EV_PERIOD | PMU_EV_FREQ))
			continue;
		if ((f & PMU_EV_TRACEPOINT) && !R->o.freq_given)
			continue;
		return 1;
	}
	return 0;
}

/* -F above the kernel's perf_event_max_sample_rate: an error when the user
 * gave it, else lowered to the limit (only when an event samples at that
 * frequency: a recording of tracepoints alone samples every hit). @return 0,
 * or 1 (error printed). */
static int limit_rate(struct rec *R)
{
	if (R->o.period || R->o.count_only || !uses_freq(R))
		return 0;
	char buf[32];
	if (pfrec_read_line("/proc/sys/kernel/perf_event_max_sample_rate", buf, sizeof(buf)) <= 0)
		return 0;
	unsigned max = (unsigned)strtoul(buf, NULL, 10);
	if (!max || R->o.freq <= max)
		return 0;
	if (R->o.freq_given) {
		errmsg("-F %u: above the kernel's limit of %u Hz "
		       "(/proc/sys/kernel/perf_event_max_sample_rate)", R->o.freq, max);
		return 1;
	}
	notice("lowering the sampling rate to %u Hz (perf_event_max_sample_rate)", max);
	R->o.freq = max;
	return 0;
}

/* --dry-run: the attrs as they would be opened (before any fallback).
 * @return the exit code. */
static int dry_run(struct rec *R)
{
	for (int e = 0; e < R->o.nev; e++) {
		attr_init(R, e);
		pfrec_event_print(stdout, e, &R->o.evs.ev[e], &R->pa[e]);
	}
	pmu_events_free(&R->o.evs);
	free(R->o.specs);
	int e = pf_out_flush(stdout);
	if (e)
		pf_out_error(prog, "-", e);
	return e ? 1 : 0;
}

/* R->cpus: -C's list (each one online), else the online CPUs.
 * @return 0, or 1 (error printed). */
static int pick_cpus(struct rec *R)
{
	int *online;
	int nonline = pfrec_online_cpus(&online);
	if (nonline <= 0) {
		errmsg("cannot list the online CPUs");
		return 1;
	}
	if (!R->o.cpu_list) {
		R->cpus = online;
		R->ncpus = nonline;
		return 0;
	}
	int n = pfrec_parse_cpu_list(R->o.cpu_list, &R->cpus);
	if (n <= 0)
		usage_error("-C %s: not a CPU list (e.g. 0-3,6)", R->o.cpu_list);
	for (int i = 0; i < n; i++) {
		int ok = 0;
		for (int j = 0; j < nonline; j++)
			ok |= online[j] == R->cpus[i];
		if (!ok) {
			errmsg("-C %s: CPU %d is not online", R->o.cpu_list, R->cpus[i]);
			free(online);
			return 1;
		}
	}
	R->ncpus = n;
	free(online);
	return 0;
}

/* Signals: all handled through a signalfd; children get the old mask back.
 * @return 0, or 1 (error printed). */
static int block_signals(struct rec *R)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &R->oldmask);
	signal(SIGPIPE, SIG_IGN);
	R->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (R->sigfd < 0) {
		errmsg("signalfd: %s%s", strerror(errno), errno == EMFILE ? ": raise the limit with `ulimit -n`" : "");
		return 1;
	}
	return 0;
}

/* The tasks to follow: -a, -p's processes, -t's threads, and the command
 * (started, held before exec). @return -1 when all are in place, else
 * the exit code (error printed). */
static int add_targets(struct rec *R, int cmd, int to_stdout)
{
	if (R->o.all_cpus) {
		add_task(R, -1);
	} else if (R->o.npids) {
		for (int i = 0; i < R->o.npids; i++) {
			int rc = list_threads(R, R->o.pids[i]);
			if (rc < 0) {
				errmsg("%d: %s", (int)R->o.pids[i], rc == -ENOENT ? "no such process" : strerror(-rc));
				return 1;
			}
		}
	} else if (R->o.ntids) {
		for (int i = 0; i < R->o.ntids; i++) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/%d/status", (int)R->o.tids[i]);
			if (access(path, F_OK) < 0) {
				errmsg("%d: no such thread", (int)R->o.tids[i]);
				return 1;
			}
			add_task(R, R->o.tids[i]);
		}
	}
	if (!cmd)
		return -1;
	int e = check_command(R->o.cmd_argv[0]);
	if (e) {
		/* as a shell says it; nothing was opened or renamed */
		errmsg("%s: %s", R->o.cmd_argv[0], strerror(e));
		return e == ENOENT ? 127 : 126;
	}
	if (start_command(R, to_stdout) < 0)
		return 1;
	if (!R->o.all_cpus)
		add_task(R, R->child);
	pf_keyset_add(&R->known, (uint32_t)R->child);
	return -1;
}

/* The end of a recording: no new samples, everything in the rings to the
 * file, the file closed. @return the exit code so far (0 or 1). */
static int stop_recording(struct rec *R)
{
	runs_poll(R, 1);
	enable_all(R, 0);
	drain_all(R);
	save_perfmaps(R, R->clock_id >= 0 ? pfrec_now_ns(R->clock_id) : R->last_time);
	flush_pending(R);
	if (R->o.repeat) /* a run cut short (--duration, a signal): status unknown */
		end_run(R, -1);
	if (!R->werr)
		write_counts(R);
	if (!R->werr)
		write_end(R);
	if (!R->werr)
		note_write(R, pf_writer_flush(R->w));
	sync_output(R);
	R->final_bytes = pf_writer_bytes(R->w);
	int close_rc = pf_writer_close(R->w);
	if (close_rc < 0 && !R->werr)
		R->werr = close_rc;
	int rc;
	if (R->werr) {
		report_write_error(R);
		rc = 1;
	} else {
		rc = 0;
		summary(R);
	}
	R->w = NULL;
	if (R->outfd > 1 && close(R->outfd) < 0 && rc == 0) {
		errmsg("%s: %s", R->outname, strerror(errno));
		rc = 1;
	}
	return rc;
}

static void free_rec(struct rec *R)
{
	for (int i = 0; i < R->ncpus; i++)
		pfrec_ring_unmap(&R->rings[i]);
	for (int i = 0; i < R->nfds; i++)
		close(R->fds[i].fd);
	for (int e = 0; e < R->o.nev; e++) {
		free(R->ids[e]);
		free(R->slot_fd[e]);
	}
	pmu_events_free(&R->o.evs);
	free(R->o.specs);
	free(R->runs);
	if (R->run_fd >= 0)
		close(R->run_fd);
	if (R->ack_fd >= 0)
		close(R->ack_fd);
	free(R->fds);
	free(R->rings);
	free(R->cpus);
	free(R->tasks);
	free(R->task_pid);
	pfrec_threads_free(&R->threads);
	free(R->tmp);
	free(R->o.pids);
	free(R->o.tids);
	pf_keyset_free(&R->known);
	pf_keyset_free(&R->perfmaps);
	free(R->owners);
	pf_keyset_free(&R->seen_paths);
	pf_buf_free(&R->pend_bid);
	for (int i = 0; i < R->npend; i++)
		pf_buf_free(&R->pend[i].b);
	free(R->pend);
}

/* A failure before recording began: the file closed as it is, the events
 * closed, the command killed. @return 1. */
static int fail_early(struct rec *R)
{
	if (R->w)
		pf_writer_close(R->w);
	for (int i = 0; i < R->ncpus && R->rings; i++)
		pfrec_ring_unmap(&R->rings[i]);
	for (int i = 0; i < R->nfds; i++)
		close(R->fds[i].fd);
	if (R->child > 0) {
		kill(R->child, SIGKILL);
		reap_child(R, 1);
	}
	return 1;
}

int main(int argc, char **argv)
{
	static struct rec rec;
	struct rec *R = &rec;
	G = R;
	R->go_fd = R->err_fd = R->outfd = R->sigfd = R->run_fd = R->ack_fd = -1;
	R->clock_id = -1;
	parse_args(&R->o, argc, argv);

	if (limit_rate(R))
		return 1;
	if (R->o.dry_run)
		return dry_run(R);
	if (pick_cpus(R) || block_signals(R))
		return 1;
	R->tmp = malloc(1 << 16);
	if (!R->tmp) {
		errmsg("out of memory");
		return 1;
	}

	int to_stdout = strcmp(R->o.output, "-") == 0;
	if (to_stdout && isatty(1)) {
		errmsg("-: standard output is a terminal; redirect it or use -o FILE");
		return 1;
	}
	int cmd = R->o.cmd_argc > 0;
	int rc = add_targets(R, cmd, to_stdout);
	if (rc >= 0)
		return rc;

	if (R->o.per_thread && task_pids(R) < 0)
		return fail_early(R);
	if (open_events(R) < 0)
		return fail_early(R);
	/* the kernel's symbols, read while the output is set up; the
	 * recording starts after (write_header_sections()) */
	ksyms_start(R);
	if (open_output(R) < 0 || start_writer(R) < 0)
		return fail_early(R);
	if (write_header_sections(R) < 0) {
		report_write_error(R);
		return fail_early(R);
	}

	R->start_wall_mono = pfrec_now_ns(CLOCK_MONOTONIC);
	R->flush_ns = R->o.flush_given ? R->o.flush_ns
				       : (uint64_t)(R->out_regular ? FLUSH_FILE_MS : FLUSH_STREAM_MS) * 1000000u;
	R->last_flush = R->start_wall_mono;
	R->flushed_bytes = pf_writer_bytes(R->w);
	sync_output(R);
	if (!cmd || R->o.all_cpus) {
		enable_all(R, 1);
		snapshot_existing(R);
	}
	if (R->o.repeat) {
		R->runs = calloc((size_t)R->o.repeat, sizeof(*R->runs));
		if (!R->runs) {
			errmsg("out of memory");
			return fail_early(R);
		}
		begin_run(R);
	}
	if (cmd) {
		int exec_err = release_command(R);
		if (exec_err) {
			reap_child(R, 1);
			enable_all(R, 0);
			drain_all(R);
			flush_pending(R);
			write_end(R);
			pf_writer_close(R->w);
			R->w = NULL;
			errmsg("%s: %s", R->o.cmd_argv[0], strerror(exec_err));
			return exec_err == ENOENT ? 127 : 126;
		}
	}

	uint64_t deadline = 0;
	if (R->o.duration_s > 0)
		deadline = R->start_wall_mono + (uint64_t)(R->o.duration_s * 1e9);
	if (!R->werr)
		record_loop(R, deadline);

	rc = stop_recording(R);
	if (cmd) {
		if (!R->child_reaped) {
			/* stopped by a signal, --duration or an error: end the command
			 * too (with the signal pfrec got, so the status reads the same as
			 * when the terminal signalled both); the file is complete by now,
			 * so a second signal may end pfrec itself while it waits. */
			sigprocmask(SIG_SETMASK, &R->oldmask, NULL);
			end_child(R, R->stop_signal ? R->stop_signal : SIGTERM);
		}
		if (rc == 0)
			rc = exit_code_of(R->child_status);
	}
	free_rec(R);
	return rc;
}
