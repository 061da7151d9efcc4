/*
 * open.c - pfrec opens its events: attrs, groups, per task and CPU, the
 * errors explained, enabling.
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
#include "grow.h"
#include "pfrec/rec.h"

/* ------------------------------------------------------------------ */
/* events                                                               */

static void perm_error(struct rec *R, const char *what)
{
	int par = pfrec_paranoid();
	const char *need;
	if (R->o.all_cpus)
		need = "recording every process (-a) needs it at 0 or below, or CAP_PERFMON";
	else if (par >= 3)
		need = "any recording by an unprivileged user needs it at 2 or below, or CAP_PERFMON";
	else
		need = "recording another user's process needs CAP_PERFMON (or ptrace rights over it)";
	errmsg("%s: permission denied (/proc/sys/kernel/perf_event_paranoid is %d; %s)", what, par, need);
}

/* An event with a precise level that the kernel refused: when it opens
 * without one, the level was the fault (perf lets the kernel decide for a
 * PMU without caps/max_precise, and so does pfrec). @return 1 if reported. */
static int precise_refused(struct rec *R, int ev, pid_t pid, int cpu, int err)
{
	struct pmu_attr t = R->pa[ev];
	unsigned level = t.attr.precise_ip;
	t.attr.precise_ip = 0;
	t.attr.disabled = 1;
	int fd = pfrec_perf_event_open(&t.attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	const struct pmu_event *pe = &R->o.evs.ev[ev];
	errmsg("-e %s: precise level %u (:%.*s) refused by the kernel (%s): PMU %s has no precise mode of that "
	       "level%s", pe->spec, level, (int)level, "ppp", strerror(err), pe->pmu,
	       (pe->flags & PMU_EV_PRECISE_UNCHECKED) ? " (it publishes no caps/max_precise)" : "");
	return 1;
}

static void open_error(struct rec *R, int err, int ev, pid_t pid, int cpu)
{
	char what[128];
	if (pid > 0)
		snprintf(what, sizeof(what), "%.63s on pid %d", R->evname[ev], (int)pid);
	else
		snprintf(what, sizeof(what), "%.63s on CPU %d", R->evname[ev], cpu);
	if (R->pa[ev].attr.precise_ip && (err == EINVAL || err == EOPNOTSUPP) && precise_refused(R, ev, pid, cpu, err))
		return;
	switch (err) {
	case EACCES:
	case EPERM:
		perm_error(R, what);
		break;
	case ESRCH:
		errmsg("%d: no such process", (int)pid);
		break;
	case EMFILE:
	case ENFILE:
		errmsg("%s: too many open files (%d events open so far): raise the limit with `ulimit -n`",
		       what, R->nfds);
		break;
	case ENOENT:
	case EOPNOTSUPP:
		if ((R->pa[ev].attr.type == PERF_TYPE_HARDWARE || R->pa[ev].attr.type == PERF_TYPE_HW_CACHE) &&
		    (!R->o.evs.ev[ev].pmu || !strcmp(R->o.evs.ev[ev].pmu, "hardware")))
			errmsg("%s: event not supported on this machine (no CPU PMU in "
			       "/sys/bus/event_source/devices): try -e cpu-clock", R->evname[ev]);
		else if (R->pa[ev].attr.type == PERF_TYPE_HARDWARE || R->pa[ev].attr.type == PERF_TYPE_HW_CACHE)
			/* a CPU PMU is there, but it has no counter for this
			 * generic event (an emulated one, a minimal core) */
			errmsg("%s: the CPU's PMU %s does not count this event here (%s): its events: "
			       "pfrec --list %s; or try -e cpu-clock", R->evname[ev], R->o.evs.ev[ev].pmu, strerror(err),
			       R->o.evs.ev[ev].pmu);
		else
			errmsg("%s: event not supported on this machine", R->evname[ev]);
		break;
	case ENODEV:
		errmsg("CPU %d: no such CPU online", cpu);
		break;
	case EINVAL:
		if (R->pa[ev].attr.type >= PERF_TYPE_MAX && (R->pa[ev].attr.sample_period || R->pa[ev].attr.freq) &&
		    !strchr(R->o.evs.ev[ev].spec, '{')) {
			/* msr, power, uncore: PMUs that count but cannot sample */
			errmsg("%s: cannot open the event: %s (if its PMU cannot sample, read it in a group: "
			       "-e '{cpu-clock,%s}:S')", what, strerror(err), R->evname[ev]);
			break;
		}
		/* fall through */
	default:
		errmsg("%s: cannot open the event: %s", what, strerror(err));
		break;
	}
}

/* The user registers sampled in dwarf mode: all general registers, sp and pc
 * of the recording architecture (perf's order: arch/x86/include/uapi/asm/perf_regs.h
 * and the arm/arm64 ones). x86_64: AX..SS and R8..R15 (DS, ES, FS, GS give
 * EINVAL); aarch64: x0-x30, sp, pc; i386 and arm: the first 16. */
static uint64_t regs_user_mask(void)
{
#if defined(__x86_64__)
	return 0xff0fffULL;
#elif defined(__aarch64__)
	return (1ULL << 33) - 1;
#elif defined(__i386__) || defined(__arm__)
	return 0xffffULL;
#else
	return 0;
#endif
}

/* META keys of the call-graph mode: callchain_mode, perf_event_max_stack
 * (the kernel's depth limit of call chains, kernel.perf_event_max_stack:
 * a chain that long was cut), sample_regs_user (hex), sample_stack_user
 * (bytes), va_bits (user virtual-address bits, from the stack's address:
 * the kernel puts the stack at the top of the user range), and on aarch64
 * pac_enabled (HWCAP_PACA: return addresses may carry pointer-authentication
 * bits above va_bits). */
int meta_call_graph(struct pf_buf *b, const struct opts *o)
{
	if (!o->callchain)
		return 0;
	int rc = pf_kv_add(b, "callchain_mode", o->dwarf ? "dwarf" : "fp");
	char maxs[24];
	if (pfrec_read_line("/proc/sys/kernel/perf_event_max_stack", maxs, sizeof(maxs)) > 0 && maxs[0] >= '0' &&
	    maxs[0] <= '9')
		rc |= pf_kv_add(b, "perf_event_max_stack", maxs);
	if (!o->dwarf)
		return rc;
	char hexmask[24];
	snprintf(hexmask, sizeof(hexmask), "0x%llx", (unsigned long long)regs_user_mask());
	rc |= pf_kv_add(b, "sample_regs_user", hexmask);
	rc |= pf_kv_add_u64(b, "sample_stack_user", o->stack_bytes);
	volatile int here = 0;
	uintptr_t sp = (uintptr_t)&here;
	unsigned bits = 0;
	while (bits < 64 && (sp >> bits))
		bits++;
	rc |= pf_kv_add_u64(b, "va_bits", bits);
#if defined(__aarch64__)
#ifndef HWCAP_PACA
#define HWCAP_PACA (1UL << 30)
#endif
	rc |= pf_kv_add_u64(b, "pac_enabled", (getauxval(AT_HWCAP) & HWCAP_PACA) ? 1 : 0);
#endif
	return rc;
}

void attr_init(struct rec *R, int e)
{
	struct perf_event_attr *a = &R->pa[e].attr;
	const struct pmu_event *s = &R->o.evs.ev[e];
	/* what the spec decides (pfrec/pmu.h): type, config words, exclude
	 * bits, precise_ip, pinned, period=/freq=, RAW, READ and GROUP */
	R->pa[e] = s->pa;
	/* the size that covers config3 only when it is used: kernels before
	 * 6.3 refuse a larger attr whose extra bytes are not zero anyway */
	a->size = PMU_CONFIG3(&R->pa[e]) ? (uint32_t)sizeof(R->pa[e]) : (uint32_t)sizeof(*a);
	if (R->o.count_only) {
		a->sample_period = 0; /* counts only: side-band records still come */
		a->freq = 0;
	} else if (s->flags & PMU_EV_NO_SAMPLE) {
		/* a member of a sample-read group: counts, read by its leader */
	} else if (s->flags & (PMU_EV_PERIOD | PMU_EV_FREQ)) {
		/* period= or freq= of this event */
	} else if (R->o.period) {
		a->sample_period = R->o.period;
	} else if ((s->flags & PMU_EV_TRACEPOINT) && !R->o.freq_given) {
		a->sample_period = 1; /* every hit of a tracepoint, as perf record */
	} else {
		a->freq = 1;
		a->sample_freq = R->o.freq;
	}
	/* PERIOD as perf record: with a frequency, and for tracepoints, whose
	 * hit may count more than 1 (sched_stat_runtime: nanoseconds) */
	a->sample_type |= SAMPLE_TYPE_BASE | (R->o.callchain ? PERF_SAMPLE_CALLCHAIN : 0) |
			  (a->freq || a->type == PERF_TYPE_TRACEPOINT ? PERF_SAMPLE_PERIOD : 0);
	if (R->o.dwarf) {
		/* the kernel part of the chain from the kernel; the user part is
		 * unwound by pfsym from the registers and the stack copy */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->exclude_callchain_user = 1;
		a->sample_regs_user = regs_user_mask();
		a->sample_stack_user = R->o.stack_bytes;
	}
	/* the counts read at the end: how long each was enabled and counting
	 * (less when multiplexed) */
	a->read_format |= PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	/* a group member starts enabled: it counts while its leader does */
	a->disabled = s->leader == e;
	a->sample_id_all = 1;
	int cmd = R->o.cmd_argc > 0;
	a->inherit = !R->o.all_cpus && !R->o.ntids && !R->o.no_inherit;
	/* a PERF_RECORD_READ with each inherited thread's count at its exit;
	 * and an inherited PERF_SAMPLE_READ event, which keeps the kernel
	 * from swapping the contexts of two threads at a context switch
	 * (Linux 6.12+): swapped, the per-CPU counts of the threads mix */
	a->inherit_stat = R->o.per_thread && a->inherit;
	/* --repeat: the runner's events stay off while each run's turn on at
	 * its exec; a swap between the runner and a run before the run's exec
	 * would leave the runner's own events in that run, to end with it, and
	 * the next runs would inherit nothing (seen on Linux 6.18: runs 2 and 3
	 * without a sample). */
	if ((a->inherit_stat || (R->o.repeat && a->inherit)) && e == 0 && !(a->sample_type & PERF_SAMPLE_READ) &&
	    !R->no_per_thread_read) {
		a->sample_type |= PERF_SAMPLE_READ;
		R->per_thread_read = 1;
	}
	a->enable_on_exec = cmd && !R->o.all_cpus && s->leader == e;
	if ((a->sample_type & PERF_SAMPLE_READ) && R->no_inherit_read)
		a->inherit = 0; /* as the group's leader (open_first) */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	uint64_t ring = (uint64_t)R->o.pages * (uint64_t)sysconf(_SC_PAGESIZE);
	a->wakeup_watermark = (uint32_t)(ring / 4 ? ring / 4 : 1);
	if (e == 0) { /* the side-band records come with the first event only */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = 1;
		/* BPF programs and trampolines loaded while recording, with
		 * their names (pfdump shows them) */
		a->ksymbol = !a->exclude_kernel && !R->no_ksymbol;
		a->bpf_event = !a->exclude_kernel && !R->no_ksymbol;
	}
	snprintf(R->evname[e], sizeof(R->evname[e]), "%.127s", s->name);
}

/* Opens event `e` for the first time, adapting the attr to what the kernel
 * and the permissions allow. @return fd or -errno. */
static int open_first(struct rec *R, int e, pid_t pid, int cpu, int group_fd)
{
	struct perf_event_attr *a = &R->pa[e].attr;
	for (;;) {
		int fd = pfrec_perf_event_open(a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			return fd;
		int err = errno;
		verbose("perf_event_open(%s, pid %d, cpu %d): %s", R->evname[e], (int)pid, cpu, strerror(err));
		if ((err == EINVAL || err == E2BIG) && (a->ksymbol || a->bpf_event)) {
			a->ksymbol = a->bpf_event = 0; /* before Linux 5.1 */
			R->no_ksymbol = 1;
			continue;
		}
		if ((err == EINVAL || err == E2BIG) && a->build_id) {
			a->build_id = 0; /* before 5.12: read build-ids from the files */
			continue;
		}
		if (err == EINVAL && e == 0 && R->per_thread_read && (a->sample_type & PERF_SAMPLE_READ)) {
			/* before Linux 6.12: per-thread counts with swapped contexts */
			a->sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
			R->per_thread_read = 0;
			R->no_per_thread_read = 1;
			if (R->o.repeat)
				notice("%s: this kernel (before 6.12) swaps the events of tasks at context switches: "
				       "the runs after the first may go unrecorded", R->evname[e]);
			else
				notice("%s: this kernel (before 6.12) swaps the events of threads at context switches: "
				       "the counts per thread may be approximate", R->evname[e]);
			continue;
		}
		if (err == EINVAL && a->inherit && (a->sample_type & PERF_SAMPLE_READ)) {
			/* before Linux 6.12 sample-read events cannot be inherited */
			a->inherit = 0;
			R->no_inherit_read = 1;
			notice("%s: this kernel cannot follow new threads with sample-read (:S): "
			       "recording the started ones only", R->evname[e]);
			continue;
		}
		if ((err == EINVAL || err == E2BIG) && a->use_clockid) {
			a->use_clockid = 0; /* before 4.1: perf's own clock */
			a->clockid = 0;
			continue;
		}
		/* only the default event falls back: an explicit -e cycles fails
		 * (open_error() suggests -e cpu-clock), as perf record does */
		if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV) && R->o.default_event &&
		    a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_CPU_CYCLES) {
			snprintf(R->fallback, sizeof(R->fallback), "%.63s->cpu-clock: %.63s not supported",
				 R->evname[e], R->evname[e]);
			notice("%s not supported here: sampling cpu-clock instead", R->evname[e]);
			a->type = PERF_TYPE_SOFTWARE;
			a->config = PERF_COUNT_SW_CPU_CLOCK;
			snprintf(R->evname[e], sizeof(R->evname[e]), "cpu-clock");
			continue;
		}
		if ((err == EACCES || err == EPERM) && !a->exclude_kernel && !(R->o.evs.ev[e].mods & PMU_MOD_KERNEL) &&
		    pid != -1) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
			a->ksymbol = a->bpf_event = 0;
			R->forced_user_only = 1;
			notice("kernel samples not allowed (/proc/sys/kernel/perf_event_paranoid is %d): "
			       "recording user space only", pfrec_paranoid());
			continue;
		}
		return -err;
	}
}

