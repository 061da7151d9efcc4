/*
 * pfile/sym.h - libpfsym: resolving a recording (what pfsym does).
 *
 * libpfsym turns the addresses of a raw recording (pfrec's .pf file) into
 * function names and modules: it finds each mapped binary (and its separate
 * debug file) by path and build-id, optionally under a copy of the recorded
 * machine's root (`symfs`), indexes its symbol table (.symtab, else
 * .dynsym, plus NAME@plt stubs of the PLT), demangles C++ and Rust names,
 * finds the functions inlined at each address and the source lines (DWARF,
 * an index per compilation unit built when first needed),
 * and unwinds the user-stack copies of `pfrec --call-graph dwarf` samples
 * with the binaries' DWARF CFI. It links libelf and libpfile; libdw is
 * loaded (dlopen) the first time a sample with a stack copy is unwound or
 * an address's source line is looked up.
 * Its sources are in libpfsym/; pkg-config name `libpfsym`.
 *
 * HowTo: print the resolved stack of every sample (examples/print-stacks.c):
 *
 *    pf_sym *s;
 *    struct pf_sym_opts o = PF_SYM_OPTS_INIT;          // this machine's files
 *    char err[512];
 *    if (pf_sym_new(&s, &o, err, sizeof(err)) < 0) { print err }
 *    int rc = pf_sym_each_sample(s, "run.pf", on_sample, arg, err, sizeof(err));
 *    // on_sample(arg, p, sample): sample->stack is the leaf node of the
 *    // stack in p; follow pf_prof_stack_get(p, id)->parent to the root and
 *    // read each node's frame with pf_prof_frame_get() and its strings
 *    // with pf_prof_str_get() (pfile/profile.h)
 *    pf_sym_free(s);
 *
 * HowTo: write a resolved recording (pfsym IN -o OUT):
 *
 *    pf_reader *r;  pf_reader_open(&r, "run.pf");      // pfile/pfile.h
 *    struct pf_sym_rewrite_opts ro = PF_SYM_REWRITE_OPTS_INIT;
 *    rc = pf_sym_rewrite(s, r, out_fd, &ro, err, sizeof(err));
 *    pf_sym_report(s, stderr, "prog");                  // the summary
 *
 * The output of pf_sym_rewrite() is a function of the input's bytes and the
 * files found alone (not of timing, not of whether the input is a pipe),
 * with one exception: JIT maps (PERFMAP sections, /tmp/perf-PID.map), which
 * a recording holds after its samples, are read first when the reader's
 * name is a regular file (or "-" for a standard input that is one), and
 * only where they come from a pipe.
 *
 * Errors are negative errno values (as in pfile.h); functions that take an
 * `errmsg` buffer write a one-line message there (no trailing newline, no
 * program name), naming the file and the fault. Option structs carry their
 * own size first (`sz`, set by the _INIT macros): a program compiled against
 * an older, shorter struct keeps working, fields it does not know are 0.
 *
 * Thread safety: a pf_sym is used by one thread at a time. The unwinder's
 * libdwfl callbacks find it through a per-process pointer: unwind with one
 * pf_sym at a time per process.
 */
#ifndef PFILE_SYM_H
#define PFILE_SYM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pfile.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A symbolizer and unwinder, with what it has loaded (opaque). */
typedef struct pf_sym pf_sym;

/* Called with each fault of the input that does not stop the pass (a
 * damaged section: what was read is still resolved): one line, no program
 * name, no newline. */
typedef void (*pf_sym_message_fn)(void *arg, const char *msg);

/* Where binaries are looked for and how names are shown (pfsym's options:
 * pfsym(1) describes the order of the places tried). */
