/*
 * outerr.h - how every pftools program reports a failed output (not
 * installed; header-only, included by the tools).
 *
 * The rule (the man pages' EXIT STATUS): SIGPIPE is ignored, so a reader that
 * closes the pipe early (`pfdump run.pf | head`) makes a write fail with
 * EPIPE instead of killing the program (status 141); the program then stops
 * writing, prints one line naming the output and the fault, and exits 1, as
 * for any other write error (ENOSPC, EIO).
 */
#ifndef PF_OUTERR_H
#define PF_OUTERR_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* Called first thing in main(): writes to a closed pipe fail with EPIPE. */
static inline void pf_out_ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

/* The one line for a write error `err` (an errno value) on the output
 * `name` ("-" = standard output, shown as <stdout>). */
static inline void pf_out_error(const char *prog, const char *name, int err)
{
	if (!name || !strcmp(name, "-"))
		name = "<stdout>";
	if (err == EPIPE)
		fprintf(stderr, "%s: %s: %s (the reader closed the pipe before the end of the output)\n", prog, name,
			strerror(err));
	else
		fprintf(stderr, "%s: %s: %s\n", prog, name, strerror(err));
}

/* Flushes a stdio output and tells whether it failed, now or before:
 * @return 0, or the errno value of the failure. stdio keeps only a flag
 * (ferror()) of a write that failed inside an earlier call, not its errno,
 * and drops the buffer it could not write: that case is told apart by
 * poll(2), which reports POLLERR on a pipe whose reader is gone (EPIPE);
 * anything else is EIO. */
static inline int pf_out_flush(FILE *f)
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

#endif
