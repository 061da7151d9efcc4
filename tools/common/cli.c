/*
 * tools/common/cli.c - the command-line manners of every tool (cli.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include <pfile/pfile.h>

int pf_cli_version(const char *prog)
{
	printf("%s (pftools) %s\n", prog, pf_version());
	return PF_EXIT_OK;
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
		return PF_EXIT_OK;
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

void pf_cli_usage_exit(const char *prog, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_line(prog, fmt, ap);
	va_end(ap);
	exit(pf_cli_try_help(prog));
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
	errno = 0;
	if (fflush(f) != 0)
		return errno ? errno : EIO;
	if (!ferror(f))
		return 0;
	struct pollfd p = { fileno(f), POLLOUT, 0 };
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		return EPIPE;
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
