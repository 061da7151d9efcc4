/*
 * pfdump - show everything a .pf file holds, or say where and why it is damaged.
 *
 * The file is streamed section by section through libpfile's reader: memory
 * is bounded by the largest section plus per-pid and per-file tables,
 * whatever the file size.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pfile/build.h>   /* pf_comms: the thread-name timeline (fork, exec, rename) */
#include <pfile/profile.h> /* --profile: the resolved profile's tables */
#include <pfile/records.h>
#include "pfdump/counts.h"
#include "pfdump/out.h"
#include "pfdump/profile.h"
#include "pfdump/sections.h"
#include "pfdump/records.h"
#include "pfdump/tracepoint.h"

#include "cli.h"
#include "keyset.h"
#include "folded.h"          /* pf_strtab: the thread names, interned */
#include "text.h"

enum mode { M_DUMP, M_HEADER, M_STATS, M_BUILDIDS };

static enum mode mode = M_DUMP;
static int show_profile; /* --profile: the entries of STRINGS, FRAMES, STACKS, SAMPLES */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pfdump [OPTIONS] [FILE|-]\n"
		"Show the contents of a .pf recording: file header, META, events, sections\n"
		"and every perf record (in time order within each RECORDS section).\n"
		"FILE defaults to standard input (\"-\").\n"
		"\n"
		"Options:\n"
		"  -H, --header      show the file header, META, events and the section list only\n"
		"  -s, --stats       records per type, samples per process, lost samples,\n"
		"                    section sizes and compression, completeness\n"
		"  -b, --build-ids   one \"BUILDID PATH\" line per file with a build-id\n"
		"                    (and [vdso], from its recorded image)\n"
		"  -p, --profile     also show the resolved profile (pfsym's output): one line\n"
		"                    per string, frame, stack node and sample\n"
		"  -j, --json        JSON Lines output (one object per line)\n"
		"  -h, --help        show this help and exit\n"
		"  -V, --version     show the version and exit\n"
		"\n"
		"Exit status: 0 intact (also for an incomplete recording without END),\n"
		"1 damaged or unreadable file, 2 usage error.\n");
}

/* ------------------------------------------------------------------------ */
/* Tables for --stats and --build-ids (sized by distinct pids / files)       */
/* ------------------------------------------------------------------------ */

struct pident {
	uint32_t pid;
	uint32_t used;
	uint64_t samples;
	uint64_t last_time; /* of its last sample, ns: its name is the one then */
	uint32_t any_tid;   /* a thread of it that was sampled, should its main thread be unknown */
};
/* Thread names over time, as pfsym and pffold name samples: COMM records
 * (exec, prctl), a forked thread's parent's name, THREADS at the start. */
static struct pf_strtab comm_strs;
static struct pf_comms *comms;
static struct pident *pids;
static size_t pid_cap, pid_n;

static uint32_t hash32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static struct pident *pid_get(uint32_t pid)
{
	if ((pid_n + 1) * 2 > pid_cap) {
		size_t ncap = pid_cap ? pid_cap * 2 : 256;
		struct pident *n = calloc(ncap, sizeof(*n));
		if (!n) {
			fprintf(stderr, "pfdump: out of memory\n");
			exit(1);
		}
		for (size_t i = 0; i < pid_cap; i++) {
			if (!pids[i].used)
				continue;
			size_t h = hash32(pids[i].pid) & (ncap - 1);
			while (n[h].used)
				h = (h + 1) & (ncap - 1);
			n[h] = pids[i];
		}
		free(pids);
		pids = n;
		pid_cap = ncap;
	}
	size_t h = hash32(pid) & (pid_cap - 1);
	while (pids[h].used) {
		if (pids[h].pid == pid)
			return &pids[h];
		h = (h + 1) & (pid_cap - 1);
	}
	pids[h].used = 1;
	pids[h].pid = pid;
	pid_n++;
	return &pids[h];
}

