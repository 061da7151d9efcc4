/*
 * pfdump/ksyms.c - the KSYMS section (format/pfile.md 4.11): a summary
 * (symbols, modules, the kernel's build-id) and, with --build-ids, the
 * build-ids of the kernel ("[kernel.kallsyms]") and of each module
 * ("[MODULE]").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pfile/ksyms.h>
#include "pfdump/out.h"
#include "pfdump/sections.h"

void pfd_ksyms_sec(const struct pf_section *sec, int list, int show)
{
	if (!list && !show)
		return;
	struct pf_ksyms k = { 0 };
	char err[256];
	int rc = pf_ksyms_decode(&k, sec->data, sec->size, err, sizeof(err));
	if (rc < 0) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s: section %" PRIu64 " at offset %" PRIu64 ": %s", pfd_pr.fname,
			 sec->index, sec->offset, rc == -EBADMSG ? err : "out of memory");
		pfd_error_line(msg);
		return;
	}
	if (list) {
		static const char kname[] = "[kernel.kallsyms]";
		pfd_print_buildid(k.build_id, k.build_id_size, kname, sizeof(kname) - 1);
		for (uint32_t i = 0; i < k.n_mods; i++) {
			char n[80];
			int l = snprintf(n, sizeof(n), "[%s]", k.mods[i].name);
			pfd_print_buildid(k.mods[i].build_id, k.mods[i].build_id_size, n, (size_t)l);
		}
		pf_ksyms_free(&k);
		return;
	}
	struct pf_ksym first = { 0 }, last = { 0 };
	if (k.n_syms) {
		pf_ksyms_sym(&k, 0, &first);
		pf_ksyms_sym(&k, k.n_syms - 1, &last);
	}
	uint64_t lo = first.addr, hi = last.addr;
	pfd_item_begin("ksyms", "  ksyms");
	pfd_u64("symbols", k.n_syms);
	pfd_u64("modules", k.n_mods);
	pfd_hex("first_addr", lo);
	pfd_hex("last_addr", hi);
	pfd_bytes("build_id", k.build_id, k.build_id_size);
	pfd_obj_end();
	for (uint32_t i = 0; i < k.n_mods; i++) {
		const struct pf_ksyms_module *m = &k.mods[i];
		pfd_item_begin("ksyms_module", "    module");
		pfd_cstr("name", m->name);
		pfd_hex("base", m->base);
		pfd_u64("size", m->size_bytes);
		pfd_bytes("build_id", m->build_id, m->build_id_size);
		pfd_obj_end();
	}
	pf_ksyms_free(&k);
}
