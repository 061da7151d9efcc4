/*
 * libpfsym/internal/pfsym.h - libpfsym's private interface (not installed):
 * files opened under a root (root.c), the symbolizer (find.c: finding and
 * checking binaries and debug files; symtab.c: symbol index, PLT names,
 * demangling), the unwinder (unwind.c, cfi.c) and the structures shared by
 * those files. The public interface is include/pfile/sym.h.
 */
#ifndef PFSYM_INTERNAL_PFSYM_H
#define PFSYM_INTERNAL_PFSYM_H

#include <pthread.h>
#include <stdio.h>
#include <libelf.h>
#include <pfile/sym.h>
#include <pfile/build.h>
#include <pfile/advanced.h> /* struct pf_prof, pf_maps, pf_events */
#include "kernel.h"

struct pfsym_opts {
	const char *symfs;         /* root of a copy of the recorded machine's files, or NULL */
	const char **debug_dirs;   /* extra debug directories, tried before /usr/lib/debug */
	int n_debug_dirs;
	int force;                 /* use a binary whose build-id differs or cannot be checked */
	int host_fallback;         /* with symfs: also look at this machine's files */
	int no_demangle;           /* keep C++/Rust names as in the symbol table */
	int no_inline;             /* no inline frames, no source lines (lines.c) */
	int debuginfod;            /* -1 never; 0 when DEBUGINFOD_URLS is set; 1 asked for */
	const char *dwarf_cache;   /* folder of inflated DWARF sections (dwsec.c), or NULL */
	uint32_t max_name;         /* bytes of a function name kept (symtab.c, lines.c) */
	uint32_t max_inline;       /* inline frames kept per address (lines.c), 1..255 */
	double dbgd_timeout_s;     /* debuginfod: seconds for the whole run, 0 none */
	uint64_t max_jit_symbols;  /* perfmap.c's bounds (0: its defaults) */
	uint64_t max_jit_map_bytes;
};
/* pfsym --max-name's default and bounds (bytes), --max-inline's (frames). */
#define PFSI_MAX_NAME_DEFAULT 65536u
#define PFSI_MAX_NAME_MIN 64u
#define PFSI_MAX_NAME_MAX (1u << 20)
#define PFSI_MAX_INLINE_DEFAULT 64u
#define PFSI_MAX_INLINE_MAX 255u
/* pf_sym_opts.debuginfod_timeout_s's default: seconds for the whole run. */
#define PFSI_DBGD_TIMEOUT_DEFAULT 120.0

/* ---- root.c: files opened under a root, never outside it ---- */

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

/* The n bytes at b as 2n lowercase hex digits and a NUL at out (2n + 1 bytes). */
void pfsi_hex(const uint8_t *b, size_t n, char *out);

/* Opens directory `dir` (resolved as this machine resolves it: it is the
 * user's) as a root, r zeroed or not. @return 0, or -errno (r->path NULL). */
int pfsi_root_init(struct root *r, const char *dir);
void pfsi_root_fini(struct root *r);

/* Whether real path `real` is r's directory or under it. */
int pfsi_root_contains(const struct root *r, const char *real);

/* Opens `path` (absolute or not, taken from r's root either way) for
 * reading if it leads to a regular file, resolving every symbolic link as
 * if r's directory were "/" (at most 40 per path; ".." stops at the root),
 * never entering a top-level proc, sys or dev directory of the root and
 * never opening a FIFO, device, socket or a file of the kernel's pseudo file
 * systems (proc, sysfs, debugfs, ...). Directories are walked with
 * O_PATH | O_NOFOLLOW | O_DIRECTORY, other components looked at with
 * fstatat(AT_SYMLINK_NOFOLLOW); the file is opened O_RDONLY | O_NOFOLLOW |
 * O_NONBLOCK | O_NOCTTY | O_CLOEXEC. Directories walked are remembered in r
 * (and kept open until pfsi_root_fini()). real (real_size bytes, may be NULL)
 * gets the path reached on this machine (r's path + the components walked,
 * without links), also on failure (as far as the walk got).
 * @return the descriptor (the caller's), or -1 with *why a static string
 * ("missing", "a FIFO: not opened", "under /proc: never opened", ...). */
