/*
 * pfile/ksyms.h - libpfile: the kernel's symbols (KSYMS section, format
 * 1.4, format/pfile.md section 4.11) and kallsyms text.
 *
 * A struct pf_ksyms is a table of the kernel's text symbols (from
 * /proc/kallsyms: types t, T, w and W only), sorted by address, with the
 * modules they belong to (name, load address, size, build-id as
 * /proc/modules and /sys/module/NAME/notes give them) and the kernel's own
 * build-id (/sys/kernel/notes). pfrec fills one from this machine's files
 * and writes it as a KSYMS section; pfsym reads it back (or parses a
 * kallsyms text file, `pfsym --kallsyms FILE`) and names kernel addresses
 * with pf_ksyms_find().
 *
 * HowTo:
 *
 *    struct pf_ksyms k = {0};
 *    pf_ksyms_parse(&k, text, len, err, sizeof(err));  // kallsyms text
 *    pf_ksyms_set_module(&k, "ext4", base, size, bid, bid_size); // optional
 *    pf_ksyms_encode(&k, &buf);                       // the KSYMS payload
 *    ...
 *    pf_ksyms_decode(&k2, payload, size, err, sizeof(err));
 *    int64_t i = pf_ksyms_find(&k2, addr);             // -1: no symbol
 *    struct pf_ksym s;
 *    if (i >= 0 && pf_ksyms_sym(&k2, i, &s) == 0) name = s.name, off = addr - s.addr;
 *    pf_ksyms_free(&k2);
 *
 * Errors are negative errno values as in pfile.h; functions that take an
 * errmsg buffer write one line there (no program or file name: the caller
 * adds where the bytes came from).
 */
#ifndef PFILE_KSYMS_H
#define PFILE_KSYMS_H

#include <stddef.h>
#include <stdint.h>
#include "pfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest kernel symbol name accepted (bytes; the kernel's
 * KSYM_NAME_LEN is 512 since 6.1, 128 before). */
#define PF_KSYMS_MAX_NAME 1024

/* A module (or a pseudo-module of kallsyms such as "bpf" or
 * "__builtin__ftrace"): symbols name it by index. */
struct pf_ksyms_module {
	uint64_t base;          /* address of its core text (/proc/modules); 0: unknown */
	uint64_t size_bytes;    /* bytes from base (/proc/modules); 0: unknown */
	uint8_t build_id[64];
	uint8_t build_id_size;  /* bytes, 0: unknown */
	char name[64];          /* NUL-terminated (module names are at most 55 bytes) */
};

/* A text symbol, as pf_ksyms_sym() hands it out. */
struct pf_ksym {
	uint64_t addr;          /* its start address */
	const char *name;       /* NUL-terminated, 1..PF_KSYMS_MAX_NAME bytes, owned by the table */
	uint16_t module;        /* 0: the core kernel; i >= 1: mods[i - 1] */
	char type;              /* 't', 'T', 'w' or 'W' as kallsyms shows it */
};

struct pf_ksyms_row;
struct pf_ksyms_mark;

/* The table. Zero it before first use; free with pf_ksyms_free(). Symbols
 * are numbered 0..n_syms-1 in address order (symbols at one address keep
 * their input order); read them with pf_ksyms_sym() and pf_ksyms_find(). */
struct pf_ksyms {
	uint8_t build_id[64];   /* the kernel's (/sys/kernel/notes) */
	uint8_t build_id_size;  /* bytes, 0: unknown */
	int hidden;             /* pf_ksyms_parse(): symbols were listed but every
	                         * address was 0 (kptr_restrict or
	                         * perf_event_paranoid hid them): no symbol kept */
	uint32_t n_mods;
	struct pf_ksyms_module *mods;
	uint32_t n_syms;
	/* The rest is private (no ABI promise). A parsed table holds rows; a
	 * decoded one reads the payload's four columns where they are, with the
	 * place of every 64th symbol in them (so that decoding ~120,000 symbols
	 * touches 50 KB, not 2 MB). */
	struct pf_ksyms_row *rows;
	char *names;
	size_t names_len, names_cap;
	uint8_t *block;         /* a decoded table's payload */
	const uint8_t *col_addr, *col_type, *col_mod;
	const char *col_name;
	size_t cols_len;        /* bytes from col_addr to the end of the last name */
	struct pf_ksyms_mark *marks;
	uint32_t mods_cap, rows_cap;
};

