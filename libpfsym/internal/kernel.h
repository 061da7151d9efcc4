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

/* --force: a --kallsyms file that cannot be matched with the recorded
 * kernel (no _text, another layout) is used as it is. */
void pfsi_kern_set_force(struct kern *k, int force);

/* Whether a --kallsyms file was given (it may still be refused when the
 * first kernel address is met: kernel.c, file_decide()). */
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

/* Whether the recording's KSYMS section is still to come (META ksyms 1):
 * meanwhile kernel addresses stay unnamed (but for KSYMBOL records and a
 * --vmlinux image that META's keys allow), for pfsi_kern_rename() once it
 * is here. pfsi_kern_pass_begin() clears it. */
void pfsi_kern_wait(struct kern *k, int waiting);

/* Names again a kernel frame made while waiting (name NONE, counted by
 * pfsi_kern_resolve() then): from the --vmlinux image (the real function
 * only, no inline frames) or the kallsyms table now there.
 * @return 1 named (f changed), 0 not, or -ENOMEM. */
int pfsi_kern_rename(struct kern *k, struct pf_prof *p, struct pf_prof_frame *f);

/* SYMINFO keys "kernel_symbols" (where names came from: "recording",
 * "kallsyms", "none"), "kernel_addresses", "kernel_addresses_named".
 * @return 0 or -ENOMEM. */
int pfsi_kern_syminfo(const struct kern *k, struct pf_buf *b);

/* One summary line when kernel addresses were met (and one about the
 * --vmlinux file: used, or why not). */
void pfsi_kern_report(const struct kern *k, FILE *out, const char *prog);

/* ---- --vmlinux FILE (kernel.c, vmlinux.c) ---- */

struct symbolizer;
struct pfsi_vml;

/* Opens the kernel image at `path` for kernel frames: an ELF file of type
 * ET_EXEC or ET_DYN with a .symtab holding _text or _stext; its symbols are
 * indexed in a binfo of s's list (freed with s), its build-id read.
 * @return 0; -errno of opening it, or -EINVAL with errmsg "FILE: REASON"
 * (not ELF, stripped, no _text); -ENOMEM. */
int pfsi_vml_open(struct symbolizer *s, const char *path, struct pfsi_vml **out, char *errmsg, size_t errmsg_size);
void pfsi_vml_free(struct pfsi_vml *v);
/* The image's build-id (*size 0: none). */
const uint8_t *pfsi_vml_build_id(const struct pfsi_vml *v, size_t *size);
/* The link-time address of _text (stext 0) or _stext (1). @return 1 with
 * *addr set, 0 if the image has no such symbol. */
int pfsi_vml_text(const struct pfsi_vml *v, int stext, uint64_t *addr);
/* Names f[0] (name, sym_off; f->addr is left as the caller set it) from
 * the image's symbol at ELF address va and, with inl, fills f[1..) with the
 * functions inlined there and the source lines (lines.c), at most max
 * frames. @return the number of frames (>= 1), 0 when no symbol of the
 * image's loaded segments holds va (f untouched), or -ENOMEM. */
int pfsi_vml_resolve(struct symbolizer *s, struct pfsi_vml *v, struct pf_prof *p, uint64_t va,
		     struct pf_prof_frame *f, uint32_t max, int inl);

/* Takes `path` (NULL: nothing) as the --vmlinux image of k, opened with
 * pfsi_vml_open() through s; force: use it whatever the build-ids say;
 * no_inline: names only. @return as pfsi_vml_open(). */
int pfsi_kern_vmlinux(struct kern *k, struct symbolizer *s, const char *path, int force, int no_inline,
		      char *errmsg, size_t errmsg_size);
/* Whether a --vmlinux image was given (then the builder gets
 * pfsi_kern_resolve_chain). */
int pfsi_kern_has_vmlinux(const struct kern *k);
/* The kernel keys of a META payload: kernel_build_id, kernel_text
 * (format/pfile.md 4.1), for a recording without KSYMS. */
void pfsi_kern_meta(struct kern *k, const uint8_t *data, size_t size);
/* pf_prof_kresolve_chain_fn: ctx is the struct kern. */
int pfsi_kern_resolve_chain(void *ctx, struct pf_prof *p, struct pf_prof_frame *f, uint32_t max);

#endif