int pfsi_root_open(struct root *r, const char *path, char *real, size_t real_size, const char **why);

/* ---- find.c, symtab.c: the symbolizer ---- */

struct symbolizer;

/* A symbolizer for options `o` (copied; its strings must outlive it). Opens
 * o->symfs and each o->debug_dirs entry as roots. @return 0; -ENOMEM; or
 * -errno for a directory that cannot be opened, *bad_dir set to it. */
int pfsi_sym_new(const struct pfsym_opts *o, struct symbolizer **out, const char **bad_dir);
void pfsi_sym_free(struct symbolizer *s);

/* Keeps a copy of a DSO_IMAGE (the [vdso] image) to symbolize from. */
int pfsi_sym_add_image(struct symbolizer *s, const struct pf_dso_image *img);

/* pf_prof_resolve_fn: ctx is the struct symbolizer. */
int pfsi_sym_resolve(void *ctx, struct pf_prof *p, struct pf_dso *dso, struct pf_prof_frame *f);

/* Opens and indexes the binary of the next DSO of `maps` not yet looked
 * at (files only, in table order), as a lookup would, but without counting
 * it as used: for the main loop's idle time, while the read-ahead thread
 * decodes. @return 1 if one was loaded, 0 if none is left, -ENOMEM. */
int pfsi_sym_preload_one(struct symbolizer *s, struct pf_maps *maps);

/* Prints, for every binary with unresolved frames (not found, mismatched),
 * its path, build-id and the places tried. @return the number printed. */
int pfsi_sym_report(struct symbolizer *s, FILE *out, const char *prog);

/* The ELF file pfsym uses for `dso` (found and build-id checked as for
 * symbols; --force applies), or NULL if none. *path gets its file name and
 * *fd its descriptor (open for reading), or NULL and -1 for a recorded image
 * ([vdso]: read it with elf_rawfile()). All owned by the symbolizer: hand
 * libdwfl a dup() of *fd, never the name, which it would open itself
 * outside pfsym's rules. For the unwinder (unwind.c). */
Elf *pfsi_sym_dso_elf(struct symbolizer *s, struct pf_dso *dso, const char **path, int *fd);

/* A separate debug file for `dso` whose build-id equals the recorded one
 * (the one symbols came from, else the first found in the debug places:
 * each --debug-dir, then /usr/lib/debug/.build-id of the sysroot or of this
 * machine, under the same rules as binaries). @return a new descriptor
 * (the caller's) with *path its name (owned by the symbolizer), or -1. */
int pfsi_sym_dso_debug_fd(struct symbolizer *s, struct pf_dso *dso, const char **path);

/* For `pfsym --resolve` (a debugging aid): the name pfsym gives ELF virtual
 * address `vaddr` of the binary at `path` (opened as is, no build-id
 * check). *name gets it (owned by p), or NULL when no symbol covers the
 * address. @return 0, -ENOENT (not a readable ELF file), -ENOMEM. */
int pfsi_sym_lookup_file(struct symbolizer *s, struct pf_prof *p, const char *path, uint64_t vaddr, const char **name);
/* The frames at vaddr of the file at `path` opened as is: f[0] the real
 * function (named when a symbol covers vaddr), f[1..n) the functions inlined
 * there, outermost first, with lines as pfsi_lines_chain() gives them.
 * @return n (>= 1), -ENOENT (not a readable ELF file) or -ENOMEM. */
int pfsi_sym_lookup_chain(struct symbolizer *s, struct pf_prof *p, const char *path, uint64_t vaddr,
			  struct pf_prof_frame *f, uint32_t max);

