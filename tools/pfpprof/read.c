/*
 * pfpprof: reading a symbolized .pf (its resolved profile, events, mappings,
 * build-ids, totals) into the tables that encode.c turns into a profile.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli.h"
#include "grow.h"
#include "pprof.h"

#define NONE PF_PROF_NONE

static void report(struct pp_input *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(struct pp_input *in, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("pfpprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	in->damaged = 1;
}

static uint64_t mix(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ull;
	return v ^ (v >> 33);
}

/* ---- events ---- */

static int add_event(struct pp_input *in, const struct pf_section *sec)
{
	int rc = pf_events_add(in->evs, sec);
	if (rc < 0)
		return rc;
	uint32_t idx = pf_events_count(in->evs) - 1;
	const struct pf_event *ev = pf_events_get(in->evs, idx);
	if (idx >= sizeof(in->ev_group) / sizeof(in->ev_group[0]))
		return -E2BIG;
	uint32_t g;
	for (g = 0; g < in->n_groups; g++)
		if (strcmp(in->groups[g].name, ev->name) == 0)
			break;
	if (g == in->n_groups) {
		if (g == PP_MAX_GROUPS)
			return -E2BIG;
		struct pp_group *G = &in->groups[in->n_groups++];
		snprintf(G->name, sizeof G->name, "%s", ev->name[0] ? ev->name : "event");
		G->clock = ev->attr.type == PERF_TYPE_SOFTWARE &&
			   (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
		G->reads_group = pf_event_reads_group(ev);
		if (ev->attr.freq)
			G->freq_hz = ev->attr.sample_freq;
		else
			G->fixed_period = ev->attr.sample_period;
	}
	in->ev_group[idx] = (uint16_t)g;
	return 0;
}

/* The group of EVENT index `event`; a file without EVENT sections (or a
 * sample naming an event not defined) gets a group "event" of its own. */
static int group_of(struct pp_input *in, uint16_t event)
{
	if (event < pf_events_count(in->evs) && event < sizeof(in->ev_group) / sizeof(in->ev_group[0]))
		return in->ev_group[event];
	for (uint32_t g = 0; g < in->n_groups; g++)
		if (strcmp(in->groups[g].name, "[undefined event]") == 0)
			return (int)g;
	if (in->n_groups == PP_MAX_GROUPS)
		return -E2BIG;
	struct pp_group *G = &in->groups[in->n_groups];
	memset(G, 0, sizeof *G);
	snprintf(G->name, sizeof G->name, "[undefined event]");
	return (int)in->n_groups++;
}

/* ---- aggregated samples ---- */

static int agg_grow(struct pp_input *in)
{
	uint32_t cap = in->cap_agg ? in->cap_agg * 2 : 4096;
	struct pp_agg *a = calloc(cap, sizeof(*a));
	uint32_t *o = malloc((size_t)cap / 2 * sizeof(*o));
	if (!a || !o) {
		free(a);
		free(o);
		return -ENOMEM;
	}
	/* rehash in insertion order: `order` indexes the new table */
	for (uint32_t i = 0; i < in->n_agg; i++) {
		const struct pp_agg *e = &in->agg[in->order[i]];
		uint64_t h = mix(((uint64_t)e->stack << 32 | e->comm) ^ mix((uint64_t)e->pid << 32 | e->tid) ^ e->group);
		uint32_t k = (uint32_t)h & (cap - 1);
		while (a[k].used)
			k = (k + 1) & (cap - 1);
		a[k] = *e;
		o[i] = k;
	}
	free(in->agg);
	free(in->order);
	in->agg = a;
	in->order = o;
	in->cap_agg = cap;
	return 0;
}

static int agg_add(struct pp_input *in, const struct pp_agg *key, uint64_t count, uint64_t weight)
{
	if ((in->n_agg + 1) * 2 > in->cap_agg && agg_grow(in) < 0)
		return -ENOMEM;
	uint64_t h = mix(((uint64_t)key->stack << 32 | key->comm) ^ mix((uint64_t)key->pid << 32 | key->tid) ^ key->group);
	uint32_t mask = in->cap_agg - 1, k = (uint32_t)h & mask;
	for (;;) {
		struct pp_agg *e = &in->agg[k];
		if (!e->used) {
			*e = *key;
			e->used = 1;
			e->count = e->weight = 0;
			in->order[in->n_agg++] = k;
			break;
		}
		if (e->stack == key->stack && e->comm == key->comm && e->pid == key->pid && e->tid == key->tid &&
		    e->group == key->group)
			break;
		k = (k + 1) & mask;
	}
	in->agg[k].count += count;
	in->agg[k].weight += weight;
	return 0;
}

static int read_samples(struct pp_input *in, const struct pf_section *sec)
{
	size_t pos = 0;
	struct pf_prof_sample s;
	int rc;
	while ((rc = pf_prof_samples_next(sec->data, sec->size, &pos, &s)) > 0) {
		int g = group_of(in, s.event);
		if (g < 0)
			return g;
		struct pp_group *G = &in->groups[g];
		if (s.flags & PF_SAMPLE_LOST) {
			G->lost += s.period;
			continue;
		}
		if ((s.stack != NONE && s.stack >= pf_prof_n_stacks(in->prof)) ||
		    (s.comm != NONE && s.comm >= pf_prof_n_strings(in->prof))) {
			in->bad_refs++;
			continue;
		}
		if (!in->have_time || s.time < in->first_time)
			in->first_time = s.time;
		if (!in->have_time || s.time > in->last_time)
			in->last_time = s.time;
		in->have_time = 1;
		in->used++;
		G->samples++;
		G->period_sum += s.period;
		struct pp_agg key = { s.stack, s.comm, s.pid, s.tid, (uint16_t)g, 0, 0, 0 };
		if (agg_add(in, &key, 1, s.period) < 0)
			return -ENOMEM;
	}
	if (rc < 0)
		report(in, "%s: section %llu at offset %llu: SAMPLES entries run past the payload (the rest left out)",
		       in->name, (unsigned long long)sec->index, (unsigned long long)sec->offset);
	return 0;
}

/* ---- mapped files ---- */

static struct pp_file *file_get(struct pp_input *in, const char *path, size_t len)
{
	for (uint32_t i = 0; i < in->n_files; i++)
		if (strlen(in->files[i].path) == len && memcmp(in->files[i].path, path, len) == 0)
			return &in->files[i];
	if (pft_grow((void **)&in->files, &in->cap_files, (size_t)in->n_files + 1, sizeof(*in->files), 64) < 0)
		return NULL;
	struct pp_file *f = &in->files[in->n_files];
	memset(f, 0, sizeof *f);
	f->map_time = UINT64_MAX;
	if (!(f->path = strndup(path, len)))
		return NULL;
	in->n_files++;
	return f;
}

const struct pp_file *pp_file_find(const struct pp_input *in, const char *path)
{
	for (uint32_t i = 0; i < in->n_files; i++)
		if (strcmp(in->files[i].path, path) == 0)
			return &in->files[i];
	return NULL;
}

/* Notes the range [start, end) at file offset pgoff of `path`, mapped at time
 * t (0: unknown); the first address seen for each file range is kept. */
static int file_range(struct pp_input *in, const char *path, size_t len, uint64_t start, uint64_t end,
		      uint64_t pgoff, const uint8_t *bid, size_t bid_size, uint64_t t)
{
	struct pp_file *f = file_get(in, path, len);
	if (!f)
		return -ENOMEM;
	if (t && t < f->map_time)
		f->map_time = t;
	if (bid_size && !f->build_id_size) {
		f->build_id_size = (uint8_t)(bid_size > sizeof f->build_id ? sizeof f->build_id : bid_size);
		memcpy(f->build_id, bid, f->build_id_size);
	}
	for (uint32_t i = 0; i < f->n_ranges; i++)
		if (f->ranges[i].pgoff == pgoff && f->ranges[i].end - f->ranges[i].start == end - start)
			return 0;
	if (pft_grow((void **)&f->ranges, &f->cap_ranges, (size_t)f->n_ranges + 1, sizeof(*f->ranges), 4) < 0)
		return -ENOMEM;
	f->ranges[f->n_ranges++] = (struct pp_range){ start, end, pgoff };
	return 0;
}

static int read_mmaps(struct pp_input *in, const struct pf_section *sec)
{
	struct pf_rec_iter it;
	const struct perf_event_header *h;
	pf_rec_iter_init(&it, sec->data, sec->size);
	while (pf_rec_iter_next(&it, &h) > 0) {
		if (h->type != PERF_RECORD_MMAP && h->type != PERF_RECORD_MMAP2)
			continue;
		struct pf_mmap m;
		const struct pf_event *ev = pf_events_find(in->evs, h);
		if (pf_mmap_decode(ev, h, &m) < 0)
			continue;
		int exec = m.mmap2 ? (m.prot & PROT_EXEC) != 0 : !(h->misc & PERF_RECORD_MISC_MMAP_DATA);
		if (!exec || !m.len)
			continue;
		size_t bs = m.has_build_id ? (m.build_id_size > 20 ? 20 : m.build_id_size) : 0;
		if (file_range(in, m.filename, m.filename_len, m.addr, m.addr + m.len, m.pgoff, m.build_id, bs,
			       pf_record_time(ev, h)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int read_maps(struct pp_input *in, const struct pf_section *sec)
{
	uint32_t pid;
	uint64_t t;
	const char *text;
	size_t len, pos = 0;
	if (pf_maps_decode(sec->data, sec->size, &pid, &t, &text, &len) < 0)
		return 0;
	struct pf_proc_map m;
	while (pf_proc_maps_next(text, len, &pos, &m) > 0)
		if (m.perms[2] == 'x' && m.path_len &&
		    file_range(in, m.path, m.path_len, m.start, m.end, m.pgoff, NULL, 0, t) < 0)
			return -ENOMEM;
	return 0;
}

static int read_buildids(struct pp_input *in, const struct pf_section *sec)
{
	struct pf_buildid e;
	size_t pos = 0;
	while (pf_buildid_next(sec->data, sec->size, &pos, &e) > 0) {
		if (!e.build_id_size)
			continue;
		struct pp_file *f = file_get(in, e.path, e.path_len);
		if (!f)
			return -ENOMEM;
		if (!f->build_id_size) {
			f->build_id_size = e.build_id_size;
			memcpy(f->build_id, e.build_id, e.build_id_size);
		}
	}
	return 0;
}

static void read_meta(struct pp_input *in, const struct pf_section *sec)
{
	char mono[32], real[32];
	if (pf_kv_get(sec->data, sec->size, "clock_anchor_monotonic_ns", mono, sizeof mono) > 0 &&
	    pf_kv_get(sec->data, sec->size, "clock_anchor_realtime_ns", real, sizeof real) > 0) {
		in->anchor_mono_ns = strtoull(mono, NULL, 10);
		in->anchor_real_ns = strtoull(real, NULL, 10);
		in->have_anchor = 1;
	}
}

/* ---- the file ---- */

static int want(void *arg, uint16_t type)
{
	(void)arg;
	switch (type) {
	case PF_SEC_META: case PF_SEC_EVENT: case PF_SEC_RECORDS: case PF_SEC_MAPS: case PF_SEC_BUILDID:
	case PF_SEC_END: case PF_SEC_STRINGS: case PF_SEC_FRAMES: case PF_SEC_STACKS: case PF_SEC_SAMPLES:
		return 1;
	default:
		return 0;
	}
}

/* One section. @return 0, or -1 when the input cannot be exported. */
static int section(struct pp_input *in, const struct pf_section *s)
{
	int mark = pf_section_resolved_mark(s->type), rc = 0;
	if (!in->resolved && mark)
		in->resolved = mark;
	if (in->resolved < 0) {
		fprintf(stderr, "pfpprof: %s: not symbolized (no resolved profile before its first RECORDS "
			"section): run pfsym first, e.g. 'pfsym %s | pfpprof -o OUT.pb.gz'\n", in->name, in->name);
		return -1;
	}
	char msg[256] = "";
	switch (s->type) {
	case PF_SEC_META: read_meta(in, s); break;
	case PF_SEC_EVENT:
		if ((rc = add_event(in, s)) < 0 && rc != -ENOMEM) {
			report(in, "%s: section %llu at offset %llu: EVENT: %s (its samples count as '[undefined event]')",
			       in->name, (unsigned long long)s->index, (unsigned long long)s->offset, strerror(-rc));
			rc = 0;
		}
		break;
	case PF_SEC_RECORDS: rc = read_mmaps(in, s); break;
	case PF_SEC_MAPS: rc = read_maps(in, s); break;
	case PF_SEC_BUILDID: rc = read_buildids(in, s); break;
	case PF_SEC_STRINGS: case PF_SEC_FRAMES: case PF_SEC_STACKS:
		if ((rc = pf_prof_load_section(in->prof, s, msg, sizeof msg)) == -EBADMSG) {
			report(in, "%s: section %llu at offset %llu: %s (left out)", in->name, (unsigned long long)s->index,
			       (unsigned long long)s->offset, msg);
			rc = 0;
		}
		break;
	case PF_SEC_SAMPLES: rc = read_samples(in, s); break;
	case PF_SEC_END: {
		struct pf_end e;
		if (pf_end_decode(s->data, s->size, &e) == 0) {
			in->duration_ns = e.duration_ns;
			in->end_lost = e.lost_samples;
		}
		break;
	}
	}
	if (rc == -ENOMEM || rc == -E2BIG) {
		fprintf(stderr, "pfpprof: %s: %s\n", in->name,
			rc == -E2BIG ? "more than 64 event names or 8192 EVENT sections" : strerror(ENOMEM));
		return -1;
	}
	return 0;
}

int pp_read(struct pp_input *in, const char *name)
{
	memset(in, 0, sizeof *in);
	in->name = name;
	if (pf_prof_new(&in->prof) < 0 || pf_events_new(&in->evs) < 0) {
		fprintf(stderr, "pfpprof: %s\n", strerror(ENOMEM));
		return -1;
	}
	pf_reader *r;
	int rc = pf_reader_open(&r, name);
	if (rc < 0) {
		const char *m = r ? pf_reader_errmsg(r) : "";
		pf_cli_lib_error("pfpprof", m, name, rc);
		pf_reader_close(r);
		return -1;
	}
	pf_reader_set_want(r, want, NULL);
	pf_reader_set_stop_at_end(r, 1); /* another file appended is not read */
	struct pf_section s;
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			report(in, "%s", pf_reader_errmsg(r));
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (section(in, &s) < 0) {
			pf_reader_close(r);
			return -1;
		}
	}
	/* how much of an input that was not whole was used, once (format/
	 * pfile.md 5.4) */
	char note[600];
	if (in->resolved > 0 &&
	    pf_input_note(strcmp(name, "-") ? name : "<stdin>", pf_reader_complete(r),
			  in->damaged || pf_reader_errors(r) || in->bad_refs, in->used, pf_reader_samples_claimed(r),
			  note, sizeof note) > 0)
		fprintf(stderr, "pfpprof: %s\n", note);
	pf_reader_close(r);
	if (in->resolved <= 0) {
		fprintf(stderr, "pfpprof: %s: holds no resolved profile (no section of pfsym's): run pfsym first\n",
			name);
		return -1;
	}
	/* lost samples the END section counts but no LOST entry of the
	 * resolved profile carries (a SAMPLES section lost) still count */
	uint64_t lost = 0;
	for (uint32_t g = 0; g < in->n_groups; g++)
		lost += in->groups[g].lost;
	if (in->end_lost > lost && in->n_groups)
		in->groups[0].lost += in->end_lost - lost;
	if (in->bad_refs)
		report(in, "%s: %llu samples refer to stacks or strings that no intact section defines (left out)",
		       name, (unsigned long long)in->bad_refs);
	return 0;
}

void pp_input_free(struct pp_input *in)
{
	pf_prof_delete(in->prof);
	pf_events_delete(in->evs);
	free(in->agg);
	free(in->order);
	for (uint32_t i = 0; i < in->n_files; i++) {
		free(in->files[i].path);
		free(in->files[i].ranges);
	}
	free(in->files);
}

const char *pp_frame_name(const struct pf_prof *p, const struct pf_prof_frame *f, char *buf, size_t size)
{
	const char *name = f->name != NONE ? pf_prof_str_get(p, f->name, NULL) : NULL;
	const char *dso = f->dso != NONE ? pf_prof_str_get(p, f->dso, NULL) : NULL;
	if (name)
		return name;
	if (f->flags & PF_FRAME_KERNEL)
		return "[kernel]";
	if (!dso)
		return "[unknown]";
	/* [BASE], BASE the last path component without a pseudo file's brackets */
	const char *bn = strrchr(dso, '/');
	bn = bn && bn[1] ? bn + 1 : dso;
	size_t bl = strlen(bn);
	if (bl >= 2 && bn[0] == '[' && bn[bl - 1] == ']') {
		bn++;
		bl -= 2;
	}
	snprintf(buf, size, "[%.*s]", (int)bl, bn);
	return buf;
}
