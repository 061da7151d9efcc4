/*
 * fold_lines.c - the folding engine's top source lines (fold.h:
 * PF_FOLD_BY_LINE, pf_fold_top_lines()): weights summed per leaf frame as
 * samples are folded, merged per (file, line, function) when asked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/fold.h"

#define NONE PF_PROF_NONE

int pfi_fold_line_add(pf_fold *f, uint32_t stack, uint64_t w)
{
	if (stack == NONE || stack >= f->prof.n_stacks)
		return 0;
	uint32_t fr = f->prof.stacks[stack].frame;
	if (fr >= f->line_w_cap) {
		uint32_t cap = f->line_w_cap ? f->line_w_cap : 1024;
		while (cap <= fr)
			cap *= 2;
		uint64_t *n = realloc(f->line_w, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + f->line_w_cap, 0, (size_t)(cap - f->line_w_cap) * sizeof(*n));
		f->line_w = n;
		f->line_w_cap = cap;
	}
	uint64_t s = f->line_w[fr] + w;
	f->line_w[fr] = s < f->line_w[fr] || s > W_MAX ? W_MAX : s;
	return 0;
}

struct lkey {
	uint32_t file, line, func; /* string ids of f->prof (NONE: none) */
	uint32_t kernel;           /* a kernel frame */
	uint64_t w;
};

static const char *str_or(const struct pf_prof *p, uint32_t id)
{
	return id == NONE ? NULL : pf_prof_str_get(p, id, NULL);
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b ? 0 : !a ? 1 : -1; /* NULL last */
	return strcmp(a, b);
}

/* by file, line, function: the merge order */
static int key_cmp(const void *a, const void *b, void *arg)
{
	const struct pf_prof *p = arg;
	const struct lkey *x = a, *y = b;
	int c = cmp_str(str_or(p, x->file), str_or(p, y->file));
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->kernel != y->kernel)
		return x->kernel < y->kernel ? -1 : 1;
	return cmp_str(str_or(p, x->func), str_or(p, y->func));
}

/* by decreasing weight, then as key_cmp */
static int w_cmp(const void *a, const void *b, void *arg)
{
	const struct lkey *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return key_cmp(a, b, arg);
}

/* The function of frame fr as the folded stacks name it: its name, or
 * for a user frame no symbol names its module's base name in brackets
 * ("[libgcc_s.so.1]", "[vdso]"), interned in f->prof; NONE when neither. */
static uint32_t unnamed_as_module(pf_fold *f, const struct pf_prof_frame *fr)
{
	if (fr->name != NONE || (fr->flags & PF_FRAME_KERNEL) || fr->dso == NONE)
		return fr->name;
	size_t dl = 0;
	const char *d = pf_prof_str_get(&f->prof, fr->dso, &dl);
	if (!d)
		return NONE;
	const char *bn = memrchr(d, '/', dl);
	bn = bn ? bn + 1 : d;
	size_t bl = dl - (size_t)(bn - d);
	if (bl >= 2 && bn[0] == '[' && bn[bl - 1] == ']') { /* "[vdso]" */
		bn++;
		bl -= 2;
	}
	char buf[512];
	if (bl > sizeof(buf) - 3)
		bl = sizeof(buf) - 3;
	buf[0] = '[';
	memcpy(buf + 1, bn, bl);
	buf[bl + 1] = ']';
	int64_t id = pf_prof_str(&f->prof, buf, bl + 2);
	return id < 0 ? NONE : (uint32_t)id;
}

size_t pf_fold_top_lines(pf_fold *f, struct pf_fold_top_line *out, size_t n)
{
	size_t k = 0;
	for (uint32_t i = 0; i < f->line_w_cap; i++)
		k += f->line_w[i] != 0;
	if (!k || !n)
		return 0;
	struct lkey *v = malloc(k * sizeof(*v));
	if (!v)
		return 0;
	k = 0;
	for (uint32_t i = 0; i < f->line_w_cap; i++) {
		if (!f->line_w[i] || i >= f->prof.n_frames)
			continue;
		const struct pf_prof_frame *fr = &f->prof.frames[i];
		v[k++] = (struct lkey){ fr->line ? fr->src_file : NONE, fr->line, unnamed_as_module(f, fr),
					(fr->flags & PF_FRAME_KERNEL) != 0, f->line_w[i] };
	}
	qsort_r(v, k, sizeof(*v), key_cmp, &f->prof);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && key_cmp(&v[m - 1], &v[i], &f->prof) == 0) {
			uint64_t s = v[m - 1].w + v[i].w;
			v[m - 1].w = s < v[i].w || s > W_MAX ? W_MAX : s;
		} else {
			v[m++] = v[i];
		}
	}
	qsort_r(v, m, sizeof(*v), w_cmp, &f->prof);
	size_t filled = m < n ? m : n;
	for (size_t i = 0; i < filled; i++)
		out[i] = (struct pf_fold_top_line){ str_or(&f->prof, v[i].file), v[i].line,
						   v[i].func == NONE && v[i].kernel ? "[kernel]" : str_or(&f->prof, v[i].func),
						   v[i].w };
	free(v);
	return filled;
}
