/*
 * testutil.h - helpers shared by the test programs of tests/c/ (not
 * installed, linked into each of them by the Makefile's test rules).
 *
 * Errors here are fatal: a test program that cannot allocate, open or write
 * stops with one line "PROGRAM: WHAT" on stderr and exit status 1.
 */
#ifndef PF_TESTUTIL_H
#define PF_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pfile.h"

/* Prints "PROGRAM: what" (PROGRAM: the program's own name) and exits 1. */
_Noreturn void tu_die(const char *what);

/* All of stream f, in a malloc'd buffer (*len bytes; one more byte, 0,
 * after them); tu_die()s when it cannot read f or memory runs out. */
char *tu_slurp(FILE *f, size_t *len);

/* pf_buf_put(), or tu_die() when memory runs out. */
void tu_put(struct pf_buf *b, const void *p, size_t n);

/* The next number of Marsaglia's xorshift64 (shifts 13, 7, 17) from *state,
 * which must not be 0; the sequence depends on the seed alone. */
uint64_t tu_xorshift(uint64_t *state);

/* A file descriptor open for writing PATH (created or truncated, mode 0644),
 * or standard output for "-"; tu_die()s with the path when it cannot. */
int tu_open_out(const char *path);

/* Closes fd unless it is standard output. */
void tu_close_out(int fd);

/* pf_writer_open_fd(), or tu_die() with the reason. */
pf_writer *tu_writer(int fd, const struct pf_writer_opts *o);

/* A writer for a copy of the file whose header is fh: its word size and
 * machine, and records_frame_bytes large enough (64 MiB) that each RECORDS
 * section given to pf_writer_records() and flushed stays one section. */
pf_writer *tu_writer_like(int fd, const struct pf_file_header *fh);

/* pf_reader_next() past damaged sections (said on stderr when verbose) that
 * the reader can continue after: 1 with the next intact section in *s, 0 at
 * the end of the file or after damage the reader cannot go past. */
int tu_next_section(pf_reader *r, struct pf_section *s, int verbose);

/* Bytes from pairs of hexadecimal digits at h, at most max of them, up to
 * the end of the string (a last odd digit is left out): their count, or -1
 * at a pair that is not hexadecimal. */
int tu_unhex(const char *h, uint8_t *out, size_t max);

#endif
