/*
 * pfdump/profile.c - pfdump --profile: the resolved profile's entries
 * (format/profile.md), decoded by libpfile's public functions: one
 * prof_string, prof_frame, prof_stack or prof_sample line per entry.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <pfile/profile.h>
#include "pfdump/out.h"
#include "pfdump/profile.h"

static struct pf_prof *prof; /* the tables, loaded as their sections come */

int pfd_profile_init(void)
{
	return pf_prof_new(&prof);
}

void pfd_profile_free(void)
{
	pf_prof_delete(prof);
	prof = NULL;
}

/* A string-id member: the string's text, or nothing for NONE. */
static void f_strid(const char *k, uint32_t id)
{
	size_t len;
	const char *s = id == PF_PROF_NONE ? NULL : pf_prof_str_get(prof, id, &len);
	if (s)
		pfd_str(k, s, len);
}

static void print_prof_item(const char *type)
{
	if (pfd_pr.json)
		pfd_obj_begin(type);
	else
		fprintf(pfd_pr.out, "  %s", type);
}

/* Loads a STRINGS, FRAMES or STACKS section into the tables and prints the
 * entries it added; SAMPLES entries are printed as they are decoded. */
void pfd_profile_section(const struct pf_section *sec)
{
	static const char *const frame_flags[] = { "kernel", "unresolved", "mismatch", "unknown",
						   "inline", "has_addr", "truncated", "has_symoff" };
	if (sec->type == PF_SEC_SAMPLES) {
		size_t pos = 0;
		struct pf_prof_sample s;
		int rc;
		while ((rc = pf_prof_samples_next(sec->data, sec->size, &pos, &s)) > 0) {
			print_prof_item("prof_sample");
			pfd_u64("time", s.time);
			pfd_u64("period", s.period);
			pfd_u64("pid", s.pid);
			pfd_u64("tid", s.tid);
			pfd_u64("cpu", s.cpu);
			if (s.stack != PF_PROF_NONE)
				pfd_u64("stack", s.stack);
			f_strid("comm", s.comm);
			pfd_u64("event", s.event);
			if (s.flags) {
				static const char *const sample_flags[] = { "lost" };
				pfd_bits("flags", s.flags, sample_flags, 1);
			}
			pfd_obj_end();
		}
		if (rc < 0)
			pfd_payload_error(sec, "SAMPLES");
		return;
	}
	uint32_t n_str = pf_prof_n_strings(prof), n_fr = pf_prof_n_frames(prof), n_st = pf_prof_n_stacks(prof);
	char msg[256];
	int rc = pf_prof_load_section(prof, sec, msg, sizeof(msg));
	if (rc < 0) {
		char line[512];
		snprintf(line, sizeof(line), "%s: section %" PRIu64 " at offset %" PRIu64 ": %s", pfd_pr.fname, sec->index,
			 sec->offset, rc == -ENOMEM ? "out of memory" : msg);
		pfd_error_line(line);
		return;
	}
	for (uint32_t id = n_str; id < pf_prof_n_strings(prof); id++) {
		size_t len;
		const char *s = pf_prof_str_get(prof, id, &len);
		print_prof_item("prof_string");
		pfd_u64("id", id);
		pfd_str("text", s, len);
		pfd_obj_end();
	}
	for (uint32_t id = n_fr; id < pf_prof_n_frames(prof); id++) {
		const struct pf_prof_frame *f = pf_prof_frame_get(prof, id);
		print_prof_item("prof_frame");
		pfd_u64("id", id);
		f_strid("name", f->name);
		f_strid("dso", f->dso);
		pfd_hex("file_off", f->file_off);
		if (f->flags & PF_FRAME_HAS_ADDR)
			pfd_hex("addr", f->addr);
		if (f->flags & PF_FRAME_HAS_SYMOFF)
			pfd_hex("sym_off", f->sym_off);
		f_strid("src_file", f->src_file);
		if (f->line)
			pfd_u64("line", f->line);
		pfd_bits("flags", f->flags & ~PF_FRAME_DEPTH_MASK, frame_flags, 8);
		if (f->flags & PF_FRAME_DEPTH_MASK)
			pfd_u64("inline_depth", PF_FRAME_DEPTH(f->flags));
		pfd_obj_end();
	}
	for (uint32_t id = n_st; id < pf_prof_n_stacks(prof); id++) {
		const struct pf_prof_stack *st = pf_prof_stack_get(prof, id);
		print_prof_item("prof_stack");
		pfd_u64("id", id);
		if (st->parent != PF_PROF_NONE)
			pfd_u64("parent", st->parent);
		pfd_u64("frame", st->frame);
		pfd_obj_end();
	}
}
