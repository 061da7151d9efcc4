/* testutil.c - helpers shared by the test programs (testutil.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

_Noreturn void tu_die(const char *what)
{
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, what);
	exit(1);
}

char *tu_slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	char *b = malloc(cap);
	if (!b)
		tu_die("out of memory");
	while ((got = fread(b + n, 1, cap - 1 - n, f)) > 0) {
		n += got;
		if (n == cap - 1) {
			char *g = realloc(b, cap *= 2);
			if (!g)
				tu_die("out of memory");
			b = g;
		}
	}
	if (ferror(f))
		tu_die("cannot read its input");
	b[n] = 0;
	*len = n;
	return b;
}

void tu_put(struct pf_buf *b, const void *p, size_t n)
{
	if (pf_buf_put(b, p, n) < 0)
		tu_die("out of memory");
}

uint64_t tu_xorshift(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

int tu_open_out(const char *path)
{
	if (strcmp(path, "-") == 0)
		return STDOUT_FILENO;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

void tu_close_out(int fd)
{
	if (fd != STDOUT_FILENO)
		close(fd);
}

pf_writer *tu_writer(int fd, const struct pf_writer_opts *o)
{
	pf_writer *w;
	int rc = pf_writer_open_fd(&w, fd, o);
	if (rc < 0) {
		fprintf(stderr, "%s: pf_writer_open_fd: %s\n", program_invocation_short_name, strerror(-rc));
		exit(1);
	}
	return w;
}

pf_writer *tu_writer_like(int fd, const struct pf_file_header *fh)
{
	struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
	wo.word_size = fh->word_size;
	wo.e_machine = fh->e_machine;
	wo.records_frame_bytes = 64u << 20;
	return tu_writer(fd, &wo);
}

int tu_next_section(pf_reader *r, struct pf_section *s, int verbose)
{
	int rc;
	while ((rc = pf_reader_next(r, s)) < 0) {
		if (verbose)
			fprintf(stderr, "%s: %s\n", program_invocation_short_name, pf_reader_errmsg(r));
		if (!pf_reader_can_continue(r))
			return 0;
	}
	return rc > 0;
}

int tu_unhex(const char *h, uint8_t *out, size_t max)
{
	size_t n = 0;
	for (; h[0] && h[1] && n < max; h += 2) {
		if (!isxdigit((unsigned char)h[0]) || !isxdigit((unsigned char)h[1]))
			return -1;
		char pair[3] = { h[0], h[1], 0 };
		out[n++] = (uint8_t)strtoul(pair, NULL, 16);
	}
	return (int)n;
}