/* Thread tid is named comm[0..len) from time_ns on. */
void pfd_comm_note(uint32_t tid, uint64_t time_ns, const char *comm, size_t len)
{
	int64_t id = pf_strtab_intern(&comm_strs, comm, len, NULL);
	if (id < 0 || pf_comms_set(comms, tid, time_ns, (uint32_t)id) < 0) {
		fprintf(stderr, "pfdump: out of memory\n");
		exit(1);
	}
}

/* The name of process p: its main thread's at its last sample, else that of
 * a thread of it that was sampled; pid 0's PF_COMM_IDLE; "?" when nothing
 * names it. */
static const char *pid_name(const struct pident *p)
{
	uint32_t id = pf_comms_get(comms, p->pid, p->last_time);
	if (id == PF_COMMS_NONE)
		id = pf_comms_get(comms, p->any_tid, p->last_time);
	if (id == PF_COMMS_NONE)
		return p->pid == 0 ? PF_COMM_IDLE : "?";
	return pf_strtab_str(&comm_strs, id);
}

/* build-id set: key = xxh3 of (build-id, path), 63 bits (keyset.h takes
 * every key but UINT64_MAX) */
static struct pf_keyset bid_set;

static int bid_seen(const uint8_t *id, size_t idn, const char *path, size_t pn)
{
	uint8_t tmp[64 + 4096];
	if (pn > 4096)
		pn = 4096;
	memcpy(tmp, id, idn);
	memcpy(tmp + idn, path, pn);
	int rc = pf_keyset_add(&bid_set, pf_xxh3(tmp, idn + pn) >> 1);
	if (rc < 0) {
		fprintf(stderr, "pfdump: out of memory\n");
		exit(1);
	}
	return rc == 0;
}

void pfd_print_buildid(const uint8_t *id, size_t idn, const char *path, size_t pn)
{
	pfd_print_buildid_proof(id, idn, path, pn, NULL);
}

void pfd_print_buildid_proof(const uint8_t *id, size_t idn, const char *path, size_t pn, const char *proof)
{
	if (!idn || bid_seen(id, idn, path, pn))
		return;
	if (pfd_pr.json) {
		pfd_obj_begin("buildid");
		pfd_bytes("build_id", id, idn);
		pfd_str("path", path, pn);
		if (proof)
			pfd_str("proof", proof, strlen(proof));
		pfd_obj_end();
		return;
	}
	for (size_t i = 0; i < idn; i++)
		fprintf(pfd_pr.out, "%02x", id[i]);
	putc(' ', pfd_pr.out);
	pfd_text_str(path, pn);
	if (proof)
		fprintf(pfd_pr.out, "\tproof=%s", proof);
	putc('\n', pfd_pr.out);
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

struct secstat {
	uint64_t count, raw, stored;
};
static struct secstat secstats[3][256]; /* [range: 0 raw, 1 profile, 2 other][type & 0xff] */
static uint64_t rec_by_type[65]; /* [64] = unknown types */
static uint64_t n_records, n_samples, n_lost, bad_records;
static uint64_t t_first = UINT64_MAX, t_last;
static int have_end;
static struct pf_end end_totals;
static uint64_t file_sections;

static struct secstat *secstat_of(uint16_t type)
{
	if (type < 0x100)
		return &secstats[0][type];
	if (type < 0x200)
		return &secstats[1][type & 0xff];
	return &secstats[2][0];
}

/* ------------------------------------------------------------------------ */
/* Event descriptions (format/pfile.md 4.2.1) and tracepoint fields          */
/* ------------------------------------------------------------------------ */

struct evdesc {
	char name[128];     /* the EVENT's name */
	int present;
	const uint8_t *kv;  /* the key/value description (a copy), kv_len bytes */
	size_t kv_len;
	struct pfd_tp tp;   /* tp_format parsed */
	int has_tp;
	char tpname[128];   /* "sched:sched_switch" */
	struct perf_event_attr attr; /* as stored */
	int has_attr;
};
/* The COUNTS section (format/pfile.md 4.9), kept for --stats. */
static uint8_t *counts_kv;
static size_t counts_len;
static struct evdesc *descs; /* by EVENT index */
static uint32_t ndescs;

/* The parsed tp_format of EVENT index (and its "sys:name" in *tpname), or
 * NULL when the EVENT has none (pfdump/records.h). */
const struct pfd_tp *pfd_event_tp(uint32_t index, const char **tpname)
{
	if (index >= ndescs || !descs[index].has_tp)
		return NULL;
	*tpname = descs[index].tpname;
	return &descs[index].tp;
}

static void desc_add(const struct pf_event *ev, const struct pf_section *sec)
{
	size_t len;
	uint32_t index = ev->index;
	const uint8_t *kv = pfd_event_desc(sec->data, sec->size, &len);
	if (index > 1u << 20)
		return;
	if (index >= ndescs) {
		struct evdesc *n = realloc(descs, (index + 1) * sizeof(*n));
		if (!n)
			return;
		memset(n + ndescs, 0, (index + 1 - ndescs) * sizeof(*n));
		descs = n;
		ndescs = index + 1;
	}
	struct evdesc *d = &descs[index];
	snprintf(d->name, sizeof(d->name), "%s", ev->name);
	d->present = 1;
	d->attr = ev->attr;
	d->has_attr = 1;
	if (!kv)
		return;
	uint8_t *copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, kv, len);
	d->kv = copy;
	d->kv_len = len;
	size_t pos = 0, kl, vl;
	const char *k, *v;
	while (pf_kv_next(d->kv, d->kv_len, &pos, &k, &kl, &v, &vl) > 0) {
		if (kl == 9 && !memcmp(k, "tp_format", 9) && !d->has_tp)
			d->has_tp = pfd_tp_parse(v, vl, &d->tp) == 0;
		else if (kl == 10 && !memcmp(k, "tracepoint", 10))
			snprintf(d->tpname, sizeof(d->tpname), "%.*s", (int)(vl < 127 ? vl : 127), v);
	}
}