struct pf_sym_opts {
	size_t sz;                     /* sizeof(struct pf_sym_opts) */
	const char *symfs;             /* root of a copy of the recorded machine's
				        * files (symbolic links never lead out of
				        * it), or NULL: this machine's "/" */
	const char *const *debug_dirs; /* extra debug directories, tried before
				        * /usr/lib/debug, in order */
	unsigned n_debug_dirs;         /* entries of debug_dirs (at most 32) */
	int force;                     /* use a binary whose build-id differs from
				        * the recorded one or cannot be checked */
	int host_fallback;             /* with symfs: also this machine's files */
	int no_demangle;               /* keep C++/Rust names as in the symbol table */
	/* since 0.2 (absent when sz is smaller): */
	const char *kallsyms;          /* a kallsyms text file ("ADDRESS TYPE NAME
				        * [MODULE]" lines, as /proc/kallsyms) that
				        * names kernel frames instead of the
				        * recording's KSYMS snapshot, or NULL */
	pf_sym_message_fn message;     /* warnings of pf_sym_new() that stop
				        * nothing (a kallsyms file whose addresses
				        * are all 0), or NULL (not told) */
	void *message_arg;
	int no_inline;                 /* no inline frames and no source lines (a
				        * resolved profile as format 1.1 wrote it);
				        * by default both come from the DWARF of the
				        * file symbols came from, else of the binary,
				        * else of its debug file found by build-id */
	int debuginfod;                /* fetch missing executables and debug files by
				        * build-id from the servers of DEBUGINFOD_URLS
				        * through libdebuginfod.so.1 (loaded at the first
				        * use; its cache): 0 when that variable is set
				        * (the default), -1 never, 1 the same, asked for
				        * explicitly (pfsym --debuginfod) */
	/* since 0.3 (absent when sz is smaller): */
	const char *vmlinux;           /* an uncompressed kernel image (ELF with
				        * .symtab; DWARF optional) that names core
				        * kernel frames, with inline frames and
				        * source lines unless no_inline, before
				        * the KSYMS snapshot or kallsyms file (which
				        * still name modules): used only when its
				        * build-id is the recorded kernel's (KSYMS,
				        * else META kernel_build_id) unless force,
				        * moved by runtime _text (KSYMS or META
				        * kernel_text) minus its own; or NULL */
	/* since 0.4 (absent when sz is smaller): */
	const char *dwarf_cache;       /* a folder where the zlib-compressed DWARF
				        * sections of a debug file, once inflated
				        * for inline frames and source lines, are
				        * kept (one file per debug file, named by a
				        * hash of the compressed bytes, checked by
				        * an XXH3 hash when read back; made if
				        * missing; its least recently used files
				        * removed beyond PFSYM_DWARF_CACHE_MB MiB,
				        * default 1024), so that later runs map them
				        * instead of inflating again: what
				        * pf_sym_rewrite() writes is the same with
				        * or without it; NULL or "": none (pfsym's
				        * default is $XDG_CACHE_HOME/pftools/dwarf) */
	/* since 0.5 (absent when sz is smaller): bounds on what the input's
	 * files claim, each told in one line of pf_sym_report() when met */
	uint32_t max_name;             /* bytes of a function name (symbol table,
				        * demangled, DWARF) kept, 64..1048576; a
				        * longer one is read no further, cut there
				        * and marked "[cut]"; 0: 65536 */
	uint32_t max_inline;           /* inline frames kept per address, 1..255
				        * (the outermost; the deepest dropped);
				        * 0: 64 */
	double debuginfod_timeout_s;   /* seconds all debuginfod downloads of this
				        * handle may take together: a transfer
				        * running when they are spent is aborted
				        * (libdebuginfod's progress callback), no
				        * more are started; 0: 120; < 0: no limit */
	/* since 0.5 too: bounds on the JIT maps (PERFMAP sections) */
	uint64_t max_jit_symbols;      /* the most JIT map entries (lines of
				        * /tmp/perf-PID.map in PERFMAP sections,
				        * all processes together) kept: lines past
				        * it are not used, told once through
				        * `message` of pf_sym_rewrite_opts; 0: the
				        * default, 2000000 (about 100 bytes of memory
				        * each); UINT64_MAX: no bound */
	uint64_t max_jit_map_bytes;    /* the most bytes of JIT map text kept
				        * (all PERFMAP sections together): a
				        * section past it is not used, told once;
				        * 0: the default, 256 MiB; UINT64_MAX: no
				        * bound */
};
#define PF_SYM_OPTS_INIT { sizeof(struct pf_sym_opts), NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, 0, 0, 0, 0, 0 }

/* A new symbolizer for options `o` (NULL: the defaults). The strings of `o`
 * are copied. max_name or max_inline out of their range: -EINVAL (errmsg
 * names the field). The symfs and debug directories are opened now.
 * o->kallsyms is read and parsed now, o->vmlinux opened and its symbols
 * indexed now.
 * @return 0 with *out set (free it with pf_sym_free()); -EINVAL (o->sz too
 * small, more than 32 debug directories: errmsg ""; or a vmlinux that is
 * not an unstripped kernel ELF image: errmsg "FILE: REASON"); -ENOMEM; or
 * -errno of a directory, kallsyms or vmlinux file that cannot be opened
 * (-EBADMSG: a kallsyms line that is not one), with errmsg "DIR: REASON"
 * or "FILE: REASON" (errmsg is "" for the other errors). */
int pf_sym_new(pf_sym **out, const struct pf_sym_opts *o, char *errmsg, size_t errmsg_size);

/* Frees s and everything it loaded; NULL is a no-op. */
void pf_sym_free(pf_sym *s);

/* The name s gives ELF virtual address `vaddr` of the binary at absolute
 * path `path`, opened as is (no build-id check): what `pfsym --resolve`
 * prints. *name gets it (owned by s, valid until pf_sym_free()), or NULL
 * when no symbol covers the address.
 * @return 0; -ENOENT (not a readable ELF file); -ENOMEM. */
int pf_sym_lookup(pf_sym *s, const char *path, uint64_t vaddr, const char **name);

/* One frame at an address (pf_sym_lookup_chain()). Strings are owned by the
 * pf_sym and valid until pf_sym_free(). */