/* The keys of a META payload the inode proof needs: hostname,
 * kernel_release, kernel_text, clock_anchor_realtime_ns (format/pfile.md
 * 4.1). @return 0 or -ENOMEM. */
int pfsi_sym_meta(struct symbolizer *s, const uint8_t *data, size_t size);

/* Appends a BUILDID entry (flag PF_BUILDID_INODE) for every binary whose
 * build-id this symbolizer read from a file it proved by inode. @return the
 * number of entries, or -ENOMEM. */
int pfsi_sym_proven_buildids(const struct symbolizer *s, struct pf_buf *out);

/* Counts of binaries wanted for frames or unwinding. */
struct pfsi_sym_counts {
	unsigned found;      /* found and used (verified, or --force) */
	unsigned missing;    /* no file */
	unsigned mismatched; /* only files with another build-id */
	unsigned unverified; /* only files that no build-id check could vouch for */
	unsigned from_host;  /* used, from this machine's files (--symfs with --host-fallback) */
};
void pfsi_sym_counts(const struct symbolizer *s, struct pfsi_sym_counts *c);

/* ---- unwind.c, cfi.c: DWARF unwinding of sampled user stacks ----
 *
 * For recordings made with `pfrec --call-graph dwarf`.
 * Each sample that carries PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
 * is unwound with libdwfl: one Dwfl per process, modules reported from the
 * mapping timeline as the unwinder meets their addresses, registers from the
 * sample (perf's order mapped to DWARF numbering for the recorded machine),
 * memory from the stack copy, else from the mapped ELF files. Where CFI
 * unwinding stops early, a frame-pointer walk over the stack copy continues
 * when it finds a chain. Every sample's stop reason is counted.
 */

struct unwinder;

/* A new unwinder for a recording of machine `e_machine` (the file header's,
 * never the host's) that reads binaries through `sym` (not owned; must
 * outlive the unwinder). @return NULL when out of memory. */
struct unwinder *pfsi_unw_new(struct symbolizer *sym, const struct pfsym_opts *o, uint16_t e_machine);
void pfsi_unw_free(struct unwinder *u);

/* Reads the call-graph keys of a META payload: va_bits (user address bits on
 * aarch64; 48 when absent) and pac_enabled. */
void pfsi_unw_meta(struct unwinder *u, const uint8_t *data, size_t size);

/* pf_prof_unwind_fn: ctx is the struct unwinder. */
int pfsi_unw_unwind(void *ctx, struct pf_maps *maps, const struct pf_sample *s, uint64_t *addrs, uint32_t max);

/* Adds "unwind.*" counters to a SYMINFO payload. @return 0 or -ENOMEM. */
int pfsi_unw_syminfo(const struct unwinder *u, struct pf_buf *b);

/* One summary line (nothing if no sample was unwound): samples unwound, how
 * many reached the outermost frame, and a count per stop reason. */
void pfsi_unw_report(const struct unwinder *u, FILE *out, const char *prog);

/* ---- dwsec.c: the DWARF sections lines.c hands to libdw ---- */

/* Buffers of inflated sections: the Elf handle points at them until elf_end(). */
struct pfsi_dw_bufs {
	void **p;        /* malloc'd buffers */
	size_t n;
	void *map;       /* a cache file mapped, or NULL */
	size_t map_size;
	int cache;       /* what the cache did: PFSI_DWC_... */
	unsigned refused; /* compressed sections whose claimed size was over
			   * PFSI_DW_MAX_RATIO x their compressed bytes or
			   * PFSI_DW_MAX_BYTES: hidden from libdw, never inflated */
	char refused_what[160]; /* the first: "SECTION claims N bytes from M" */
};
/* Bounds on the inflated size a compressed DWARF section may claim (its
 * Chdr ch_size, or a .zdebug_ section's header): zlib's deflate gives at
 * most 1032 bytes per compressed byte (a stream of one repeated byte), and
 * no section of a real debug file is near 4 GiB inflated. A claim beyond
 * either is the file's lie, refused before anything is allocated. */