/* Parses kallsyms text (lines "ADDRESS TYPE NAME" or "ADDRESS TYPE
 * NAME\t[MODULE]", ADDRESS in hex without 0x) into k (which must be empty:
 * zeroed or freed). Keeps the text symbols (types t, T, w, W) and sorts them
 * by address (stably). A line that does not have this form is an error; an
 * empty last line is not. Names follow the decoder's one rule (format 4.11):
 * a symbol's 1..PF_KSYMS_MAX_NAME bytes, a module's 1..63, never a NUL, tab
 * or newline: a line whose name holds a NUL is an error (it was kept, and
 * its table then wrote a payload that named something else).
 * @return 0 (k->hidden set when every address was 0; then no symbol is
 * kept); -EBADMSG with errmsg "line N: REASON"; -ENOMEM. */
int pf_ksyms_parse(struct pf_ksyms *k, const char *text, size_t len, char *errmsg, size_t errmsg_size);

/* Sets the load address, size (bytes) and build-id (bid_size bytes, 0..64;
 * NULL/0: unknown) of module `name`, adding it if kallsyms did not name it.
 * @return 0; -EINVAL (name empty, over 63 bytes or holding a tab or newline,
 * bid_size over 64, a 65536th module); -ENOMEM. */
int pf_ksyms_set_module(struct pf_ksyms *k, const char *name, uint64_t base, uint64_t size_bytes,
			const uint8_t *bid, size_t bid_size);

/* Appends the KSYMS payload of k (format/pfile.md 4.11) to out.
 * @return 0; -EINVAL (more than 65535 modules, a name over
 * PF_KSYMS_MAX_NAME); -ENOMEM. */
int pf_ksyms_encode(const struct pf_ksyms *k, struct pf_buf *out);

/* Decodes a KSYMS payload of `size` bytes into k (which must be empty),
 * checking every field of it (4.11). The payload is copied: it may go
 * after the call.
 * @return 0; -EBADMSG (errmsg: what is wrong, with the payload offset; k is
 * left empty); -ENOMEM. */
int pf_ksyms_decode(struct pf_ksyms *k, const uint8_t *data, size_t size, char *errmsg, size_t errmsg_size);

/* As pf_ksyms_decode(), without the copy: on success k takes over `data`
 * (malloc'd, `size` bytes; read where it is) and pf_ksyms_free() frees it;
 * on failure it stays the caller's. For a payload of ~120,000 symbols this
 * saves a 3.5 MB copy. */
int pf_ksyms_decode_owned(struct pf_ksyms *k, uint8_t *data, size_t size, char *errmsg, size_t errmsg_size);

/* The symbol that holds kernel address `addr`: the one with the largest
 * address at or below it, if addr lies before the next higher symbol's
 * address and, for a module of known base and size, inside the module;
 * the last symbol of the table holds only addresses inside its module of
 * known size. The end markers `_etext`, `_einittext`, `__irqentry_text_end`,
 * `__softirqentry_text_end` and `__entry_text_end` hold nothing. Of
 * several symbols at one address (aliases, such as
 * `__pi___x86_indirect_thunk_rax` and `__x86_indirect_thunk_rax`), the last
 * listed that is not an end marker, which is the one perf (6.1) names.
 * Costs a binary search and, in a decoded table, a walk of at most 64
 * symbols (more through a run of aliases longer than that).
 * @return its index (0..n_syms-1), or -1 when none holds addr. */
int64_t pf_ksyms_find(const struct pf_ksyms *k, uint64_t addr);

/* Symbol i (0..n_syms-1) into *out; out->name stays valid until
 * pf_ksyms_free(). In a decoded table this walks at most 63 symbols from
 * the last marked one.
 * @return 0; -ERANGE when i >= n_syms. */
int pf_ksyms_sym(const struct pf_ksyms *k, uint32_t i, struct pf_ksym *out);

/* Frees what k holds and zeroes it; a zeroed k is a no-op. */
void pf_ksyms_free(struct pf_ksyms *k);

#ifdef __cplusplus
}
#endif
#endif /* PFILE_KSYMS_H */