static void descs_free(void)
{
	for (uint32_t i = 0; i < ndescs; i++) {
		free((void *)descs[i].kv);
		if (descs[i].has_tp)
			pfd_tp_free(&descs[i].tp);
	}
	free(descs);
	descs = NULL;
	ndescs = 0;
	free(counts_kv);
	counts_kv = NULL;
}

/* The description's keys on an "event" line; tp_format as its byte count. */
void pfd_print_desc(uint32_t index)
{
	if (index >= ndescs || !descs[index].kv)
		return;
	size_t pos = 0, kl, vl;
	const char *k, *v;
	char kb[64];
	while (pf_kv_next(descs[index].kv, descs[index].kv_len, &pos, &k, &kl, &v, &vl) > 0) {
		snprintf(kb, sizeof(kb), "%.*s", (int)(kl < 63 ? kl : 63), k);
		if (!strcmp(kb, "tp_format"))
			pfd_u64("tp_format_bytes", vl);
		else
			pfd_str(kb, v, vl);
	}
}


static void counts_keep(const struct pf_section *sec)
{
	free(counts_kv);
	counts_kv = malloc(sec->size ? sec->size : 1);
	counts_len = counts_kv ? sec->size : 0;
	if (counts_kv)
		memcpy(counts_kv, sec->data, sec->size);
}

/* A description key's value as a string (empty when absent). */
static void desc_get(uint32_t index, const char *key, char *dst, size_t size)
{
	dst[0] = 0;
	if (index < ndescs && descs[index].kv)
		pf_kv_get(descs[index].kv, descs[index].kv_len, key, dst, size);
}