#define PFSI_DW_MAX_RATIO 1032u
#define PFSI_DW_MAX_BYTES ((uint64_t)4 << 30)
enum { PFSI_DWC_NONE, PFSI_DWC_HIT, PFSI_DWC_WRITTEN, PFSI_DWC_NOT_WRITTEN };
/* Prepares e, an ELF handle no one else uses, for dwarf_begin_elf(): hides
 * the DWARF sections lines.c never reads (SHT_NOBITS in e's copy of the
 * section headers) and inflates the other zlib-compressed ones (on two
 * threads), installed as their sections' data. With cache_dir (not NULL or
 * ""), the inflated sections are taken from a valid cache file there
 * instead (and touched), or written to one after inflating (the folder made
 * if missing, then its least recently used cache files removed beyond
 * PFSYM_DWARF_CACHE_MB; a failure to write costs only the next run's
 * time): keep->cache says
 * which. *keep gets the buffers: free them with pfsi_dw_bufs_free() after
 * dwarf_end() and elf_end(e). Sections it could not inflate are left for
 * libdw, except those over the bounds above (keep->refused): they are hidden
 * as the unread ones are, so libdw never allocates what they claim either.
 * @return 0 or -ENOMEM. */
int pfsi_dw_prepare(Elf *e, const char *cache_dir, struct pfsi_dw_bufs *keep);
void pfsi_dw_bufs_free(struct pfsi_dw_bufs *k);

/* ---- lines.c: inline frames and source lines ---- */

struct pfsi_lines;

/* pf_prof_resolve_chain_fn: ctx is the struct symbolizer. f[0] as
 * pfsi_sym_resolve() fills it, then its source line and the functions
 * inlined at the address from the DWARF of the file symbols came from. */
int pfsi_sym_resolve_chain(void *ctx, struct pf_prof *p, struct pf_dso *dso, struct pf_prof_frame *f,
			   uint32_t max);
/* The source line and inlined functions at ELF address f[0].addr of b (in
 * state ST_OK; dso: where to look for a separate debug file, or NULL: only
 * b's own files), f[0] named already. @return as pfsi_sym_resolve_chain(). */
struct binfo;
int pfsi_lines_chain(struct symbolizer *s, struct binfo *b, struct pf_dso *dso, struct pf_prof *p,
		     struct pf_prof_frame *f, uint32_t max);
/* Frees a binfo's DWARF index; NULL is a no-op. */
void pfsi_lines_free(struct pfsi_lines *l);
/* With PFSYM_LINES_STATS=1 in the environment, one line "PROG: lines: ..."
 * with the time spent opening DWARF files, indexing compilation units and
 * looking addresses up (a measuring aid for bench/inline.sh). */
void pfsi_lines_report(const struct symbolizer *s, FILE *out, const char *prog);

/* ---- shared by find.c and symtab.c ---- */

enum binfo_state { ST_NEW, ST_OK, ST_MISSING, ST_MISMATCH, ST_UNVERIFIED, ST_NOFILE };

struct sym {
	uint64_t addr;
	uint64_t end;     /* first address past it: addr + size, or for an unsized
			     symbol the end of its section (UINT64_MAX if unknown) */
	const char *name;
	uint64_t size;
	uint8_t bind;
	uint8_t plt;      /* a synthesized NAME@plt stub: the '@' is part of the name */
	uint32_t name_id; /* the shown name's string id in the symbolizer's pf_prof,
			     PF_PROF_NONE until first used */
};

struct load {
	uint64_t off, vaddr, filesz;
};

