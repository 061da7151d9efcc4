/*
 * libpfsym/internal/kernel.h - kernel frames named from the kernel's
 * symbols (libpfsym/kernel.c; not installed): the recording's KSYMS section
 * (format/pfile.md 4.11) or a kallsyms text file (pfsym --kallsyms FILE).
 */
#ifndef PFSYM_INTERNAL_KERNEL_H
#define PFSYM_INTERNAL_KERNEL_H

#include <stdio.h>
#include <pfile/ksyms.h>
#include <pfile/profile.h>

struct kern;

/* A kernel symbolizer; `kallsyms`: the path of a kallsyms text file to use
 * instead of the recording's snapshot, or NULL. A file whose addresses are
 * all 0 is not used: *warning (static storage of k, or NULL) says so.
 * @return 0; -errno of reading the file or -EBADMSG with errmsg "FILE:
 * REASON"; -ENOMEM. */
int pfsi_kern_new(struct kern **out, const char *kallsyms, const char **warning, char *errmsg, size_t errmsg_size);
void pfsi_kern_free(struct kern *k);

/* Whether a --kallsyms file is used (the recording's KSYMS is not). */
int pfsi_kern_has_file(const struct kern *k);

/* A new pass: the recording's table and the counters are dropped. */
void pfsi_kern_pass_begin(struct kern *k);

/* A KSYMS section's table, decoded (pf_ksyms_decode()): the first one is
 * taken over (*t is left empty), later ones are left to the caller. */
void pfsi_kern_take(struct kern *k, struct pf_ksyms *t);

/* pf_prof_ksymbol_fn: ctx is the struct kern. BPF programs and other text
 * registered while recording name the addresses inside them, before the
 * kallsyms table ("NAME [bpf]" for a BPF program). */
int pfsi_kern_ksymbol(void *ctx, uint64_t addr, uint32_t len, uint16_t ksym_type, uint16_t flags, const char *name,
		      size_t name_len);

/* pf_prof_kresolve_fn: ctx is the struct kern. */
int pfsi_kern_resolve(void *ctx, struct pf_prof *p, struct pf_prof_frame *f);

/* SYMINFO keys "kernel_symbols" (where names came from: "recording",
 * "kallsyms", "none"), "kernel_addresses", "kernel_addresses_named".
 * @return 0 or -ENOMEM. */
int pfsi_kern_syminfo(const struct kern *k, struct pf_buf *b);

/* One summary line when kernel addresses were met. */
void pfsi_kern_report(const struct kern *k, FILE *out, const char *prog);

#endif