/* The "count", "thread_count" and "ratio" objects (pfdump/counts.c). */
static void print_counts(void)
{
	if (!counts_kv)
		return;
	struct pfd_evinfo *ev = calloc(ndescs ? ndescs : 1, sizeof(*ev));
	char (*txt)[4][256] = calloc(ndescs ? ndescs : 1, sizeof(*txt));
	if (!ev || !txt) {
		free(ev);
		free(txt);
		return;
	}
	for (uint32_t i = 0; i < ndescs; i++) {
		ev[i].present = descs[i].present;
		ev[i].name = descs[i].name;
		ev[i].attr = descs[i].has_attr ? &descs[i].attr : NULL;
		desc_get(i, "spec", txt[i][0], sizeof(txt[i][0]));
		desc_get(i, "pmu", txt[i][1], sizeof(txt[i][1]));
		desc_get(i, "scale", txt[i][2], sizeof(txt[i][2]));
		desc_get(i, "unit", txt[i][3], sizeof(txt[i][3]));
		ev[i].spec = txt[i][0];
		ev[i].pmu = txt[i][1];
		ev[i].scale = txt[i][2][0] ? strtod(txt[i][2], NULL) : 1.0;
		ev[i].unit = txt[i][3];
	}
	pfd_counts_print(counts_kv, counts_len, ev, ndescs);
	free(ev);
	free(txt);
}

/* ------------------------------------------------------------------------ */
/* RECORDS sections                                                          */
/* ------------------------------------------------------------------------ */

struct ent {
	uint64_t time;
	uint32_t off;
	uint32_t seq;
};
static struct ent *ents;
static size_t ent_cap;

static int ent_cmp(const void *x, const void *y)
{
	const struct ent *a = x, *b = y;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void record_error(const struct pf_section *sec, size_t rec_off, const char *what)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s: section %" PRIu64 " at offset %" PRIu64 ": record at byte %zu of the section's data: %s",
		 pfd_pr.fname, sec->index, sec->offset, rec_off, what);
	pfd_error_line(msg);
}

static void stats_record(const struct pf_events *evs, const struct perf_event_header *h)
{
	n_records++;
	rec_by_type[h->type < 64 ? h->type : 64]++;
	const struct pf_event *ev = pf_events_find(evs, h);
	uint64_t t = pf_record_time(ev, h);
	if (t) {
		if (t < t_first)
			t_first = t;
		if (t > t_last)
			t_last = t;
	}
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct pf_sample s;
		n_samples++;
		if (!ev || pf_sample_decode(ev, h, &s) < 0) {
			bad_records++;
			break;
		}
		if (s.present & PERF_SAMPLE_TID) {
			struct pident *p = pid_get(s.pid);
			if (!p->samples++ || s.tid == s.pid)
				p->any_tid = s.tid;
			if ((s.present & PERF_SAMPLE_TIME) && s.time > p->last_time)
				p->last_time = s.time;
		}
		break;
	}
	case PERF_RECORD_COMM: {
		struct pf_comm c;
		if (pf_comm_decode(ev, h, &c) == 0)
			pfd_comm_note(c.tid, t, c.comm, c.comm_len);
		break;
	}
	case PERF_RECORD_FORK: {
		/* a child that never execs keeps its parent's name */
		struct pf_task k;
		if (pf_task_decode(ev, h, &k) == 0 && pf_comms_fork(comms, k.tid, k.ptid, k.time) < 0) {
			fprintf(stderr, "pfdump: out of memory\n");
			exit(1);
		}
		break;
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct pf_lost l;
		if (pf_lost_decode(ev, h, &l) == 0)
			n_lost += l.lost;
		break;
	}
	}
}