struct binfo {
	char *path;                 /* as recorded */
	uint8_t bid[64];
	uint8_t bid_size;
	uint8_t kind;               /* enum pf_dso_kind of the DSO it was made for */
	uint8_t deleted;            /* the file at the path is not the one mapped:
	                               look it up by build-id only */
	uint8_t as_is;              /* --resolve: the file named, no checks */
	enum binfo_state state;
	int forced;                 /* used by --force: build-id differs or unchecked */
	/* the inode proof (issue 29): a DSO recorded without a build-id whose
	 * file on this machine, in the recording's boot, has the recorded
	 * device and inode and has not changed since before the recording */
	uint8_t ino_known;          /* dev_maj/dev_min/ino recorded (MMAP2, MAPS) */
	uint8_t proof;              /* PF_DSO_PROOF_INODE: the build-id came from a
				       BUILDID entry flagged INODE (pfimport) */
	uint8_t bid_proven;         /* bid was read from the file proven by inode
				       here (none recorded) */
	uint8_t inode_ok;           /* proven by inode (here or by the entry) */
	uint32_t dev_maj, dev_min;
	uint64_t ino;
	char *inode_why;            /* why the inode proof failed, or NULL */
	uint8_t host_main, host_sym; /* that file came from this machine (--host-fallback) */
	char *found, *symfile;      /* files used */
	int dbg_searched, fd_dbg;   /* pfsi_sym_dso_debug_fd()'s file, -1 if none */
	char *dbgfile;
	struct pf_buf tried;        /* "FILE (why), ..." */
	struct pf_buf skipped;      /* debug files with the right name that failed
				       a check: "FILE (why), ..." (debuglink.c) */
	Elf *elf_main, *elf_sym;
	int fd_main, fd_sym;
	char *image;                /* [vdso] copy, owned */
	struct load load[16];
	int n_load;
	struct sym *syms;
	size_t n_syms;
	char *plt_names;            /* the synthesized "NAME@plt" strings */
	uint64_t addrs, addrs_named; /* unique addresses asked, named */
	int asked;                  /* wanted for a frame or for unwinding, not
				       only preloaded: counted and reported */
	struct pfsi_lines *lines;   /* lines.c: its DWARF index, NULL until asked */
	struct binfo *next;
};

struct image {
	char *path;
	char *data;
	size_t size;
	struct image *next;
};

/* Where a debug directory's paths are resolved: `root` (the sysroot, when
 * the directory lies in it; else a root of its own) + `prefix`. */
struct ddir {
	struct root *root;
	char *prefix; /* "" or "/usr/lib/debug", no trailing '/' */
};

struct symbolizer {
	struct pfsym_opts o;
	struct root host;       /* this machine's "/" */
	struct root sysroot;    /* --symfs; fd -1 if none */
	struct root *primary;   /* &sysroot with --symfs, else &host */
	struct root ddir_roots[32];
	struct ddir ddirs[33];  /* each --debug-dir, then /usr/lib/debug of primary */
	int n_ddirs;
	struct binfo *list;
	uint32_t preload_next;  /* pfsi_sym_preload_one()'s cursor in the DSO table */
	struct image *images;
	struct pf_prof *prof; /* the tables that sym->name_id refer to */
	/* lines.c's costs (PFSYM_LINES_STATS=1: pfsi_lines_report()) */
	uint64_t ln_files, ln_cus, ln_addrs;   /* DWARF files opened, CUs indexed, addresses */
	uint64_t ln_open_ns, ln_index_ns, ln_lookup_ns, ln_chain_ns;
	uint64_t ln_cache[4];                  /* DWARF files by PFSI_DWC_... */
	uint64_t ln_ix_used;                   /* files whose CUs came from the line
						  index on disk (lnidx.c) */
	uint64_t ln_ix_ns;                     /* keying and loading those */
	int ln_timed;                          /* 0 not known yet, 1 timed, -1 not
						  (no clock reads per address) */
	/* bounds met in the input (pfsi_bounds_report()) */
	uint64_t names_cut;                    /* names cut to o.max_name bytes */
	char name_cut_file[200];               /* where the first was */
	uint64_t inline_cut;                   /* addresses whose inline chain was cut */
	uint64_t dw_refused;                   /* compressed DWARF sections refused */
	char dw_refused_what[400];             /* the first: "FILE: SECTION claims ..." */
	/* the recording's META, for the inode proof (pfsi_sym_meta()) */
	char *meta_host, *meta_release;
	uint64_t meta_text;     /* kernel _text, 0 if absent */
	uint64_t start_ns;      /* clock_anchor_realtime_ns: the start, ns since the epoch; 0 unknown */
	int boot_state;         /* 0 not checked yet, 1 this machine and boot, -1 not */
	char boot_why[300];     /* why not */
	/* debuginfod.c */
	int dbgd_state;        /* 0 not tried, 1 client ready, -1 none */
	void *dbgd_client;
	unsigned dbgd_fetched; /* files the client returned */
	unsigned dbgd_timed_out; /* transfers the run's time limit aborted */
	unsigned dbgd_skipped;   /* not started: the time was spent */
	unsigned dbgd_cut;       /* downloads a server cut short */
	char dbgd_note[320];   /* why it is not used, when it was asked for */
};

