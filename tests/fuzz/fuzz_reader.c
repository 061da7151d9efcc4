/*
 * fuzz_reader - the container reader (libpfile/reader.c) and every payload
 * decoder behind it: META and SYMINFO key/values, EVENT (pf_events_add), the
 * perf records of RECORDS (sample, mmap, comm, task, lost, throttle, sample
 * id trailers, byte swapping, transform 1), MAPS (and the /proc/PID/maps
 * parser of the mapping timeline), BUILDID, DSO_IMAGE, THREADS, END (with
 * its run table), RUN, KSYMS (decode, re-encode, lookups), and the resolved-profile tables STRINGS, FRAMES,
 * STACKS and SAMPLES.
 *
 * Input: one option byte, then a .pf file. Options: bit 0 recompute the
 * checksums (so that mutated payloads reach the decoders), bit 1 skip the
 * payloads of RECORDS and MAPS (pf_reader_set_want), bit 2 take every
 * payload with pf_reader_swap_data().
 * Invariants: every pointer a decoder hands out lies in its payload; a
 * damaged file never stops a reader that says it can continue from
 * returning the next section; sizes add up.
 */
#include <errno.h>

#include "fuzz.h"
#include "maps.h"
#include "build.h"
#include "fold.h"
#include "ksyms.h"

static int want_some(void *arg, uint16_t type)
{
	(void)arg;
	return type != PF_SEC_RECORDS && type != PF_SEC_MAPS;
}

static void kv(const uint8_t *d, size_t n)
{
	size_t pos = 0;
	const char *k, *v;
	size_t kl, vl;
	int rc;
	while ((rc = pf_kv_next(d, n, &pos, &k, &kl, &v, &vl)) > 0) {
		FUZZ_ASSERT(k >= (const char *)d && k + kl <= (const char *)d + n);
		FUZZ_ASSERT(v >= (const char *)d && v + vl <= (const char *)d + n);
		fuzz_touch(k, kl);
		fuzz_touch(v, vl);
	}
	char out[64];
	int g = pf_kv_get(d, n, "arch", out, sizeof(out));
	FUZZ_ASSERT(g < 0 || strlen(out) < sizeof(out));
}

static void record(const struct pf_events *evs, const struct perf_event_header *h)
{
	const struct pf_event *ev = pf_events_find(evs, h);
	(void)pf_record_type_name(h->type);
	(void)pf_record_time(ev, h);
	union {
		struct pf_sample s;
		struct pf_mmap m;
		struct pf_comm c;
		struct pf_task t;
		struct pf_lost l;
		struct pf_throttle th;
		struct pf_sample_id id;
	} u;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (ev && pf_sample_decode(ev, h, &u.s) == 0) {
			struct pf_sample *s = &u.s;
			if (s->read)
				fuzz_touch(s->read, (size_t)s->read_size * 8);
			if (s->callchain)
				fuzz_touch(s->callchain, (size_t)s->callchain_nr * 8);
			if (s->raw)
				fuzz_touch(s->raw, s->raw_size);
			if (s->branch)
				fuzz_touch(s->branch, (size_t)s->branch_nr * sizeof(*s->branch));
			if (s->user_regs)
				fuzz_touch(s->user_regs, 8 * (size_t)__builtin_popcountll(s->user_regs_mask));
			if (s->user_stack)
				fuzz_touch(s->user_stack, (size_t)s->user_stack_size);
			if (s->intr_regs)
				fuzz_touch(s->intr_regs, 8 * (size_t)__builtin_popcountll(s->intr_regs_mask));
			if (s->aux)
				fuzz_touch(s->aux, (size_t)s->aux_size);
		}
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (pf_mmap_decode(ev, h, &u.m) == 0) {
			fuzz_touch(u.m.filename, u.m.filename_len + 1);
			FUZZ_ASSERT(u.m.filename[u.m.filename_len] == 0);
		}
		break;
	case PERF_RECORD_COMM:
		if (pf_comm_decode(ev, h, &u.c) == 0) {
			fuzz_touch(u.c.comm, u.c.comm_len + 1);
			FUZZ_ASSERT(u.c.comm[u.c.comm_len] == 0);
		}
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		(void)pf_task_decode(ev, h, &u.t);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		(void)pf_lost_decode(ev, h, &u.l);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		(void)pf_throttle_decode(ev, h, &u.th);
		break;
	default:
		break;
	}
	if (ev && h->type != PERF_RECORD_SAMPLE)
		(void)pf_sample_id_decode(ev, h, &u.id);
}

