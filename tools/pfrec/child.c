/*
 * child.c - pfrec's targets (tasks of -p/-t, existing threads) and the
 * command it runs: start, release, reap, end.
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

/* ------------------------------------------------------------------ */
/* targets                                                              */

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int add_task(struct rec *R, pid_t t)
{
	pid_t *n = realloc(R->tasks, (size_t)(R->ntasks + 1) * sizeof(*n));
	if (!n)
		return -1;
	R->tasks = n;
	R->tasks[R->ntasks++] = t;
	return 0;
}

/* The process (Tgid of /proc/TID/status) of each task, for --per-thread. */
int task_pids(struct rec *R)
{
	R->task_pid = calloc((size_t)R->ntasks, sizeof(*R->task_pid));
	if (!R->task_pid) {
		errmsg("out of memory");
		return -1;
	}
	for (int t = 0; t < R->ntasks; t++) {
		char path[64], *text = NULL, *p;
		size_t len;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)R->tasks[t]);
		if (pfrec_read_file(path, 1 << 16, &text, &len) == 0 && (p = strstr(text, "\nTgid:")))
			R->task_pid[t] = (uint32_t)strtoul(p + 6, NULL, 10);
		free(text);
	}
	return 0;
}

/* The threads of process `pid` into R->tasks. @return 0 or -errno. */
int list_threads(struct rec *R, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	/* the main thread first: it must exist */
	add_task(R, pid);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		pid_t t = (pid_t)atoi(de->d_name);
		if (t != pid)
			add_task(R, t);
	}
	closedir(d);
	return 0;
}

/* THREADS entries of one process. */
static void threads_of(struct pf_buf *b, uint32_t pid)
{
	char path[96], comm[64];
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.20s/comm", pid, de->d_name);
		if (pfrec_read_line(path, comm, sizeof(comm)) < 0)
			continue;
		pf_thread_encode(b, pid, (uint32_t)atoi(de->d_name), comm);
	}
	closedir(d);
}

/* The process (thread group) of a thread id, or 0. */
static uint32_t tgid_of(pid_t tid)
{
	char path[64], *txt;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (pfrec_read_file(path, 1 << 16, &txt, &len) < 0)
		return 0;
	uint32_t tg = 0;
	char *p = strstr(txt, "\nTgid:");
	if (p)
		tg = (uint32_t)strtoul(p + 6, NULL, 10);
	free(txt);
	return tg;
}

/* State of existing processes: THREADS, then MAPS (+ BUILDID) per process. */
void snapshot_existing(struct rec *R)
{
	uint32_t *pids = NULL;
	size_t n = 0;
	if (R->o.all_cpus) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!is_number(de->d_name))
				continue;
			uint32_t *np = realloc(pids, (n + 1) * sizeof(*np));
			if (!np)
				break;
			pids = np;
			pids[n++] = (uint32_t)atoi(de->d_name);
		}
		if (d)
			closedir(d);
	} else {
		for (int i = 0; i < R->o.npids + R->o.ntids; i++) {
			uint32_t p = i < R->o.npids ? (uint32_t)R->o.pids[i] : tgid_of(R->o.tids[i - R->o.npids]);
			if (!p)
				continue;
			uint32_t *np = realloc(pids, (n + 1) * sizeof(*np));
			if (!np)
				break;
			pids = np;
			pids[n++] = p;
		}
	}
	struct pf_buf th = {0};
	for (size_t i = 0; i < n; i++)
		if (pf_keyset_add(&R->known, pids[i]) == 1) {
			note_owner(R, pids[i]);
			threads_of(&th, pids[i]);
		}
	if (th.len)
		put_section(R, PF_SEC_THREADS, &th);
	pf_buf_free(&th);
	uint64_t now = perf_now(R, 0);
	for (size_t i = 0; i < n; i++) {
		snapshot_maps(R, pids[i], now);
		/* keep memory bounded on big machines */
		if (R->npend >= 64)
			flush_pending(R);
	}
	flush_pending(R);
	verbose("captured the state of %zu existing process(es)", n);
	free(pids);
}

