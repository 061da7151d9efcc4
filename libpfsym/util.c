/* util.c - small helpers shared by libpfsym's files: array growth, lists of
 * places tried, frame naming. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef PF_DW_DLOPEN
#include <dlfcn.h>
#endif

#include "internal/pfsym.h"
#include "text.h"

#ifdef PF_DW_DLOPEN
static void *dw_dlopen(const char **lib, const char *fault, const char *without)
{
	/* PFSYM_LIBDW: another file (tests; a libdw outside the search path) */
	*lib = getenv("PFSYM_LIBDW");
	if (!*lib || !**lib)
		*lib = "libdw.so.1";
	void *h = dlopen(*lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fprintf(stderr, "pfsym: %s (%s): %s\n", fault, dlerror(), without);
	return h;
}

static void *dw_dlsym(void *h, const char *lib, const char *name, const char *without)
{
	void *f = dlsym(h, name);
	if (!f)
		fprintf(stderr, "pfsym: %s: no %s: %s\n", lib, name, without);
	return f;
}

/* dlsym()'s object pointer is stored in a function pointer (POSIX: the same
 * representation) */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers as wide as void *");

int pfsi_dw_load(int *state, const char *fault, const char *without, const struct pfsi_dw_sym *syms, size_t n)
{
	if (*state)
		return *state > 0;
	*state = -1;
	const char *lib;
	void *h = dw_dlopen(&lib, fault, without);
	if (!h)
		return 0;
	for (size_t i = 0; i < n; i++) {
		void *f = dw_dlsym(h, lib, syms[i].name, without);
		if (!f)
			return 0;
		memcpy(syms[i].slot, &f, sizeof(f));
	}
	*state = 1;
	return 1;
}
#endif

int pfsi_grow(void **arr, size_t *cap, size_t elem, size_t first)
{
	size_t c = *cap ? *cap * 2 : first;
	if (c > SIZE_MAX / elem)
		return -ENOMEM;
	void *n = realloc(*arr, c * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = c;
	return 0;
}

void pfsi_note(struct pf_buf *list, const char *what, const char *why)
{
	if (list->len)
		pf_buf_put(list, ", ", 2);
	pf_buf_put(list, what, strlen(what));
	pf_buf_put(list, " (", 2);
	pf_buf_put(list, why, strlen(why));
	pf_buf_put(list, ")", 2); /* with NUL */
	list->len--;
}

void pfsi_frame_name(struct pf_prof_frame *f, uint32_t name, uint64_t off)
{
	f->name = name;
	if (off <= UINT32_MAX) {
		f->sym_off = (uint32_t)off;
		f->flags |= PF_FRAME_HAS_SYMOFF;
	}
}

size_t pfsi_name_len(struct symbolizer *s, const char *name, const char *file, int *cut)
{
	size_t max = s && s->o.max_name ? s->o.max_name : PFSI_MAX_NAME_DEFAULT;
	size_t n = strnlen(name, max + 1);
	*cut = n > max;
	if (!*cut)
		return n;
	if (s && !s->names_cut++)
		snprintf(s->name_cut_file, sizeof(s->name_cut_file), "%s", file ? file : "?");
	return max;
}

int64_t pfsi_name_str(struct pf_prof *p, const char *name, size_t len, int cut)
{
	if (!cut)
		return pf_prof_str(p, name, len);
	char *t = malloc(len + 6);
	if (!t)
		return -ENOMEM;
	memcpy(t, name, len);
	memcpy(t + len, "[cut]", 6);
	int64_t id = pf_prof_str(p, t, len + 5);
	free(t);
	return id;
}

void pfsi_bounds_report(const struct symbolizer *s, FILE *out, const char *prog)
{
	if (s->names_cut)
		pfsi_report_line(out,
			"%s: names over %u bytes (functions, source files): %llu, cut there and marked [cut] "
			"(the first in %s; --max-name raises the bound)",
			prog, s->o.max_name ? s->o.max_name : PFSI_MAX_NAME_DEFAULT, (unsigned long long)s->names_cut,
			s->name_cut_file);
	if (s->inline_cut)
		pfsi_report_line(out, "%s: inline chains of %llu addresses cut to %u frames, the deepest dropped "
			"(--max-inline raises the bound, up to %u)",
			prog, (unsigned long long)s->inline_cut,
			s->o.max_inline ? s->o.max_inline : PFSI_MAX_INLINE_DEFAULT, PFSI_MAX_INLINE_MAX);
	if (s->dw_refused)
		pfsi_report_line(out, "%s: compressed DWARF sections refused: %llu, no inline frames or source lines from "
			"them: %s (more than %u times its compressed size, or 4 GiB)",
			prog, (unsigned long long)s->dw_refused, s->dw_refused_what, PFSI_DW_MAX_RATIO);
}

void pfsi_report_line(FILE *out, const char *fmt, ...)
{
	char small[512], *line = small;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(small) && (line = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(line, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	pf_text_write(out, line ? line : small); /* out of memory: the line cut */
	fputc('\n', out);
	if (line != small)
		free(line);
}
