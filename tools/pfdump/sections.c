/*
 * pfdump/sections.c - pfdump's printers of the file header, the section
 * lines and the sections other than RECORDS and the resolved profile: META,
 * EVENT, THREADS, BUILDID, MAPS, DSO_IMAGE, RUN, END.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pfile/records.h>
#include "pfdump/out.h"
#include "pfdump/sections.h"


void pfd_print_event(const struct pf_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;
	if (pfd_pr.json) {
		pfd_obj_begin("event");
		pfd_u64("index", ev->index);
		pfd_cstr("name", ev->name);
	} else {
		fprintf(pfd_pr.out, "  event %u", ev->index);
		pfd_cstr("name", ev->name);
	}
	pfd_u64("attr_type", a->type);
	pfd_hex("config", a->config);
	pfd_hex_nz("config1", a->config1);
	pfd_hex_nz("config2", a->config2);
	pfd_hex_nz("config3", ev->config3);
	if (a->freq)
		pfd_u64("freq", a->sample_freq);
	else
		pfd_u64("period", a->sample_period);
	pfd_bits("sample_type", a->sample_type, pfd_sample_bits, pfd_n_sample_bits);
	pfd_bits("read_format", a->read_format, pfd_format_bits, pfd_n_format_bits);
	uint64_t flags;
	memcpy(&flags, (const uint8_t *)a + 40, 8);
	uint64_t pr = (flags >> 15) & 3;
	flags &= ~(3ull << 15);
	pfd_bits("flags", flags, pfd_attr_bits, pfd_n_attr_bits);
	if (pr)
		pfd_u64("precise_ip", pr);
	pfd_hex_nz("branch_sample_type", a->branch_sample_type);
	pfd_hex_nz("sample_regs_user", a->sample_regs_user);
	if (a->sample_stack_user)
		pfd_u64("sample_stack_user", a->sample_stack_user);
	pfd_hex_nz("sample_regs_intr", a->sample_regs_intr);
	if (a->use_clockid)
		pfd_u64("clockid", (uint64_t)(int64_t)a->clockid);
	pfd_u64("attr_size", ev->attr_size);
	pfd_list("ids", ev->ids, ev->n_ids, 0);
	pfd_print_desc(ev->index);
	pfd_obj_end();
}

void pfd_print_meta(const struct pf_section *sec)
{
	size_t pos = 0, kl, vl;
	const char *k, *v;
	int rc;
	while ((rc = pf_kv_next(sec->data, sec->size, &pos, &k, &kl, &v, &vl)) > 0) {
		if (pfd_pr.json) {
			pfd_obj_begin("meta");
			pfd_str("key", k, kl);
			pfd_str("value", v, vl);
			pfd_obj_end();
		} else {
			fputs("  ", pfd_pr.out);
			pfd_text_str(k, kl);
			fputs(" = ", pfd_pr.out);
			pfd_text_str(v, vl);
			putc('\n', pfd_pr.out);
		}
	}
	if (rc < 0) {
		char msg[256];
		snprintf(msg, sizeof(msg), "%s: section %" PRIu64 " at offset %" PRIu64 ": malformed META pairs", pfd_pr.fname,
			 sec->index, sec->offset);
		pfd_error_line(msg);
	}
}

void pfd_do_threads(const struct pf_section *sec, int show)
{
	size_t pos = 0, cl;
	uint32_t pid, tid;
	const char *comm;
	int rc;
	while ((rc = pf_thread_next(sec->data, sec->size, &pos, &pid, &tid, &comm, &cl)) > 0) {
		pfd_comm_note(tid, 0, comm, cl); /* alive at the start */
		if (!show)
			continue;
		pfd_item_begin("thread", "  thread");
		pfd_u64("pid", pid);
		pfd_u64("tid", tid);
		pfd_str("comm", comm, cl);
		pfd_obj_end();
	}
	if (rc < 0)
		pfd_payload_error(sec, "THREADS");
}