/* ------------------------------------------------------------------ */
/* the command                                                          */

/* read(2) once, retried while a signal interrupts it. */
static ssize_t read_retry(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* In a child of `parent`: dies (SIGKILL) when its parent does; exits 127 if
 * that parent is already gone (getppid() changed before this took effect). */
static void die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
}

/* Execs the command; if that fails, writes its errno on err_fd, exits 127. */
static _Noreturn void exec_command(struct rec *R, int err_fd)
{
	execvp(R->o.cmd_argv[0], R->o.cmd_argv);
	int e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* --repeat: the child runs the command o.repeat times, one after the other,
 * each as its own child (the grandchildren), and never execs itself. The
 * events pfrec opened on it (enable_on_exec, inherit) stay off in it and are
 * inherited off by each run, which turns them on when it execs: only the
 * runs are sampled. After each run it writes {run, status} (two int32) on
 * run_fd, and before starting the next it waits for pfrec's byte on ack_fd
 * (pfrec has then written the run's records and the next RUN section). It
 * tells the first run's exec error as the child of a single run does (on
 * err_fd), and exits as the first run that failed did (by its signal, or its
 * exit status), else 0. */
static void run_repeated(struct rec *R, int err_fd, int run_fd, int ack_fd)
{
	int fail = 0, have_fail = 0;
	for (int k = 1; k <= R->o.repeat; k++) {
		if (k > 1) {
			char c;
			if (read_retry(ack_fd, &c, 1) != 1)
				break; /* pfrec stopped the recording */
		}
		int ex[2];
		if (pipe2(ex, O_CLOEXEC) < 0)
			_exit(127);
		pid_t runner = getpid();
		pid_t pid = fork();
		if (pid < 0)
			_exit(127);
		if (pid == 0) {
			/* the runner's end (pfrec's --duration, a signal) ends the run too */
			die_with_parent(runner);
			exec_command(R, ex[1]);
		}
		close(ex[1]);
		int e = 0;
		ssize_t r = read_retry(ex[0], &e, sizeof(e));
		close(ex[0]);
		int exec_failed = r == (ssize_t)sizeof(e);
		if (k == 1) {
			if (exec_failed && write(err_fd, &e, sizeof(e)) < 0)
				_exit(127);
			close(err_fd);
		}
		int st;
		pid_t w;
		do
			w = waitpid(pid, &st, 0);
		while (w < 0 && errno == EINTR);
		if (k == 1 && exec_failed)
			_exit(127);
		int32_t msg[2] = { k, exit_code_of(st) };
		if (!have_fail && msg[1] != 0) {
			have_fail = 1;
			fail = st;
		}
		if (write(run_fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
			break;
	}
	close(run_fd);
	if (have_fail && WIFSIGNALED(fail)) {
		signal(WTERMSIG(fail), SIG_DFL);
		raise(WTERMSIG(fail));
	}
	_exit(have_fail ? exit_code_of(fail) : 0);
}

int start_command(struct rec *R, int stdout_is_output)
{
	int go[2], err[2], run[2] = {-1, -1}, ack[2] = {-1, -1};
	if (R->o.repeat && (pipe2(run, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0)) {
		errmsg("pipe: %s%s", strerror(errno), errno == EMFILE ? ": raise the limit with `ulimit -n`" : "");
		return -1;
	}
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		errmsg("pipe: %s%s", strerror(errno), errno == EMFILE ? ": raise the limit with `ulimit -n`" : "");
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		errmsg("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* pfrec killed (even by SIGKILL) kills the command too, not its
		 * children; if pfrec died before this took effect, getppid() has
		 * already changed */
		die_with_parent(parent);
		close(go[1]);
		close(err[0]);
		sigprocmask(SIG_SETMASK, &R->oldmask, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (stdout_is_output)
			dup2(2, 1); /* the recording owns stdout: the command's output goes to stderr */
		char c;
		if (read_retry(go[0], &c, 1) != 1)
			_exit(127); /* pfrec gave up before starting us */
		if (R->o.repeat) {
			close(run[0]);
			close(ack[1]);
			run_repeated(R, err[1], run[1], ack[0]);
		}
		exec_command(R, err[1]);
	}
	close(go[0]);
	close(err[1]);
	if (R->o.repeat) {
		close(run[1]);
		close(ack[0]);
		fcntl(run[0], F_SETFL, O_NONBLOCK);
		R->run_fd = run[0];
		R->ack_fd = ack[1];
	}
	R->child = pid;
	R->go_fd = go[1];
	R->err_fd = err[0];
	return 0;
}

/* Finds COMMAND as execvp(3) would, before anything is opened or renamed,
 * so that a mistyped command leaves an existing recording alone.
 * @return 0, or the errno execvp would fail with (ENOENT, EACCES). */
int check_command(const char *cmd)
{
	struct stat st;
	if (strchr(cmd, '/')) {
		if (stat(cmd, &st) < 0)
			return errno;
		if (S_ISDIR(st.st_mode) || access(cmd, X_OK) < 0)
			return EACCES;
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	int err = ENOENT;
	for (const char *p = path;; p++) {
		const char *e = strchrnul(p, ':');
		char full[PATH_MAX];
		int n = e == p ? snprintf(full, sizeof(full), "%s", cmd)
			       : snprintf(full, sizeof(full), "%.*s/%s", (int)(e - p), p, cmd);
		if (n > 0 && (size_t)n < sizeof(full) && stat(full, &st) == 0) {
			if (!S_ISDIR(st.st_mode) && access(full, X_OK) == 0)
				return 0;
			err = EACCES;
		}
		if (!*e)
			break;
		p = e;
	}
	return err;
}

/* Lets the stopped child exec. @return 0, or the exec errno. */
int release_command(struct rec *R)
{
	ssize_t r;
	do
		r = write(R->go_fd, "g", 1);
	while (r < 0 && errno == EINTR);
	close(R->go_fd);
	R->go_fd = -1;
	int e = 0;
	r = read_retry(R->err_fd, &e, sizeof(e));
	close(R->err_fd);
	R->err_fd = -1;
	return r == (ssize_t)sizeof(e) ? (e ? e : ENOEXEC) : 0;
}

void reap_child(struct rec *R, int block)
{
	if (R->child <= 0 || R->child_reaped)
		return;
	int st;
	pid_t r;
	/* once it has exited, and before it is reaped (its /proc/PID goes
	 * then): its owner, whose JIT map is its own (perfmap.c) */
	siginfo_t si;
	si.si_pid = 0;
	if (waitid(P_PID, (id_t)R->child, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) == 0 && si.si_pid)
		note_owner(R, (uint32_t)R->child);
	do
		r = waitpid(R->child, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == R->child) {
		R->child_reaped = 1;
		R->child_status = st;
	}
}

/* Sends `sig` to the command; if it lives on (it may ignore the signal),
 * SIGTERM after 0.5 s, then SIGKILL after 2 s more. */
void end_child(struct rec *R, int sig)
{
	static const struct { int sig; int wait_ms; } steps[3] = {{0, 500}, {SIGTERM, 2000}, {SIGKILL, -1}};
	for (int s = 0; s < 3 && !R->child_reaped; s++) {
		kill(R->child, s == 0 ? sig : steps[s].sig);
		if (steps[s].wait_ms < 0) {
			reap_child(R, 1);
			break;
		}
		for (int ms = 0; ms < steps[s].wait_ms && !R->child_reaped; ms += 10) {
			reap_child(R, 0);
			if (!R->child_reaped)
				usleep(10000);
		}
	}
}

int exit_code_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}
