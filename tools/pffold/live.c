/*
 * live.c - pffold --every: the input is copied into a memory file as it
 * arrives and folded again at each redraw, a `perf top` made of the same
 * stages as the rest (pfrec -o - | pfsym | pffold --top=20 --every=2).
 * Each redraw reads what has arrived from its start: simple and exact (a
 * partial last section is left out), at the cost of memory for the whole
 * stream and of folding it again (pffold folds millions of samples a
 * second).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pffold/live.h"
#include "cli.h"

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int live_follow(const char *prog, const char *in, unsigned period_ms, FILE *of, char *path, size_t pathsz,
		live_redraw_fn redraw, void *arg)
{
	int ifd = strcmp(in, "-") == 0 ? STDIN_FILENO : open(in, O_RDONLY | O_CLOEXEC);
	if (ifd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, in, strerror(errno));
		return -1;
	}
	int mfd = memfd_create("pffold-live", MFD_CLOEXEC);
	if (mfd < 0) {
		fprintf(stderr, "%s: %s: no memory file to keep the stream in: %s\n", prog, in, strerror(errno));
		if (ifd != STDIN_FILENO)
			close(ifd);
		return -1;
	}
	snprintf(path, pathsz, "/proc/self/fd/%d", mfd);
	int tty = isatty(fileno(of));
	uint64_t t0 = now_ms(), next = t0 + period_ms;
	size_t since = 0; /* bytes arrived since the last redraw */
	static char buf[1 << 16];
	int rc = 0;
	for (;;) {
		uint64_t t = now_ms();
		if (t >= next) {
			if (since) {
				if (tty)
					fputs("\033[H\033[2J", of);
				else
					fprintf(of, "# pffold: at %.1f s\n", (double)(t - t0) / 1000.0);
				redraw(arg, path, of);
				fflush(of);
				since = 0;
			}
			next = t + period_ms;
			continue;
		}
		struct pollfd p = { ifd, POLLIN, 0 };
		int n = poll(&p, 1, (int)(next - t));
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (n <= 0)
			continue;
		ssize_t r = read(ifd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		if (r == 0)
			break;
		if ((rc = pf_out_write_all(mfd, buf, (size_t)r)) < 0) {
			fprintf(stderr, "%s: %s: keeping the stream in memory: %s\n", prog, in, strerror(-rc));
			rc = 0;
			close(mfd);
			mfd = -1;
			break;
		}
		since += (size_t)r;
	}
	if (rc < 0)
		fprintf(stderr, "%s: %s: %s\n", prog, in, strerror(-rc));
	if (ifd != STDIN_FILENO)
		close(ifd);
	if (tty && mfd >= 0)
		fputs("\033[H\033[2J", of);
	else if (mfd >= 0)
		fprintf(of, "# pffold: at the end of the input, %.1f s\n", (double)(now_ms() - t0) / 1000.0);
	/* a read error ends the stream: what arrived is still drawn */
	return mfd;
}
