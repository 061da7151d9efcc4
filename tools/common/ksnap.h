/*
 * tools/common/ksnap.h - a snapshot of this machine's kernel symbols for a
 * KSYMS section (format/pfile.md 4.11): the text symbols of /proc/kallsyms,
 * each module's load address and size (/proc/modules) and build-id
 * (/sys/module/NAME/notes), the kernel's build-id (/sys/kernel/notes).
 * pfrec takes it while recording; pfimport for a perf.data recorded by the
 * running kernel (not installed).
 */
#ifndef PF_TOOLS_KSNAP_H
#define PF_TOOLS_KSNAP_H

#include <stddef.h>
#include <stdint.h>
#include <pfile/ksyms.h>

/* Reads the snapshot into k (empty: zeroed or freed). shift: added to every
 * core kernel address (mod 2^64), to place the running kernel's symbols
 * where another boot of the same kernel had them; with a shift, module
 * symbols and the module table are left out (modules are placed apart from
 * the kernel's KASLR slide). k->hidden is set when every address was 0.
 * @return 0; -EBADMSG with errmsg "line N: REASON"; -errno of reading
 * /proc/kallsyms; -ENOMEM. */
int pf_ksnap_read(struct pf_ksyms *k, uint64_t shift, char *errmsg, size_t errmsg_size);

#endif