void pfd_buildid_sec(const struct pf_section *sec, int list, int show)
{
	size_t pos = 0;
	struct pf_buildid e;
	int rc;
	while ((rc = pf_buildid_next(sec->data, sec->size, &pos, &e)) > 0) {
		if (list) {
			pfd_print_buildid_proof(e.build_id, e.build_id_size, e.path, e.path_len,
						(e.flags & PF_BUILDID_INODE) ? "inode" : NULL);
			continue;
		}
		if (!show)
			continue;
		pfd_item_begin("buildid", "  buildid");
		pfd_bytes("build_id", e.build_id, e.build_id_size);
		pfd_str("path", e.path, e.path_len);
		pfd_u64("file_size", e.file_size);
		pfd_u64("mtime_ns", e.mtime_ns);
		if (e.flags) {
			static const char *const bid_flags[] = { "deleted", "replaced", "inode" };
			pfd_bits("flags", e.flags, bid_flags, 3);
		}
		pfd_obj_end();
	}
	if (rc < 0)
		pfd_payload_error(sec, "BUILDID");
}

void pfd_print_maps(const struct pf_section *sec)
{
	uint32_t pid;
	uint64_t time;
	const char *text;
	size_t len;
	/* PERFMAP (4.12) has MAPS' layout: the text of /tmp/perf-PID.map */
	int perfmap = sec->type == PF_SEC_PERFMAP;
	const char *what = perfmap ? "perfmap" : "maps";
	if (pf_maps_decode(sec->data, sec->size, &pid, &time, &text, &len) < 0) {
		pfd_payload_error(sec, perfmap ? "PERFMAP" : "MAPS");
		return;
	}
	if (pfd_pr.json) {
		pfd_obj_begin(what);
		pfd_u64("pid", pid);
		pfd_u64("time", time);
		pfd_str("text", text, len);
		pfd_obj_end();
		return;
	}
	fprintf(pfd_pr.out, "  %s pid=%u time=%" PRIu64 " bytes=%zu\n", what, pid, time, len);
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t l = nl ? (size_t)(nl - text) : len;
		fputs("    ", pfd_pr.out);
		pfd_text_str(text, l);
		putc('\n', pfd_pr.out);
		l += nl ? 1 : 0;
		text += l;
		len -= l;
	}
}

void pfd_print_dso(const struct pf_section *sec)
{
	struct pf_dso_image d;
	if (pf_dso_image_decode(sec->data, sec->size, &d) < 0) {
		pfd_payload_error(sec, "DSO_IMAGE");
		return;
	}
	pfd_item_begin("dso_image", "  dso_image");
	pfd_u64("pid", d.pid);
	pfd_hex("addr", d.addr);
	pfd_bytes("build_id", d.build_id, d.build_id_size);
	pfd_str("path", d.path, d.path_len);
	pfd_u64("image_size", d.image_size);
	pfd_obj_end();
}

/* RUN (format/pfile.md 4.10) */
void pfd_print_run_mark(const struct pf_run_mark *m)
{
	pfd_item_begin("run", "  run");
	pfd_u64("run", m->run);
	pfd_u64("start_time", m->start_time);
	pfd_obj_end();
}

/* END's run table, one line per run */
void pfd_print_end_runs(const uint8_t *data, size_t size)
{
	uint32_t n = 0;
	if (pf_end_runs_count(data, size, &n) < 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct pf_run r = PF_RUN_INIT;
		if (pf_end_run(data, size, i, &r) < 0)
			return;
		pfd_item_begin("end_run", "  end_run");
		pfd_u64("run", i + 1);
		pfd_u64("start_time", r.start_time);
		pfd_u64("stop_time", r.stop_time);
		pfd_u64("duration_ns", r.duration_ns);
		pfd_u64("samples", r.samples);
		pfd_u64("lost_samples", r.lost_samples);
		pfd_key("exit_status");
		fprintf(pfd_pr.out, "%d", (int)r.exit_status);
		pfd_obj_end();
	}
}