static void mmap2_buildid(const struct pf_events *evs, const struct perf_event_header *h)
{
	if (h->type != PERF_RECORD_MMAP2 || !(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
		return;
	struct pf_mmap m;
	if (pf_mmap_decode(pf_events_find(evs, h), h, &m) < 0)
		return;
	pfd_print_buildid(m.build_id, m.build_id_size > 20 ? 20 : m.build_id_size, m.filename, m.filename_len);
}

static void do_records(const struct pf_section *sec, const struct pf_events *evs)
{
	struct pf_rec_iter it;
	const struct perf_event_header *h;
	int rc;
	size_t n = 0;

	pf_rec_iter_init(&it, sec->data, sec->size);
	if (mode == M_STATS || mode == M_BUILDIDS) {
		size_t at = 0;
		while ((rc = pf_rec_iter_next(&it, &h)) > 0) {
			if (mode == M_STATS)
				stats_record(evs, h);
			else
				mmap2_buildid(evs, h);
			at = it.offset;
		}
		if (rc < 0) {
			bad_records++;
			if (mode == M_STATS)
				record_error(sec, at, "bad record size (rest of the section lost)");
			else
				record_error(sec, at, "bad record size (rest of the section lost)");
		}
		return;
	}
	if (mode != M_DUMP)
		return;
	/* sort by time, stable: entries hold the offset and the arrival order */
	size_t max = sec->size / 8 + 1;
	if (max > ent_cap) {
		free(ents);
		ents = malloc(max * sizeof(*ents));
		if (!ents) {
			fprintf(stderr, "pfdump: out of memory\n");
			exit(1);
		}
		ent_cap = max;
	}
	size_t at = 0;
	while ((rc = pf_rec_iter_next(&it, &h)) > 0) {
		ents[n].time = pf_record_time(pf_events_find(evs, h), h);
		ents[n].off = (uint32_t)at;
		ents[n].seq = (uint32_t)n;
		n++;
		at = it.offset;
	}
	if (n)
		qsort(ents, n, sizeof(*ents), ent_cmp);
	for (size_t i = 0; i < n; i++) {
		h = (const struct perf_event_header *)(const void *)(sec->data + ents[i].off);
		n_records++;
		if (pfd_print_record(sec, evs, h) < 0) {
			char what[128];
			snprintf(what, sizeof(what), "%s record of %u bytes is damaged (fields run past its size)",
				 pf_record_type_name(h->type) ? pf_record_type_name(h->type) : "unknown", h->size);
			record_error(sec, ents[i].off, what);
		}
	}
	if (rc < 0) {
		char what[160];
		uint16_t sz = 0;
		if (sec->size - at >= 8)
			memcpy(&sz, sec->data + at + 6, 2);
		snprintf(what, sizeof(what), "bad record size %u (rest of the section, %zu bytes, lost)", sz,
			 sec->size - at);
		record_error(sec, at, what);
	}
}

static int pid_cmp(const void *x, const void *y)
{
	const struct pident *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static void print_stats(int truncated)
{
	const char *state = pfd_pr.n_errors ? "damaged" : have_end ? "complete" : "incomplete (no END section)";
	uint64_t denom = n_samples + n_lost;
	double share = denom ? 100.0 * (double)n_lost / (double)denom : 0.0;
	(void)truncated;
	if (pfd_pr.json) {
		pfd_obj_begin("stats");
		pfd_cstr("state", pfd_pr.n_errors ? "damaged" : have_end ? "complete" : "incomplete");
		pfd_u64("records", n_records);
		pfd_u64("samples", n_samples);
		pfd_u64("lost_samples", n_lost);
		fprintf(pfd_pr.out, ",\"lost_share\":%.4f", share / 100.0);
		if (t_last)
			pfd_u64("duration_ns", t_last - t_first);
		fputs(",\"records_by_type\":{", pfd_pr.out);
		int first = 1;
		for (unsigned t = 0; t <= 64; t++) {
			if (!rec_by_type[t])
				continue;
			const char *n = t < 64 ? pf_record_type_name(t) : "UNKNOWN";
			fprintf(pfd_pr.out, "%s\"%s\":%" PRIu64, first ? "" : ",", n ? n : "UNKNOWN", rec_by_type[t]);
			first = 0;
		}
		fputs("}}\n", pfd_pr.out);
	} else {
		fprintf(pfd_pr.out, "state: %s\n", state);
		fprintf(pfd_pr.out, "records: %" PRIu64 "\n", n_records);
		for (unsigned t = 0; t <= 64; t++) {
			if (!rec_by_type[t])
				continue;
			const char *n = t < 64 ? pf_record_type_name(t) : NULL;
			if (n)
				fprintf(pfd_pr.out, "  %-18s %12" PRIu64 "\n", n, rec_by_type[t]);
			else
				fprintf(pfd_pr.out, "  %-18s %12" PRIu64 "\n", "UNKNOWN", rec_by_type[t]);
		}
		fprintf(pfd_pr.out, "samples: %" PRIu64 "\n", n_samples);
		fprintf(pfd_pr.out, "lost samples: %" PRIu64 " (%.2f%% of %" PRIu64 ")\n", n_lost, share, denom);
		if (t_last)
			fprintf(pfd_pr.out, "time span: %" PRIu64 ".%09" PRIu64 " s\n", (t_last - t_first) / 1000000000u,
				(t_last - t_first) % 1000000000u);
	}
	/* samples per process, most first */
	size_t k = 0;
	for (size_t i = 0; i < pid_cap; i++)
		if (pids[i].used && pids[i].samples)
			pids[k++] = pids[i];
	if (k)
		qsort(pids, k, sizeof(*pids), pid_cmp);
	if (!pfd_pr.json && k)
		fprintf(pfd_pr.out, "samples per process:\n");
	for (size_t i = 0; i < k; i++) {
		const char *c = pid_name(&pids[i]);
		if (pfd_pr.json) {
			pfd_obj_begin("process");
			pfd_u64("pid", pids[i].pid);
			pfd_cstr("comm", c);
			pfd_u64("samples", pids[i].samples);
			fprintf(pfd_pr.out, ",\"share\":%.4f", n_samples ? (double)pids[i].samples / (double)n_samples : 0.0);
			pfd_obj_end();
		} else {
			/* the name as the record dump writes it (control bytes
			 * escaped), in 16 columns */
			size_t n = strlen(c), shown = n;
			for (size_t j = 0; j < n; j++) {
				unsigned char b = (unsigned char)c[j];
				shown += b == '\n' || b == '\t' || b == '\\' ? 1 : b < 0x20 || b == 0x7f ? 3 : 0;
			}
			fputs("  ", pfd_pr.out);
			pfd_text_str(c, n);
			fprintf(pfd_pr.out, "%*s %8u %12" PRIu64 "  %6.2f%%\n", shown < 16 ? (int)(16 - shown) : 0, "",
				pids[i].pid, pids[i].samples,
				n_samples ? 100.0 * (double)pids[i].samples / (double)n_samples : 0.0);
		}
	}
	pid_cap = 0; /* entries were compacted */
	if (counts_kv && !pfd_pr.json)
		fprintf(pfd_pr.out, "counts at the end:\n");
	print_counts();
	if (!pfd_pr.json)
		fprintf(pfd_pr.out, "sections: %" PRIu64 "\n  %-10s %6s %14s %14s %7s\n", file_sections, "type", "count",
			"raw bytes", "stored bytes", "ratio");
	uint64_t traw = 0, tsto = 0;
	for (int g = 0; g < 3; g++) {
		for (int t = 0; t < 256; t++) {
			struct secstat *s = &secstats[g][t];
			if (!s->count)
				continue;
			uint16_t type = (uint16_t)(g == 0 ? t : g == 1 ? 0x100 + t : 0xffff);
			const char *n = g == 2 ? "other" : pfd_section_name(type);
			char tmp[16];
			if (!n) {
				snprintf(tmp, sizeof(tmp), "0x%04x", type);
				n = tmp;
			}
			double ratio = s->stored ? (double)s->raw / (double)s->stored : 0.0;
			traw += s->raw;
			tsto += s->stored;
			if (pfd_pr.json) {
				pfd_obj_begin("section_stats");
				pfd_cstr("name", n);
				pfd_u64("count", s->count);
				pfd_u64("raw", s->raw);
				pfd_u64("stored", s->stored);
				fprintf(pfd_pr.out, ",\"ratio\":%.3f", ratio);
				pfd_obj_end();
			} else {
				fprintf(pfd_pr.out, "  %-10s %6" PRIu64 " %14" PRIu64 " %14" PRIu64 " %7.2f\n", n, s->count, s->raw,
					s->stored, ratio);
			}
		}
	}
	if (!pfd_pr.json)
		fprintf(pfd_pr.out, "  %-10s %6" PRIu64 " %14" PRIu64 " %14" PRIu64 " %7.2f\n", "total", file_sections, traw,
			tsto, tsto ? (double)traw / (double)tsto : 0.0);
	if (have_end && !pfd_pr.json)
		fprintf(pfd_pr.out, "END totals: samples %" PRIu64 ", lost %" PRIu64 ", records %" PRIu64 ", throttle %" PRIu64 "\n",
			end_totals.samples, end_totals.lost_samples, end_totals.records, end_totals.throttle_events);
}

/* ------------------------------------------------------------------------ */
/* main                                                                      */
/* ------------------------------------------------------------------------ */

/* One intact section: decoded, kept for later ones, printed as the mode asks. */
static void do_section(const struct pf_section *sec, struct pf_events *evs, int show_hdr)
{
	int rc;
	switch (sec->type) {
	case PF_SEC_META:
		if (show_hdr)
			pfd_print_meta(sec);
		break;
	case PF_SEC_EVENT:
		rc = pf_events_add(evs, sec);
		if (rc < 0) {
			char msg[256];
			snprintf(msg, sizeof(msg), "%s: section %" PRIu64 " at offset %" PRIu64 ": %s EVENT payload",
				 pfd_pr.fname, sec->index, sec->offset,
				 rc == -EPROTONOSUPPORT ? "unsupported (unknown attr fields set)" : "malformed");
			pfd_error_line(msg);
		} else {
			desc_add(pf_events_get(evs, pf_events_count(evs) - 1), sec);
			if (show_hdr)
				pfd_print_event(pf_events_get(evs, pf_events_count(evs) - 1));
		}
		break;
	case PF_SEC_RECORDS:
		do_records(sec, evs);
		break;
	case PF_SEC_COUNTS:
		counts_keep(sec);
		if (show_hdr)
			print_counts();
		break;
	case PF_SEC_THREADS:
		pfd_do_threads(sec, show_hdr && mode == M_DUMP);
		break;
	case PF_SEC_BUILDID:
		pfd_buildid_sec(sec, mode == M_BUILDIDS, mode == M_DUMP);
		break;
	case PF_SEC_KSYMS:
		pfd_ksyms_sec(sec, mode == M_BUILDIDS, mode == M_DUMP);
		break;
	case PF_SEC_MAPS:
	case PF_SEC_PERFMAP:
		if (mode == M_DUMP)
			pfd_print_maps(sec);
		break;
	case PF_SEC_DSO_IMAGE:
		if (mode == M_DUMP) {
			pfd_print_dso(sec);
		} else if (mode == M_BUILDIDS) {
			/* [vdso]: the build-id of the image recorded, not a file's */
			struct pf_dso_image d;
			if (pf_dso_image_decode(sec->data, sec->size, &d) < 0)
				pfd_payload_error(sec, "DSO_IMAGE");
			else
				pfd_print_buildid(d.build_id, d.build_id_size, d.path, d.path_len);
		}
		break;
	case PF_SEC_END:
		if (pf_end_decode(sec->data, sec->size, &end_totals) < 0) {
			pfd_payload_error(sec, "END");
			break;
		}
		have_end = 1;
		if (mode == M_DUMP) {
			pfd_print_end(&end_totals);
			pfd_print_end_runs(sec->data, sec->size);
		}
		break;
	case PF_SEC_STRINGS:
	case PF_SEC_FRAMES:
	case PF_SEC_STACKS:
	case PF_SEC_SAMPLES:
		if (show_profile && show_hdr)
			pfd_profile_section(sec);
		break;
	case PF_SEC_RUN:
		if (mode == M_DUMP) {
			struct pf_run_mark m;
			if (pf_run_mark_decode(sec->data, sec->size, &m) < 0) {
				pfd_payload_error(sec, "RUN");
				break;
			}
			pfd_print_run_mark(&m);
		}
		break;
	default:
		break;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "header", no_argument, NULL, 'H' },   { "stats", no_argument, NULL, 's' },
		{ "build-ids", no_argument, NULL, 'b' }, { "json", no_argument, NULL, 'j' },
		{ "profile", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },     { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	if (pf_strtab_init(&comm_strs) < 0) {
		fprintf(stderr, "pfdump: out of memory\n");
		return 1;
	}
	if (pf_comms_new(&comms) < 0 || pfd_profile_init() < 0) {
		fprintf(stderr, "pfdump: out of memory\n");
		return 1;
	}
	/* a closed output pipe is a write error (EPIPE), reported in one line */
	pf_out_ignore_sigpipe();
	while ((c = getopt_long(argc, argv, "HsbjphV", opts, NULL)) != -1) {
		switch (c) {
		case 'H': mode = M_HEADER; break;
		case 's': mode = M_STATS; break;
		case 'b': mode = M_BUILDIDS; break;
		case 'j': pfd_pr.json = 1; break;
		case 'p': show_profile = 1; break;
		default: return pf_cli_std_opt("pfdump", c, usage);
		}
	}
	pfd_pr.fname = "-";
	if (pf_cli_one_input("pfdump", argc, argv, optind, &pfd_pr.fname))
		return PF_EXIT_USAGE;
	pfd_pr.out = stdout;
	static char obuf[1 << 20];
	setvbuf(pfd_pr.out, obuf, _IOFBF, sizeof(obuf));

	pf_reader *r = NULL;
	int rc = pf_reader_open(&r, pfd_pr.fname);
	if (rc < 0) {
		fprintf(stderr, "pfdump: %s\n", r ? pf_reader_errmsg(r) : strerror(-rc));
		pf_reader_close(r);
		return 1;
	}
	int show_hdr = mode == M_DUMP || mode == M_HEADER;
	int werr = 0; /* errno of the first failed write */
	if (show_hdr)
		pfd_print_file_header(pf_reader_header(r));

	struct pf_events *evs;
	if (pf_events_new(&evs) < 0) {
		fprintf(stderr, "pfdump: out of memory\n");
		return 1;
	}
	struct pf_section sec;
	int truncated = 0;
	while ((rc = pf_reader_next(r, &sec)) != 0) {
		if (rc < 0) {
			pfd_error_line(pf_reader_errmsg(r));
			if (!pf_reader_can_continue(r)) {
				truncated = 1;
				break;
			}
			continue;
		}
		file_sections++;
		struct secstat *ss = secstat_of(sec.type);
		ss->count++;
		ss->raw += sec.raw_size;
		ss->stored += sec.stored_size;
		if (show_hdr)
			pfd_print_section_line(&sec);
		do_section(&sec, evs, show_hdr);
		/* each section's lines go out with it: a reader at the other end
		 * of a pipe (pfrec -o - | pfdump -) sees records as they come */
		if (mode != M_STATS && fflush(pfd_pr.out) != 0 && !werr)
			werr = errno;
		/* the output failed (`pfdump run.pf | head`): nothing more to do
		 * (stdio drops what it could not write: the errno is this flush's) */
		if (ferror(pfd_pr.out))
			break;
	}
	if (mode == M_STATS && !ferror(pfd_pr.out))
		print_stats(truncated);
	int e = pf_out_flush(pfd_pr.out);
	if (e && werr)
		e = werr;
	if (e) {
		pf_out_error("pfdump", "-", e);
		pfd_pr.n_errors++;
	}
	if (!pfd_pr.n_errors && !have_end)
		fprintf(stderr, "pfdump: %s: incomplete recording (no END section)\n", pfd_pr.fname);
	pf_events_delete(evs);
	descs_free();
	pf_reader_close(r);
	free(ents);
	free(pids);
	pf_strtab_free(&comm_strs);
	pf_comms_delete(comms);
	pfd_profile_free();
	pf_keyset_free(&bid_set);
	return pfd_pr.n_errors ? 1 : 0;
}
