/*
 * pfsym.h - pfsym internals: the ELF symbolizer (pfsym/elf.c).
 */
#ifndef PFSYM_H
#define PFSYM_H

#include <stdio.h>
#include <libelf.h>
#include "profile.h"

struct pfsym_opts {
	const char *symfs;         /* root of a copy of the recorded machine's files, or NULL */
	const char **debug_dirs;   /* extra debug directories, tried before /usr/lib/debug */
	int n_debug_dirs;
	int force;                 /* use a binary whose build-id differs */
	int no_demangle;           /* keep C++/Rust names as in the symbol table */
};

struct symbolizer;

struct symbolizer *sym_new(const struct pfsym_opts *o);
void sym_free(struct symbolizer *s);

/* Keeps a copy of a DSO_IMAGE (the [vdso] image) to symbolize from. */
int sym_add_image(struct symbolizer *s, const struct pf_dso_image *img);

/* pf_prof_resolve_fn: ctx is the struct symbolizer. */
int sym_resolve(void *ctx, struct pf_prof *p, struct pf_dso *dso, struct pf_prof_frame *f);

/* Opens and indexes the binary of the next DSO of `maps` not yet looked
 * at (files only, in table order), as a lookup would, but without counting
 * it as used: for the main loop's idle time, while the read-ahead thread
 * decodes. @return 1 if one was loaded, 0 if none is left, -ENOMEM. */
int sym_preload_one(struct symbolizer *s, struct pf_maps *maps);

/* Prints, for every binary with unresolved frames (not found, mismatched),
 * its path, build-id and the places tried. @return the number printed. */
int sym_report(struct symbolizer *s, FILE *out, const char *prog);

/* The ELF file pfsym uses for `dso` (found and build-id checked as for
 * symbols; --force applies), or NULL if none. *path gets its file name, or
 * NULL for a recorded image ([vdso]: read it with elf_rawfile()). Owned by
 * the symbolizer. For the unwinder (pfsym/unwind.c). */
Elf *sym_dso_elf(struct symbolizer *s, struct pf_dso *dso, const char **path);

/* For `pfsym --resolve` (a debugging aid): the name pfsym gives ELF virtual
 * address `vaddr` of the binary at `path` (opened as is, no build-id
 * check). *name gets it (owned by p), or NULL when no symbol covers the
 * address. @return 0, -ENOENT (not a readable ELF file), -ENOMEM. */
int sym_lookup_file(struct symbolizer *s, struct pf_prof *p, const char *path, uint64_t vaddr, const char **name);

/* Counts of binaries: found and used, missing, mismatched. */
void sym_counts(const struct symbolizer *s, unsigned *found, unsigned *missing, unsigned *mismatched);

#endif
