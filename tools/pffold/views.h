/*
 * views.h - pffold's perf-report views (views.c): a table sorted by keys,
 * the callers or callees of one function. Built on the folding engine's
 * entries (include/pfile/fold.h).
 */
#ifndef PFFOLD_VIEWS_H
#define PFFOLD_VIEWS_H
#include <stddef.h>
#include <stdio.h>

#include <pfile/fold.h>
#include <pfile/profile.h>

/* perf report's sort keys (--sort) */
enum view_key { K_COMM, K_PID, K_TID, K_DSO, K_SYM, K_CPU, K_EVENT };
#define VIEW_MAX_KEYS 7

struct view_keys {
	enum view_key key[VIEW_MAX_KEYS];
	size_t n;
	unsigned fold_flags; /* PF_FOLD_* the engine needs for these keys */
	int per_frame;       /* a dso or sym key: self by the leaf, total by any frame */
};

struct view_opts {
	size_t top; /* rows printed; 0 = all */
	int period; /* weights are periods (say so with the unit) */
};

/* Parses "comm,dso,sym". @return 0, or -1 with a message in err. */
int view_keys_parse(const char *spec, struct view_keys *k, char *err, size_t errsz);

/* The table: one row per distinct key, total and self shares of the
 * folded weight, largest total first. @return 0 or -ENOMEM. */
int view_sort(const pf_fold *f, const struct view_keys *k, const struct view_opts *vo, FILE *out);

/* The paths that lead into the frames named `name` (callees = 0) or that
 * leave them (callees = 1), from each stack's outermost such frame.
 * @return 0, -ENOENT (no stack holds it) or -ENOMEM. */
int view_calls(const pf_fold *f, const char *name, int callees, const struct view_opts *vo, FILE *out);

#endif /* PFFOLD_VIEWS_H */