struct pf_sym_frame {
	const char *name;  /* the function (demangled as pfsym names frames), NULL: no symbol */
	const char *file;  /* source file as the DWARF names it (joined to the
			    * unit's directory when relative), NULL: no line */
	uint32_t line;     /* source line, 0: unknown */
	uint32_t depth;    /* 0: the real function; 1, 2, ...: inlined, deeper inside */
};

/* The frames at ELF virtual address `vaddr` of the binary at absolute path
 * `path`, opened as is (no build-id check): the functions inlined there,
 * innermost first, then the real function (depth 0) last, each with its
 * source line: the innermost one the line of the address itself, every
 * other one the line of its call to the frame before it (DWARF
 * DW_AT_call_line; format/profile.md 3.3; what `addr2line -f -i` prints and
 * `pfsym --resolve` shows). Without DWARF for the file, the real function
 * alone, with no line. out[0..max) gets the frames, *n their number.
 * @return 0; -ENOSPC (more than `max` frames: the innermost `max` given);
 * -EINVAL (max 0); -ENOENT (not a readable ELF file); -ENOMEM. */
int pf_sym_lookup_chain(pf_sym *s, const char *path, uint64_t vaddr, struct pf_sym_frame *out, uint32_t max,
			uint32_t *n);

/* Called for each resolved sample, in the input's order (the order of
 * pf_sym_rewrite()'s SAMPLES sections). `p` holds the tables the sample's
 * `stack` refers to (owned by the library; valid during the call). A
 * negative return stops the pass and is returned by it. */
typedef int (*pf_sym_sample_fn)(void *arg, const struct pf_prof *p, const struct pf_prof_sample *s);


/* Options of pf_sym_rewrite(). */
struct pf_sym_rewrite_opts {
	size_t sz;                /* sizeof(struct pf_sym_rewrite_opts) */
	const char *input_name;   /* recorded as SYMINFO "input" and named in
				   * messages; NULL: pf_reader_name() */
	const char *output_name;  /* named in messages; NULL or "-": "<stdout>" */
	pf_sym_message_fn message;/* faults of the input, or NULL (not told) */
	void *message_arg;
	pf_sym_sample_fn sample;  /* each resolved sample, or NULL */
	void *sample_arg;
};
#define PF_SYM_REWRITE_OPTS_INIT { sizeof(struct pf_sym_rewrite_opts), NULL, NULL, NULL, NULL, NULL, NULL }

/* pf_sym_rewrite() returned after input damage it told through `message`. */
#define PF_SYM_DAMAGED 1

/* Reads the recording of `r` to its end and writes it to file descriptor
 * `out_fd` with a resolved profile added (format/profile.md): every section
 * passes through as stored (an older resolved profile is dropped); a
 * SYMINFO section follows META; STRINGS/FRAMES/STACKS chunks and a SAMPLES
 * section go out every 4096 samples or 1 s of the samples' own time (so that
 * a reader of a stream sees them early); the closing SYMINFO (counters)
 * precedes END. The resolved profile is zstd level 1 in a file and stored
 * uncompressed into a pipe or socket (whose size is raised to 1 MiB where
 * allowed). A thread reads and decodes the next sections while this one
 * resolves; `r` is not touched by the caller meanwhile and is the caller's
 * again on return. out_fd is not closed. out_fd -1: nothing is written (for
 * `o->sample` alone). Data after END is a fault (told, ignored).
 * @return 0; PF_SYM_DAMAGED; or -errno with errmsg set: -ENOMEM, -EAGAIN
 * (no thread), a write error (-EPIPE: the reader closed the pipe), or the
 * callback's negative value. */
int pf_sym_rewrite(pf_sym *s, pf_reader *r, int out_fd, const struct pf_sym_rewrite_opts *o, char *errmsg,
		   size_t errmsg_size);

/* Resolves the recording at `path` ("-": standard input) without writing
 * anything: calls fn(arg, ...) for each sample. Faults of the input that do
 * not stop the reading are not told.
 * @return as pf_sym_rewrite(), or the -errno of opening the file. */
int pf_sym_each_sample(pf_sym *s, const char *path, pf_sym_sample_fn fn, void *arg, char *errmsg,
		       size_t errmsg_size);

/* Prints pfsym's summary of the last pass that reached its end to `out`,
 * each line starting "PROG: ": samples, lost, unique addresses, the share
 * of user frames resolved, kernel frames; call chains cut by a depth limit;
 * names cut by max_name, inline chains cut by max_inline, compressed DWARF
 * sections whose claimed size was refused; debuginfod's time limit spent;
 * the unwinder's counts by stop reason; the JIT maps used; debuginfod's
 * files (or why it was not used when asked for); every binary with
 * unresolved frames (its path, build-id and the places tried), found
 * stripped without a debug file, or with a debug file skipped (wrong CRC32
 * or build-id). Nothing if no pass ended. */
void pf_sym_report(pf_sym *s, FILE *out, const char *prog);

#ifdef __cplusplus
}
#endif

#endif
