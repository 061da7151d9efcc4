/*
 * pfsym.h - pfsym internals: the ELF symbolizer (pfsym/elf.c).
 */
#ifndef PFSYM_H
#define PFSYM_H

#include <stdio.h>
#include <libelf.h>
#include <pfile/build.h>
#include <pfile/advanced.h> /* until libpfsym: struct pf_prof, pf_maps, pf_events */

struct pfsym_opts {
	const char *symfs;         /* root of a copy of the recorded machine's files, or NULL */
	const char **debug_dirs;   /* extra debug directories, tried before /usr/lib/debug */
	int n_debug_dirs;
	int force;                 /* use a binary whose build-id differs or cannot be checked */
	int host_fallback;         /* with symfs: also look at this machine's files */
	int no_demangle;           /* keep C++/Rust names as in the symbol table */
};

/* ---- pfsym/root.c: files opened under a root, never outside it ---- */

/* A directory taken as "/" for the paths resolved under it. */
struct root {
	int fd;          /* O_PATH descriptor of the directory */
	char *path;      /* its real path, malloc'd ("/" for this machine's root) */
	size_t path_len; /* strlen(path), 0 for "/" */
	/* what earlier walks learnt (each component costs system calls, about
	 * 3 us each on the machines measured): directories reached without a
	 * link, by their path from the root ("/usr/lib"), with an O_PATH
	 * descriptor; devices whose file system is not a pseudo one */
	struct root_dir {
		char *rel;
		int fd;
		unsigned long used; /* tick of the last walk that used it */
	} dirs[16];
	unsigned n_dirs;
	unsigned long tick;
	unsigned long devs_ok[8];
	unsigned n_devs_ok;
};

/* Opens directory `dir` (resolved as this machine resolves it: it is the
 * user's) as a root, r zeroed or not. @return 0, or -errno (r->path NULL). */
int root_init(struct root *r, const char *dir);
void root_fini(struct root *r);

/* Whether real path `real` is r's directory or under it. */
int root_contains(const struct root *r, const char *real);

/* Opens `path` (absolute or not, taken from r's root either way) for
 * reading if it leads to a regular file, resolving every symbolic link as
 * if r's directory were "/" (at most 40 per path; ".." stops at the root),
 * never entering a top-level proc, sys or dev directory of the root and
 * never opening a FIFO, device, socket or a file of the kernel's pseudo file
 * systems (proc, sysfs, debugfs, ...). Directories are walked with
 * O_PATH | O_NOFOLLOW | O_DIRECTORY, other components looked at with
 * fstatat(AT_SYMLINK_NOFOLLOW); the file is opened O_RDONLY | O_NOFOLLOW |
 * O_NONBLOCK | O_NOCTTY | O_CLOEXEC. Directories walked are remembered in r
 * (and kept open until root_fini()). real (real_size bytes, may be NULL)
 * gets the path reached on this machine (r's path + the components walked,
 * without links), also on failure (as far as the walk got).
 * @return the descriptor (the caller's), or -1 with *why a static string
 * ("missing", "a FIFO: not opened", "under /proc: never opened", ...). */
int root_open(struct root *r, const char *path, char *real, size_t real_size, const char **why);

/* ---- pfsym/elf.c ---- */

struct symbolizer;

/* A symbolizer for options `o` (copied; its strings must outlive it). Opens
 * o->symfs and each o->debug_dirs entry as roots. @return 0; -ENOMEM; or
 * -errno for a directory that cannot be opened, *bad_dir set to it. */
int sym_new(const struct pfsym_opts *o, struct symbolizer **out, const char **bad_dir);
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
 * symbols; --force applies), or NULL if none. *path gets its file name and
 * *fd its descriptor (open for reading), or NULL and -1 for a recorded image
 * ([vdso]: read it with elf_rawfile()). All owned by the symbolizer: hand
 * libdwfl a dup() of *fd, never the name, which it would open itself
 * outside pfsym's rules. For the unwinder (pfsym/unwind.c). */
Elf *sym_dso_elf(struct symbolizer *s, struct pf_dso *dso, const char **path, int *fd);

/* A separate debug file for `dso` whose build-id equals the recorded one
 * (the one symbols came from, else the first found in the debug places:
 * each --debug-dir, then /usr/lib/debug/.build-id of the sysroot or of this
 * machine, under the same rules as binaries). @return a new descriptor
 * (the caller's) with *path its name (owned by the symbolizer), or -1. */
int sym_dso_debug_fd(struct symbolizer *s, struct pf_dso *dso, const char **path);

/* For `pfsym --resolve` (a debugging aid): the name pfsym gives ELF virtual
 * address `vaddr` of the binary at `path` (opened as is, no build-id
 * check). *name gets it (owned by p), or NULL when no symbol covers the
 * address. @return 0, -ENOENT (not a readable ELF file), -ENOMEM. */
int sym_lookup_file(struct symbolizer *s, struct pf_prof *p, const char *path, uint64_t vaddr, const char **name);

/* Counts of binaries wanted for frames or unwinding. */
struct sym_counts {
	unsigned found;      /* found and used (verified, or --force) */
	unsigned missing;    /* no file */
	unsigned mismatched; /* only files with another build-id */
	unsigned unverified; /* only files that no build-id check could vouch for */
	unsigned from_host;  /* used, from this machine's files (--symfs with --host-fallback) */
};
void sym_counts(const struct symbolizer *s, struct sym_counts *c);

#endif