static void records(const struct pf_events *evs, struct pf_maps *m, const uint8_t *d, size_t n)
{
	struct pf_rec_iter it;
	const struct perf_event_header *h;
	pf_rec_iter_init(&it, d, n);
	int rc;
	size_t seen = 0;
	while ((rc = pf_rec_iter_next(&it, &h)) > 0) {
		FUZZ_ASSERT((const uint8_t *)h >= d && h->size >= 8 && (const uint8_t *)h + h->size <= d + n);
		seen += h->size;
		record(evs, h);
		(void)pf_maps_record(m, pf_events_find(evs, h), h);
	}
	FUZZ_ASSERT(seen == it.offset && it.offset <= n);
}

static void section(const struct pf_section *s, struct pf_events *evs, struct pf_maps *m, struct pf_prof *p)
{
	const uint8_t *d = s->data;
	size_t n = s->size;
	char msg[256];
	switch (s->type) {
	case PF_SEC_META:
	case PF_SEC_SYMINFO:
		kv(d, n);
		break;
	case PF_SEC_EVENT:
		(void)pf_events_add(evs, s);
		break;
	case PF_SEC_RECORDS:
		records(evs, m, d, n);
		break;
	case PF_SEC_MAPS: {
		uint32_t pid;
		uint64_t t;
		const char *text;
		size_t len;
		if (pf_maps_decode(d, n, &pid, &t, &text, &len) == 0) {
			FUZZ_ASSERT(text >= (const char *)d && text + len <= (const char *)d + n);
			(void)pf_maps_add_proc_maps(m, pid, t, text, len);
			(void)pf_maps_time_key(m, pid, t);
			(void)pf_maps_find(m, pid, 0x400000, t);
		}
		break;
	}
	case PF_SEC_BUILDID: {
		size_t pos = 0;
		struct pf_buildid e;
		while (pf_buildid_next(d, n, &pos, &e) > 0) {
			FUZZ_ASSERT(e.path >= (const char *)d && e.path + e.path_len <= (const char *)d + n);
			FUZZ_ASSERT(e.build_id_size <= 64);
			(void)pf_maps_note_buildid(m, &e);
		}
		break;
	}
	case PF_SEC_DSO_IMAGE: {
		struct pf_dso_image im;
		if (pf_dso_image_decode(d, n, &im) == 0) {
			FUZZ_ASSERT(im.build_id_size <= 64);
			fuzz_touch(im.path, im.path_len);
			fuzz_touch(im.image, im.image_size);
			FUZZ_ASSERT(im.image + im.image_size <= d + n);
		}
		break;
	}
	case PF_SEC_THREADS: {
		size_t pos = 0, cl;
		uint32_t pid, tid;
		const char *comm;
		while (pf_thread_next(d, n, &pos, &pid, &tid, &comm, &cl) > 0)
			fuzz_touch(comm, cl);
		break;
	}
	case PF_SEC_END: {
		struct pf_end e;
		memset(&e, 0, sizeof e);
		(void)pf_end_decode(d, n, &e);
		uint32_t nr;
		if (pf_end_runs_count(d, n, &nr) == 0) {
			uint64_t starts[64];
			uint32_t ns = 0;
			for (uint32_t i = 0; i < nr && i < 100000; i++) {
				struct pf_run r = PF_RUN_INIT;
				if (pf_end_run(d, n, i, &r) == 0 && ns < 64 && (!ns || r.start_time >= starts[ns - 1]))
					starts[ns++] = r.start_time;
			}
			uint32_t k = pf_run_of(starts, ns, e.stop_time);
			FUZZ_ASSERT(k <= ns);
		}
		break;
	}
	case PF_SEC_KSYMS: {
		struct pf_ksyms k = { 0 };
		char em[256];
		if (pf_ksyms_decode(&k, d, n, em, sizeof(em)) == 0) {
			FUZZ_ASSERT(k.build_id_size <= 64);
			struct pf_ksym prev = { 0 }, sy;
			for (uint32_t i = 0; i < k.n_syms; i++) {
				FUZZ_ASSERT(pf_ksyms_sym(&k, i, &sy) == 0);
				FUZZ_ASSERT(!i || prev.addr <= sy.addr);
				FUZZ_ASSERT(sy.module <= k.n_mods);
				size_t nl = strlen(sy.name);
				FUZZ_ASSERT(nl >= 1 && nl <= PF_KSYMS_MAX_NAME);
				fuzz_touch(sy.name, nl);
				prev = sy;
			}
			FUZZ_ASSERT(pf_ksyms_sym(&k, k.n_syms, &sy) == -ERANGE);
			/* every symbol's own address (+1) finds the first symbol listed
			 * at the highest address at or below it, or none */
			for (uint32_t i = 0; i < k.n_syms && i < 4096; i++) {
				struct pf_ksym si, sj;
				FUZZ_ASSERT(pf_ksyms_sym(&k, i, &si) == 0);
				int64_t j = pf_ksyms_find(&k, si.addr + 1);
				FUZZ_ASSERT(j < (int64_t)k.n_syms);
				if (j >= 0) {
					FUZZ_ASSERT(pf_ksyms_sym(&k, (uint32_t)j, &sj) == 0);
					FUZZ_ASSERT(sj.addr <= si.addr + 1);
					struct pf_ksym sb;
					if (j > 0 && pf_ksyms_sym(&k, (uint32_t)j - 1, &sb) == 0)
						FUZZ_ASSERT(sb.addr < sj.addr);
				}
			}
			/* a decoded table encodes and decodes to the same table */
			struct pf_buf b = { 0 };
			struct pf_ksyms k2 = { 0 };
			FUZZ_ASSERT(pf_ksyms_encode(&k, &b) == 0);
			FUZZ_ASSERT(pf_ksyms_decode(&k2, b.data, b.len, em, sizeof(em)) == 0);
			FUZZ_ASSERT(k2.n_syms == k.n_syms && k2.n_mods == k.n_mods);
			pf_ksyms_free(&k2);
			pf_buf_free(&b);
		} else {
			FUZZ_ASSERT(!k.n_syms && !k.block && em[0]);
		}
		pf_ksyms_free(&k);
		break;
	}
	case PF_SEC_RUN: {
		struct pf_run_mark rm;
		if (pf_run_mark_decode(d, n, &rm) == 0)
			FUZZ_ASSERT(rm.run != 0);
		break;
	}
	case PF_SEC_STRINGS:
	case PF_SEC_FRAMES:
	case PF_SEC_STACKS:
		if (pf_prof_load_section(p, s, msg, sizeof(msg)) == 0 && s->type == PF_SEC_STRINGS && p->n_str) {
			size_t len;
			const char *str = pf_prof_str_get(p, p->n_str - 1, &len);
			fuzz_touch(str, len + 1);
		}
		break;
	case PF_SEC_SAMPLES: {
		size_t pos = 0;
		struct pf_prof_sample ps;
		while (pf_prof_samples_next(d, n, &pos, &ps) > 0)
			FUZZ_ASSERT(pos <= n);
		break;
	}
	default:
		break;
	}
}