/* util.c */
/* The bytes of `name` (NUL-terminated, from a file) that are kept: at most s->o.max_name, never read further
 * (strnlen), so a name of a GiB costs nothing. *cut is set when it was
 * longer (counted in s->names_cut, `file` noted for the first). @return the
 * length kept. */
size_t pfsi_name_len(struct symbolizer *s, const char *name, const char *file, int *cut);
/* pf_prof_str() of name[0..len), with the suffix "[cut]" when cut. */
int64_t pfsi_name_str(struct pf_prof *p, const char *name, size_t len, int cut);
/* One line per bound the input met (names cut, inline chains cut,
 * compressed DWARF refused), each naming the option that raises it. */
void pfsi_bounds_report(const struct symbolizer *s, FILE *out, const char *prog);
/* Doubles the array *arr of *cap elements of elem bytes (to `first` when
 * *cap is 0). @return 0, or -ENOMEM with *arr and *cap unchanged. */
int pfsi_grow(void **arr, size_t *cap, size_t elem, size_t first);
/* Appends "WHAT (WHY)" to the list (", " between entries), keeping it a
 * NUL-terminated string. Out of memory leaves the list short, never broken. */
void pfsi_note(struct pf_buf *list, const char *what, const char *why);
/* One line of pf_sym_report()'s summary: printf(fmt, ...) with control
 * bytes (a newline in a recorded path or a debuglink name, an escape
 * sequence) written as \xHH by pf_text_write() of tools/common/text.c, so
 * that no name from a recording can forge a line or reach the terminal,
 * then a newline. */