void pfd_print_end(const struct pf_end *e)
{
	pfd_item_begin("end", "  end");
	pfd_u64("start_time", e->start_time);
	pfd_u64("stop_time", e->stop_time);
	pfd_u64("duration_ns", e->duration_ns);
	pfd_u64("samples", e->samples);
	pfd_u64("lost_samples", e->lost_samples);
	pfd_u64("throttle_events", e->throttle_events);
	pfd_u64("records", e->records);
	if (pfd_pr.json) {
		fputs(",\"records_by_type\":{", pfd_pr.out);
		int first = 1;
		for (unsigned t = 0; t < 32; t++) {
			if (!e->records_by_type[t])
				continue;
			const char *n = pf_record_type_name(t);
			fprintf(pfd_pr.out, "%s\"%s\":%" PRIu64, first ? "" : ",", n ? n : "?", e->records_by_type[t]);
			first = 0;
		}
		putc('}', pfd_pr.out);
	} else {
		for (unsigned t = 0; t < 32; t++) {
			if (!e->records_by_type[t])
				continue;
			const char *n = pf_record_type_name(t);
			fprintf(pfd_pr.out, " %s=%" PRIu64, n ? n : "?", e->records_by_type[t]);
		}
	}
	pfd_obj_end();
}

void pfd_print_section_line(const struct pf_section *sec)
{
	const char *n = pfd_section_name(sec->type);
	if (pfd_pr.json) {
		pfd_obj_begin("section");
		pfd_u64("index", sec->index);
		if (n)
			fprintf(pfd_pr.out, ",\"name\":\"%s\"", n);
		else
			fputs(",\"name\":null", pfd_pr.out);
		pfd_u64("section_type", sec->type);
		pfd_u64("offset", sec->offset);
		pfd_u64("stored", sec->stored_size);
		pfd_u64("raw", sec->raw_size);
		fprintf(pfd_pr.out, ",\"compression\":\"%s\"", sec->compression == PF_COMP_ZSTD ? "zstd" : "none");
		pfd_u64("transform", sec->transform);
		pfd_u64("flags", sec->flags);
		pfd_obj_end();
		return;
	}
	fprintf(pfd_pr.out, "section %" PRIu64 " ", sec->index);
	if (n)
		fputs(n, pfd_pr.out);
	else
		fprintf(pfd_pr.out, "type 0x%04x (unknown)", sec->type);
	fprintf(pfd_pr.out, " at offset %" PRIu64 ": stored %u raw %u %s", sec->offset, sec->stored_size, sec->raw_size,
		sec->compression == PF_COMP_ZSTD ? "zstd" : "none");
	/* 1: columns; 2: columns continuing the previous RECORDS section */
	if (sec->transform)
		fprintf(pfd_pr.out, " transform %u", sec->transform);
	fputc('\n', pfd_pr.out);
}

void pfd_print_file_header(const struct pf_file_header *fh)
{
	const char *order = fh->endian == PF_BIG_ENDIAN ? "big-endian" : "little-endian";
	if (pfd_pr.json) {
		pfd_obj_begin("file");
		pfd_cstr("name", pfd_pr.fname);
		fprintf(pfd_pr.out, ",\"version\":\"%u.%u\"", fh->version_major, fh->version_minor);
		fprintf(pfd_pr.out, ",\"byte_order\":\"%s\"", order);
		pfd_u64("word_size", fh->word_size);
		pfd_u64("e_machine", fh->e_machine);
		fprintf(pfd_pr.out, ",\"machine\":\"%s\"", pfd_machine_name(fh->e_machine));
		pfd_u64("flags", fh->flags);
		pfd_obj_end();
		return;
	}
	fprintf(pfd_pr.out, "file %s: pf format %u.%u, %s, %u-bit, machine %s (e_machine %u), flags 0x%x\n", pfd_pr.fname,
		fh->version_major, fh->version_minor, order, fh->word_size * 8u, pfd_machine_name(fh->e_machine),
		fh->e_machine, fh->flags);
}

/* ------------------------------------------------------------------------ */
/* --stats report                                                            */
/* ------------------------------------------------------------------------ */