/* Every section of the file through the reader (options: opts) and section(). */
static void read_all(int fd, size_t n, uint8_t opts)
{
	pf_reader *r;
	struct pf_events evs = { 0 };
	struct pf_maps m;
	struct pf_prof p;
	pf_maps_init(&m);
	pf_prof_init(&p);
	uint8_t *mine = NULL;
	size_t mine_cap = 0;
	if (pf_reader_open_fd(&r, fd, "fuzz") == 0) {
		if (opts & 2)
			pf_reader_set_want(r, want_some, NULL);
		struct pf_section s;
		int rc;
		unsigned guard = 0;
		while ((rc = pf_reader_next(r, &s)) != 0 && guard++ < 100000) {
			if (rc < 0) {
				FUZZ_ASSERT(*pf_reader_errmsg(r));
				if (!pf_reader_can_continue(r))
					break;
				continue;
			}
			FUZZ_ASSERT(s.size == s.raw_size || !s.data);
			FUZZ_ASSERT(pf_reader_offset(r) <= n);
			if (s.data)
				fuzz_touch(s.data, s.size);
			const uint8_t *st = pf_reader_stored(r);
			if (st)
				fuzz_touch(st, s.stored_size);
			if ((opts & 4) && s.data) {
				FUZZ_ASSERT(pf_reader_swap_data(r, &mine, &mine_cap) == 0);
				FUZZ_ASSERT(mine_cap >= s.size);
				s.data = mine;
			}
			if (s.data || !s.size)
				section(&s, &evs, &m, &p);
		}
		FUZZ_ASSERT(guard <= 100000);
	}
	pf_reader_close(r);
	free(mine);
	pf_events_free(&evs);
	pf_maps_free(&m);
	pf_prof_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run_image(data, size, read_all);
}
