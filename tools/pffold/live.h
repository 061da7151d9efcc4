/*
 * live.h - pffold --every: a view redrawn from a stream as it arrives.
 */
#ifndef PFFOLD_LIVE_H
#define PFFOLD_LIVE_H
#include <stddef.h>
#include <stdio.h>

/* Draws the view of the file at `path` (what has arrived so far) on `of`. */
typedef void (*live_redraw_fn)(void *arg, const char *path, FILE *of);

/* Copies `in` ("-" = standard input) into a memory file until its end and,
 * every `period_ms` while data keeps coming, clears the terminal (or, when
 * `of` is not one, writes a "# pffold: at S s" line) and calls `redraw`
 * with the memory file's path (/proc/self/fd/N). At the end of the input,
 * fills `path` and returns the memory file's descriptor (the caller draws
 * the final view and closes it); -1 after a one-line error naming `in`. */
int live_follow(const char *prog, const char *in, unsigned period_ms, FILE *of, char *path, size_t pathsz,
		live_redraw_fn redraw, void *arg);

#endif /* PFFOLD_LIVE_H */
