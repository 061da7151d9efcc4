/*
 * pfscript.h - pfscript's symbol offsets (not installed).
 *
 * pfsym's frames carry a function name and the ELF virtual address of the
 * frame, not where the function starts; `perf script` prints "sym+0xOFF".
 * pf_symoff reads the function symbols of each DSO once (.symtab, else
 * .dynsym, through libelf) and gives the offset of an address in the
 * function symbol that holds it.
 */
#ifndef PF_PFSCRIPT_H
#define PF_PFSCRIPT_H

#include <stdint.h>

struct pf_symoff;

/* A new, empty cache. @return NULL when out of memory. */
struct pf_symoff *pf_symoff_new(void);

/* The offset (bytes) of ELF virtual address `addr` from the start of the
 * symbol (STT_FUNC, STT_GNU_IFUNC, or STT_NOTYPE: assembler labels such as _start) of the file `path` that holds
 * it (start <= addr < start + size; a symbol of size 0 holds only its start).
 * The file is read at the first call for it, its symbols kept.
 * @return 0 and *off set; -ENOENT when no symbol holds addr or the file
 * cannot be read as ELF (the reason is not told: the frame prints without an
 * offset); -ENOMEM. */
int pf_symoff_user(struct pf_symoff *so, const char *path, uint64_t addr, uint64_t *off);

void pf_symoff_free(struct pf_symoff *so);

#endif
