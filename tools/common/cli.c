/*
 * tools/common/cli.c - the command-line manners of every tool (cli.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include <pfile/pfile.h>

/* The end of --help or --version: their text out, or one line naming the
 * fault (a full disk, a closed pipe) and exit status 1. */
static int std_out_done(const char *prog)
{
	int e = pf_out_flush(stdout);
	if (!e)
		return PF_EXIT_OK;
	pf_out_error(prog, "-", e);
	return PF_EXIT_ERROR;
}

int pf_cli_version(const char *prog)
{
	printf("%s (pftools) %s\n", prog, pf_version());
	return std_out_done(prog);
}

int pf_cli_try_help(const char *prog)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return PF_EXIT_USAGE;
}

static void usage_line(const char *prog, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s: %s\n", prog, buf);
}

int pf_cli_usage(const char *prog, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_line(prog, fmt, ap);
	va_end(ap);
	return pf_cli_try_help(prog);
}

int pf_cli_std_opt(const char *prog, int c, void (*usage)(FILE *out))
{
	if (c == 'h') {
		usage(stdout);
		return std_out_done(prog);
	}
	if (c == 'V')
		return pf_cli_version(prog);
	return pf_cli_try_help(prog);
}

int pf_cli_one_input(const char *prog, int argc, char **argv, int optind, const char **in)
{
	if (optind < argc)
		*in = argv[optind++];
	if (optind < argc)
		return pf_cli_usage(prog, "unexpected argument '%s'", argv[optind]);
	return 0;
}

int pf_cli_choice(const char *arg, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

int pf_cli_pick(const char *prog, const char *opt, const char *arg, const char *const *names)
{
	int i = pf_cli_choice(arg, names);
	if (i >= 0)
		return i;
	size_t n = 0;
	while (names[n])
		n++;
	fprintf(stderr, "%s: %s: expected ", prog, opt);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
	fprintf(stderr, ", not '%s'\n", arg);
	return -1;
}

void pf_cli_usage_exit(const char *prog, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_line(prog, fmt, ap);
	va_end(ap);
	exit(pf_cli_try_help(prog));
}

FILE *pf_cli_open_in(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	struct stat st;
	if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		if (f != stdin)
			fclose(f);
		errno = EISDIR;
		return NULL;
	}
	return f;
}

int pf_tmpfile(const char *prefix, const char **dir)
{
	const char *d = getenv("TMPDIR");
	if (!d || !*d)
		d = "/tmp";
	*dir = d;
	int fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char path[4096];
	int n = snprintf(path, sizeof path, "%s/%s-XXXXXX", d, prefix);
	if (n < 0 || (size_t)n >= sizeof path)
		return -ENAMETOOLONG;
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		return -errno;
	unlink(path);
	return fd;
}

void pf_cli_lib_error(const char *prog, const char *msg, const char *name, int rc)
{
	if (msg && *msg)
		fprintf(stderr, "%s: %s\n", prog, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, name, strerror(-rc));
}

void pf_out_ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

void pf_out_error(const char *prog, const char *name, int err)
{
	if (!name || !strcmp(name, "-"))
		name = "<stdout>";
	if (err == EPIPE)
		fprintf(stderr, "%s: %s: %s (the reader closed the pipe before the end of the output)\n", prog, name,
			strerror(err));
	else
		fprintf(stderr, "%s: %s: %s\n", prog, name, strerror(err));
}

int pf_out_flush(FILE *f)
{
	/* a write that failed before (stdio drops what it could not write,
	 * so flushing again finds nothing to write): its errno, when it is
	 * one that only a write gives and nothing has changed it since */
	int before = errno;
	errno = 0;
	if (fflush(f) != 0)
		return errno ? errno : EIO;
	if (!ferror(f))
		return 0;
	struct pollfd p = { fileno(f), POLLOUT, 0 };
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		return EPIPE;
	if (before == ENOSPC || before == EDQUOT || before == EFBIG || before == EPIPE)
		return before;
	return EIO;
}

int pf_out_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int pf_out_create_recording(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	/* an existing file keeps its mode through O_TRUNC */
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) && fchmod(fd, st.st_mode & 07700) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}