static int add_fd(struct rec *R, int fd, int e)
{
	if (pft_grow((void **)&R->fds, &R->capfds, (size_t)R->nfds + 1, sizeof(*R->fds), 16) < 0)
		return -ENOMEM;
	R->fds[R->nfds].fd = fd;
	R->fds[R->nfds].ev = e;
	R->nfds++;
	uint64_t id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		uint64_t v[2];
		if (read(fd, v, sizeof(v)) == (ssize_t)sizeof(v))
			id = v[1];
	}
	uint64_t *ni = realloc(R->ids[e], (R->nids[e] + 1) * sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	R->ids[e] = ni;
	ni[R->nids[e]++] = id;
	return 0;
}

static void raise_nofile(size_t need)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need + 64 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void mlock_error(struct rec *R, int err)
{
	char kb[32] = "?";
	pfrec_read_line("/proc/sys/kernel/perf_event_mlock_kb", kb, sizeof(kb));
	/* the kernel's perf_mmap(): EPERM over the locked-memory limit, ENOMEM
	 * when the buffer itself could not be had */
	if (err == EPERM) {
		struct rlimit rl;
		char lim[48] = "unlimited";
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
		errmsg("cannot map ring buffers of %u pages per CPU: locked-memory limit "
		       "(/proc/sys/kernel/perf_event_mlock_kb is %s per CPU, ulimit -l is %s): "
		       "use a smaller -m or raise perf_event_mlock_kb",
		       R->o.pages, kb, lim);
	} else if (err == ENOMEM) {
		errmsg("cannot map ring buffers of %u pages per CPU (%llu KiB each): %s: use a smaller -m",
		       R->o.pages, (unsigned long long)R->o.pages * (unsigned long long)sysconf(_SC_PAGESIZE) / 1024,
		       strerror(err));
	} else {
		errmsg("cannot map ring buffers of %u pages per CPU: %s", R->o.pages, strerror(err));
	}
}