void pfsi_report_line(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets f's name (a string id) and, when it fits in 32 bits, its offset from
 * the symbol's start (sym_off, flag PF_FRAME_HAS_SYMOFF). */
void pfsi_frame_name(struct pf_prof_frame *f, uint32_t name, uint64_t off);

#ifdef PF_DW_DLOPEN
/* A function of libdw to look up: its name, and the function pointer
 * (e.g. `&ln_dwarf_lineno`) that gets it. */
struct pfsi_dw_sym {
	const char *name;
	void *slot;
};
/* Loads libdw (the file PFSYM_LIBDW names, else libdw.so.1) once for the
 * caller's *state (0 not tried, 1 loaded, -1 failed) and sets the n slots
 * of syms by dlsym(). On failure says "pfsym: FAULT (REASON): WITHOUT", or
 * "pfsym: LIB: no NAME: WITHOUT", on stderr, the first time only.
 * @return 1 once every function is there, else 0. */
int pfsi_dw_load(int *state, const char *fault, const char *without, const struct pfsi_dw_sym *syms, size_t n);
#endif

/* find.c */
void pfsi_tried(struct binfo *b, const char *path, const char *why); /* notes a place tried */
/* debuglink.c: b's .gnu_debuglink file, for a binary found without .symtab
 * (`path`: the recorded one, without " (deleted)"); sets b's symbol file */
void pfsi_debuglink_find(struct symbolizer *s, struct binfo *b, const char *path);
/* debuginfod.c: the file of b's build-id (debuginfo: its debug file, else
 * its executable) from the debuginfod servers or their cache, when
 * DEBUGINFOD_URLS is set; path gets its name on this machine (notes a
 * failure as tried). @return 0 or -1. */
int pfsi_debuginfod_fetch(struct symbolizer *s, struct binfo *b, int debuginfo, char *path, size_t path_size);
void pfsi_debuginfod_free(struct symbolizer *s);
/* One line: files fetched, or why debuginfod was not used when asked for. */
void pfsi_debuginfod_report(const struct symbolizer *s, FILE *out, const char *prog);
struct binfo *pfsi_binfo_new(struct symbolizer *s, const struct pf_dso *dso, int deleted, int as_is);
struct binfo *pfsi_binfo_get(struct symbolizer *s, struct pf_dso *dso);
void pfsi_find_files(struct symbolizer *s, struct binfo *b);
/* symtab.c */
int pfsi_has_symtab(Elf *e);
int pfsi_has_dynsym(Elf *e);
int pfsi_load_syms(struct binfo *b, Elf *e, Elf64_Word type, Elf *plt);
/* Names f (name, sym_off) from b's symbol at ELF address v.
 * @return 1 named, 0 no symbol covers v, -ENOMEM. */
int pfsi_sym_name_vaddr(struct symbolizer *s, struct pf_prof *p, struct binfo *b, uint64_t v, struct pf_prof_frame *f);
void pfsi_load_segments(struct binfo *b, Elf *e);

/* ---- perfmap.c: JIT symbols from PERFMAP sections (/tmp/perf-PID.map) ---- */

struct pfsi_jit;

/* The bounds when pf_sym_opts leaves them 0: symbols over all processes
 * (an entry and its index take about 100 bytes), and bytes of map text. */
#define PFSI_JIT_MAX_SYMS 2000000u
#define PFSI_JIT_MAX_BYTES (256ull << 20)
#define PFSI_JIT_CAPPED_SYMS 1u
#define PFSI_JIT_CAPPED_BYTES 2u

/* An empty set of JIT maps that keeps at most max_syms entries and
 * max_bytes bytes of text (0: the defaults above; UINT64_MAX: no bound);
 * names are bounded by sym's --max-name (and counted there; sym NULL: the
 * default bound, not counted).
 * @return NULL when out of memory. */
struct pfsi_jit *pfsi_jit_new(struct symbolizer *sym, uint64_t max_syms, uint64_t max_bytes);
void pfsi_jit_free(struct pfsi_jit *j);
/* Adds a PERFMAP payload (format/pfile.md 4.12); samples_so_far: samples
 * already resolved (counted as late when not prescanned). Malformed lines
 * are skipped. @return 0; 1 when a bound left lines or the whole section
 * out (pfsi_jit_cap_message() says which); -EBADMSG (shorter than its
 * header); -ENOMEM. */
int pfsi_jit_add(struct pfsi_jit *j, const uint8_t *data, size_t size, uint64_t samples_so_far);
/* Reads the PERFMAP sections of the recording at `path` before the pass
 * (they are written when the recording stops, after the samples): nothing
 * for "-" or what is not a regular file. @return 0 or -ENOMEM. */
int pfsi_jit_prescan(struct pfsi_jit *j, const char *path);
/* Whether pfsi_jit_prescan() read the file (then the pass skips the sections). */
int pfsi_jit_prescanned(const struct pfsi_jit *j);
/* A bound reached and not told yet: writes the one-line message (naming the
 * bound and pfsym's option that raises it) to buf. @return 1, else 0. */
int pfsi_jit_cap_message(struct pfsi_jit *j, char *buf, size_t size);
/* pf_prof_resolve_anon_fn: ctx is the struct pfsi_jit. */
int pfsi_jit_resolve(void *ctx, struct pf_prof *p, uint32_t pid, uint64_t addr, struct pf_dso *dso,
		     struct pf_prof_frame *f);
/* One summary line (nothing without JIT maps), and one if they came late. */
void pfsi_jit_report(const struct pfsi_jit *j, FILE *out, const char *prog);

/* ---- ahead.c: buffers and the read-ahead thread of rewrite.c ---- */

#define SPARE_BYTES (8u << 20)
#define SPARE_STEP (2u << 20) /* one transparent huge page per step */

struct spares {
	size_t want;          /* 0: not a recording with stack copies */
	int given;            /* handed out so far (at most 2) */
	uint8_t *p;           /* the one in preparation, or ready */
	size_t done;          /* bytes of it faulted in */
};

#define AHEAD_SLOTS 2
#define AHEAD_BIG (2u << 20)

struct ahead_sec {
	int rc;                 /* pf_reader_next()'s result */
	struct pf_section s;    /* s.data is `data` */
	uint8_t *data;          /* the payload's buffer, malloc'd */
	size_t cap;
	uint8_t *stored;        /* a copy of pf_reader_stored(), or NULL */
	size_t stored_cap;
	int has_stored;
	int can_continue;
	uint64_t offset;        /* pf_reader_offset() after the call */
	char msg[512];          /* pf_reader_errmsg() when rc < 0 */
	/* a KSYMS section, decoded by the thread (kernel.c takes it) */
	int ks_decoded;         /* ks and ks_rc are this section's */
	int ks_rc;              /* pf_ksyms_decode()'s result, ks_msg its message */
	struct pf_ksyms ks;
	char ks_msg[256];
};

struct ahead {
	pf_reader *r;
	pthread_t th;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ahead_sec slot[AHEAD_SLOTS];
	unsigned head, tail;    /* slots filled, slots handed back */
	unsigned order[AHEAD_SLOTS]; /* slot of the n-th filled: order[n % AHEAD_SLOTS] */
	int in_use[AHEAD_SLOTS];
	int stop, done;
	int regular;            /* the input is a regular file: a read never blocks
	                           for long, the thread is never cancelled */
};

/* A buffer for RECORDS payloads: 2 MiB, aligned and advised as a huge
 * page; malloc'd memory as far as free() and realloc() go. NULL if none. */
uint8_t *pfsi_payload_buf(size_t *cap);
/* One step of preparing the next spare. @return 1 if there is more to do. */
int pfsi_spare_step(struct spares *sp);
/* Puts a ready spare in place of *buf if that one is smaller. */
void pfsi_spare_give(struct spares *sp, uint8_t **buf, size_t *cap);
/* Starts the thread on r. @return 0 or -EAGAIN. */
int pfsi_ahead_start(struct ahead *a, pf_reader *r);
/* Whether the next section is ready (pfsi_ahead_next() would not wait). */
int pfsi_ahead_ready(struct ahead *a);
/* The next section's slot; the previous one must have been handed back. */
struct ahead_sec *pfsi_ahead_next(struct ahead *a);
/* Hands the current slot back. */
void pfsi_ahead_release(struct ahead *a);
/* Ends the thread (cancelling a read that waits on a pipe) and frees the
 * slots; the reader is the caller's again. */
void pfsi_ahead_stop(struct ahead *a);

/* ---- rewrite.c: the public handle ---- */

struct pf_sym {
	struct pfsym_opts o;       /* the options, strings copied */
	const char *ddirs[32];
	char *strs;                /* the copies, one allocation */
	struct symbolizer *sym;
	struct kern *kern;         /* kernel frames (kernel.c) */
	struct pf_prof *names;     /* the strings of pf_sym_lookup()'s names */
	struct pass *pass;         /* the last pf_sym_rewrite(), kept for
				      pf_sym_report() and freed by the next one
				      or pf_sym_free() (after the caller closed
				      the output), or NULL */
};

#endif