/* Opens every event on every task and CPU; the first fd of each CPU owns
 * that CPU's ring, the others write into it. @return 0 or -1 (reported). */
int open_events(struct rec *R)
{
	raise_nofile((size_t)R->o.nev * (size_t)R->ntasks * (size_t)R->ncpus);
	R->rings = calloc((size_t)R->ncpus, sizeof(*R->rings));
	if (!R->rings)
		return -1;
	for (int e = 0; e < R->o.nev; e++) {
		attr_init(R, e);
		if (e > 0) { /* the same clock as the first, and its forced privilege level */
			R->pa[e].attr.use_clockid = R->pa[0].attr.use_clockid;
			R->pa[e].attr.clockid = R->pa[0].attr.clockid;
			if (R->forced_user_only) {
				R->pa[e].attr.exclude_kernel = 1;
				R->pa[e].attr.exclude_hv = 1;
			}
		}
		int first = 1, leader = R->o.evs.ev[e].leader;
		R->slot_fd[e] = malloc((size_t)R->ntasks * (size_t)R->ncpus * sizeof(int));
		if (!R->slot_fd[e]) {
			errmsg("out of memory");
			return -1;
		}
		for (int i = 0; i < R->ntasks * R->ncpus; i++)
			R->slot_fd[e][i] = -1;
		for (int t = 0; t < R->ntasks; t++) {
			pid_t pid = R->tasks[t];
			int opened_on_task = 0;
			for (int c = 0; c < R->ncpus; c++) {
				int cpu = R->cpus[c];
				int fd, group_fd = -1;
				if (leader != e) {
					/* a group member opens beside its leader's fd of this
					 * task and CPU (none: that thread had ended) */
					group_fd = R->slot_fd[leader][t * R->ncpus + c];
					if (group_fd < 0)
						continue;
				}
				if (first) {
					fd = open_first(R, e, pid, cpu, group_fd);
				} else {
					fd = pfrec_perf_event_open(&R->pa[e].attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
					if (fd < 0)
						fd = -errno;
				}
				if (fd == -ESRCH && R->o.npids && !opened_on_task && t > 0) {
					/* a thread of a -p process ended since we listed it */
					break;
				}
				if (fd < 0) {
					open_error(R, -fd, e, pid, cpu);
					return -1;
				}
				const char *flt = R->o.evs.ev[e].filter;
				if (flt && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, flt) < 0) {
					int err = errno;
					close(fd);
					errmsg("--filter '%s': refused by the kernel for %s (%s): see the fields of "
					       "pfrec --list %s and its format file", flt, R->evname[e], strerror(err),
					       R->o.evs.ev[e].spec);
					return -1;
				}
				first = 0;
				opened_on_task = 1;
				R->slot_fd[e][t * R->ncpus + c] = fd;
				if (add_fd(R, fd, e) < 0) {
					close(fd);
					errmsg("out of memory");
					return -1;
				}
				struct pfrec_ring *rg = &R->rings[c];
				if (!rg->base) {
					int rc = pfrec_ring_map(rg, fd, cpu, R->o.pages);
					if (rc < 0) {
						mlock_error(R, -rc);
						return -1;
					}
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) < 0) {
					errmsg("%s: cannot share the ring buffer of CPU %d: %s", R->evname[e], cpu,
					       strerror(errno));
					return -1;
				}
			}
		}
		if (R->o.evs.ev[e].flags & PMU_EV_PRECISE_UNCHECKED)
			notice("-e %s: PMU %s publishes no caps/max_precise: precise level %u was left to the kernel, "
			       "which accepted it (a PMU without a precise mode ignores it)", R->o.evs.ev[e].spec,
			       R->o.evs.ev[e].pmu, (unsigned)R->pa[e].attr.precise_ip);
		verbose("opened %s (%s clock, %s) on %d task(s) x %d CPU(s)", R->evname[e],
			R->pa[e].attr.use_clockid ? "monotonic" : "perf", R->pa[e].attr.exclude_kernel ? "user only" : "user+kernel",
			R->ntasks, R->ncpus);
	}
	R->clock_id = R->pa[0].attr.use_clockid ? (int)R->pa[0].attr.clockid : -1;
	R->kernel_build_ids = R->pa[0].attr.build_id;
	return 0;
}

void enable_all(struct rec *R, int on)
{
	for (int i = 0; i < R->nfds; i++)
		ioctl(R->fds[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}
