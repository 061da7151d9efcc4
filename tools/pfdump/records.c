/*
 * pfdump/records.c - pfdump's printer of one perf record: the sample's
 * fields, tracepoint fields, and every other record kind (perf script -D
 * style text, or one JSON object).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pfile/records.h>
#include "pfdump/out.h"
#include "pfdump/records.h"
#include "pfdump/sections.h"
#include "pfdump/tracepoint.h"

/* ------------------------------------------------------------------------ */
/* Record printing                                                           */
/* ------------------------------------------------------------------------ */

/* Bounded reads from a record body. */
struct rd {
	const uint8_t *p;
	size_t n, off;
	int bad;
};

/* Takes `size` bytes into v, or marks the body short (r->bad, the rest
 * skipped) and leaves v as it is. */
static void take(struct rd *r, void *v, size_t size)
{
	if (r->n - r->off < size || r->off > r->n) {
		r->bad = 1;
		r->off = r->n;
		return;
	}
	memcpy(v, r->p + r->off, size);
	r->off += size;
}

static uint64_t r64(struct rd *r)
{
	uint64_t v = 0;
	take(r, &v, sizeof v);
	return v;
}

static uint32_t r32(struct rd *r)
{
	uint32_t v = 0;
	take(r, &v, sizeof v);
	return v;
}

static uint16_t r16(struct rd *r)
{
	uint16_t v = 0;
	take(r, &v, sizeof v);
	return v;
}

/* A NUL-terminated string filling the rest of the body (padding after it). */
static void rstr(struct rd *r, const char **s, size_t *len)
{
	*s = (const char *)r->p + r->off;
	*len = strnlen(*s, r->n - r->off);
	r->off = r->n;
}

static int tp_first;

static void tp_field(void *ctx, const char *name, enum pfd_tp_kind kind, int64_t sv, uint64_t u, const char *str,
		     size_t len)
{
	(void)ctx;
	if (pfd_pr.json) {
		fprintf(pfd_pr.out, "%s", tp_first ? "" : ",");
		pfd_json_str(name, strlen(name));
		putc(':', pfd_pr.out);
	} else {
		fprintf(pfd_pr.out, " %s=", name);
	}
	tp_first = 0;
	switch (kind) {
	case PFD_TP_SIGNED:
		fprintf(pfd_pr.out, "%" PRId64, sv);
		break;
	case PFD_TP_UNSIGNED:
		fprintf(pfd_pr.out, "%" PRIu64, u);
		break;
	case PFD_TP_POINTER:
		fprintf(pfd_pr.out, pfd_pr.json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, u);
		break;
	case PFD_TP_STRING:
		if (pfd_pr.json)
			pfd_json_str(str, len);
		else
			pfd_text_str(str, len);
		break;
	case PFD_TP_BYTES:
		if (pfd_pr.json)
			putc('"', pfd_pr.out);
		for (size_t i = 0; i < len; i++)
			fprintf(pfd_pr.out, "%02x", (unsigned char)str[i]);
		if (pfd_pr.json)
			putc('"', pfd_pr.out);
		else if (!len)
			putc('-', pfd_pr.out);
		break;
	}
}

/* A tracepoint sample's raw data, field by field, after "tracepoint=NAME". */
static void print_tp_fields(const struct pf_event *ev, const struct pf_sample *s)
{
	const char *tpname;
	const struct pfd_tp *tp = pfd_event_tp(ev->index, &tpname);
	if (!tp || !s->raw)
		return;
	if (tpname[0])
		pfd_cstr("tracepoint", tpname);
	if (pfd_pr.json)
		fputs(",\"fields\":{", pfd_pr.out);
	tp_first = 1;
	int rc = pfd_tp_decode(tp, s->raw, s->raw_size, tp_field, NULL);
	if (pfd_pr.json)
		putc('}', pfd_pr.out);
	if (rc < 0)
		pfd_cstr("fields_error", "a field runs past the raw data");
}

static void print_sample(const struct pf_event *ev, const struct pf_sample *s)
{
	uint64_t st = s->present;
	if (st & PERF_SAMPLE_IP)
		pfd_hex("ip", s->ip);
	if (st & PERF_SAMPLE_ADDR)
		pfd_hex("addr", s->addr);
	if (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
		pfd_u64("id", s->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		pfd_u64("stream_id", s->stream_id);
	if (st & PERF_SAMPLE_PERIOD)
		pfd_u64("period", s->period);
	if (st & PERF_SAMPLE_READ)
		pfd_list("read", s->read, s->read_size, 0);
	if (st & PERF_SAMPLE_RAW) {
		pfd_u64("raw_size", s->raw_size);
		pfd_bytes("raw", s->raw, s->raw_size > 64 ? 64 : s->raw_size);
		print_tp_fields(ev, s);
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		pfd_hex("weight", s->weight);
	if (st & PERF_SAMPLE_DATA_SRC)
		pfd_hex("data_src", s->data_src);
	if (st & PERF_SAMPLE_TRANSACTION)
		pfd_hex("transaction", s->transaction);
	if (st & PERF_SAMPLE_REGS_USER) {
		pfd_u64("user_regs_abi", s->user_regs_abi);
		pfd_hex("user_regs_mask", s->user_regs_mask);
		if (s->user_regs)
			pfd_list("user_regs", s->user_regs, (size_t)__builtin_popcountll(s->user_regs_mask), 1);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		pfd_u64("user_stack_size", s->user_stack_size);
		pfd_u64("user_stack_dyn_size", s->user_stack_dyn_size);
	}
	if (st & PERF_SAMPLE_REGS_INTR) {
		pfd_u64("intr_regs_abi", s->intr_regs_abi);
		pfd_hex("intr_regs_mask", s->intr_regs_mask);
		if (s->intr_regs)
			pfd_list("intr_regs", s->intr_regs, (size_t)__builtin_popcountll(s->intr_regs_mask), 1);
	}
	if (st & PERF_SAMPLE_PHYS_ADDR)
		pfd_hex("phys_addr", s->phys_addr);
	if (st & PERF_SAMPLE_CGROUP)
		pfd_u64("cgroup", s->cgroup);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		pfd_u64("data_page_size", s->data_page_size);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		pfd_u64("code_page_size", s->code_page_size);
	if (st & PERF_SAMPLE_AUX)
		pfd_u64("aux_size", s->aux_size);
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		pfd_u64("branch_nr", s->branch_nr);
		if (ev->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			pfd_u64("branch_hw_idx", s->branch_hw_idx);
	}
	if (pfd_pr.json) {
		if (st & PERF_SAMPLE_CALLCHAIN)
			pfd_list("callchain", s->callchain, s->callchain_nr, 1);
		if (st & PERF_SAMPLE_BRANCH_STACK) {
			fputs(",\"branches\":[", pfd_pr.out);
			for (uint64_t i = 0; i < s->branch_nr; i++) {
				struct perf_branch_entry b;
				memcpy(&b, s->branch + i, sizeof(b));
				fprintf(pfd_pr.out,
					"%s{\"from\":\"0x%" PRIx64 "\",\"to\":\"0x%" PRIx64 "\",\"mispred\":%u,"
					"\"predicted\":%u,\"in_tx\":%u,\"abort\":%u,\"cycles\":%u,\"type\":%u}",
					i ? "," : "", (uint64_t)b.from, (uint64_t)b.to, (unsigned)b.mispred,
					(unsigned)b.predicted, (unsigned)b.in_tx, (unsigned)b.abort,
					(unsigned)b.cycles, (unsigned)b.type);
			}
			putc(']', pfd_pr.out);
		}
		return;
	}
	putc('\n', pfd_pr.out);
	/* text: one indented line per callchain entry and branch */
	if (st & PERF_SAMPLE_CALLCHAIN) {
		for (uint64_t i = 0; i < s->callchain_nr; i++) {
			uint64_t a;
			memcpy(&a, s->callchain + i, 8);
			const char *ctx = pfd_context_name(a);
			if (ctx)
				fprintf(pfd_pr.out, "\t    [%s]\n", ctx);
			else
				fprintf(pfd_pr.out, "\t    0x%" PRIx64 "\n", a);
		}
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		for (uint64_t i = 0; i < s->branch_nr; i++) {
			struct perf_branch_entry b;
			memcpy(&b, s->branch + i, sizeof(b));
			fprintf(pfd_pr.out, "\t    branch 0x%" PRIx64 " -> 0x%" PRIx64 "%s%s cycles=%u type=%u\n",
				(uint64_t)b.from, (uint64_t)b.to, b.mispred ? " mispred" : "",
				b.predicted ? " predicted" : "", (unsigned)b.cycles, (unsigned)b.type);
		}
	}
}

/* print_body()'s less common record kinds. */
static void print_body_rare(const struct perf_event_header *h, struct rd *r)
{
	const char *str;
	size_t slen;
	switch (h->type) {
	case PERF_RECORD_READ:
		pfd_u64("pid", r32(r));
		pfd_u64("tid", r32(r));
		if (r->off <= r->n)
			pfd_list("values", (const uint64_t *)(const void *)(r->p + r->off), (r->n - r->off) / 8, 0);
		break;
	case PERF_RECORD_AUX:
		pfd_hex("aux_offset", r64(r));
		pfd_hex("aux_size", r64(r));
		pfd_hex("flags", r64(r));
		break;
	case PERF_RECORD_ITRACE_START:
		pfd_u64("pid", r32(r));
		pfd_u64("tid", r32(r));
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		pfd_cstr("dir", (h->misc & PERF_RECORD_MISC_SWITCH_OUT) ? "out" : "in");
		if (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
			pfd_u64("preempt", 1);
		if (h->type == PERF_RECORD_SWITCH_CPU_WIDE) {
			pfd_u64("next_prev_pid", r32(r));
			pfd_u64("next_prev_tid", r32(r));
		}
		break;
	case PERF_RECORD_NAMESPACES: {
		pfd_u64("pid", r32(r));
		pfd_u64("tid", r32(r));
		uint64_t nr = r64(r);
		pfd_u64("nr_namespaces", nr);
		if (r->bad || nr > (r->n - r->off) / 16) {
			r->bad = 1;
			break;
		}
		pfd_list("namespaces", (const uint64_t *)(const void *)(r->p + r->off), (size_t)nr * 2, 1);
		break;
	}
	case PERF_RECORD_KSYMBOL:
		pfd_hex("addr", r64(r));
		pfd_u64("len", r32(r));
		pfd_u64("ksym_type", r16(r));
		pfd_hex("flags", r16(r));
		if (r->bad)
			break;
		rstr(r, &str, &slen);
		pfd_str("name", str, slen);
		break;
	case PERF_RECORD_BPF_EVENT:
		pfd_u64("bpf_type", r16(r));
		pfd_hex("flags", r16(r));
		pfd_u64("bpf_id", r32(r));
		if (r->bad || r->n - r->off < 8) {
			r->bad = 1;
			break;
		}
		pfd_bytes("tag", r->p + r->off, 8);
		break;
	case PERF_RECORD_CGROUP:
		pfd_u64("cgroup_id", r64(r));
		if (r->bad)
			break;
		rstr(r, &str, &slen);
		pfd_str("path", str, slen);
		break;
	case PERF_RECORD_TEXT_POKE: {
		pfd_hex("addr", r64(r));
		uint16_t ol = r16(r), nl = r16(r);
		if (r->bad || (size_t)ol + nl > r->n - r->off) {
			r->bad = 1;
			break;
		}
		pfd_bytes("old", r->p + r->off, ol);
		pfd_bytes("new", r->p + r->off + ol, nl);
		break;
	}
	case 21: /* AUX_OUTPUT_HW_ID */
		pfd_hex("hw_id", r64(r));
		break;
	default:
		break;
	}
}

/* The body of a record other than a sample after its common prefix: one
 * member per field; r reads the body (r->bad set if it is damaged). */
static void print_body(const struct perf_event_header *h, const struct pf_event *ev, struct rd *r)
{
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct pf_mmap m;
		if (pf_mmap_decode(ev, h, &m) < 0) {
			r->bad = 1;
			break;
		}
		pfd_u64("pid", m.pid);
		pfd_u64("tid", m.tid);
		pfd_hex("addr", m.addr);
		pfd_hex("len", m.len);
		pfd_hex("pgoff", m.pgoff);
		if (m.mmap2) {
			if (m.has_build_id) {
				pfd_bytes("build_id", m.build_id, m.build_id_size > 20 ? 20 : m.build_id_size);
			} else {
				pfd_u64("maj", m.maj);
				pfd_u64("min", m.min);
				pfd_u64("ino", m.ino);
				pfd_u64("ino_generation", m.ino_generation);
			}
			pfd_hex("prot", m.prot);
			pfd_hex("flags", m.flags);
		}
		pfd_str("filename", m.filename, m.filename_len);
		break;
	}
	case PERF_RECORD_COMM: {
		struct pf_comm c;
		if (pf_comm_decode(ev, h, &c) < 0) {
			r->bad = 1;
			break;
		}
		pfd_u64("pid", c.pid);
		pfd_u64("tid", c.tid);
		pfd_str("comm", c.comm, c.comm_len);
		if (c.exec)
			pfd_u64("exec", 1);
		break;
	}
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK: {
		struct pf_task t;
		if (pf_task_decode(ev, h, &t) < 0) {
			r->bad = 1;
			break;
		}
		pfd_u64("pid", t.pid);
		pfd_u64("ppid", t.ppid);
		pfd_u64("tid", t.tid);
		pfd_u64("ptid", t.ptid);
		pfd_u64("ptime", t.time);
		break;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		struct pf_throttle t;
		if (pf_throttle_decode(ev, h, &t) < 0) {
			r->bad = 1;
			break;
		}
		pfd_u64("ptime", t.time);
		pfd_u64("id", t.id);
		pfd_u64("stream_id", t.stream_id);
		break;
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct pf_lost l;
		if (pf_lost_decode(ev, h, &l) < 0) {
			r->bad = 1;
			break;
		}
		if (h->type == PERF_RECORD_LOST)
			pfd_u64("id", l.id);
		pfd_u64("lost", l.lost);
		break;
	}
	default:
		print_body_rare(h, r);
		break;
	}
}

/* Prints one record (host order). Returns 0, or -1 if its body is damaged. */
int pfd_print_record(const struct pf_section *sec, const struct pf_events *evs,
			const struct perf_event_header *h)
{
	const struct pf_event *ev = pf_events_find(evs, h);
	const char *tname = pf_record_type_name(h->type);
	struct pf_sample s;
	struct pf_sample_id sid;

	memset(&sid, 0, sizeof(sid));
	if (h->type == PERF_RECORD_SAMPLE) {
		if (!ev || pf_sample_decode(ev, h, &s) < 0)
			return -1;
		sid.present = s.present;
		sid.pid = s.pid;
		sid.tid = s.tid;
		sid.time = s.time;
		sid.cpu = s.cpu;
	} else if (ev && pf_sample_id_decode(ev, h, &sid) < 0) {
		return -1;
	}
	size_t body_end = h->size;
	if (h->type != PERF_RECORD_SAMPLE && h->type < 64 && ev)
		body_end -= pf_sample_id_size(ev);
	struct rd r = { (const uint8_t *)h, body_end, sizeof(*h), 0 };

	/* common prefix */
	char tn[32];
	if (!tname) {
		snprintf(tn, sizeof(tn), "UNKNOWN_%u", h->type);
		tname = tn;
	}
	if (pfd_pr.json) {
		pfd_obj_begin("record");
		pfd_u64("section", sec->index);
		fprintf(pfd_pr.out, ",\"record\":\"%s\"", tname);
		if (sid.present & PERF_SAMPLE_TIME)
			pfd_u64("time", sid.time);
		if (sid.present & PERF_SAMPLE_CPU)
			pfd_u64("cpu", sid.cpu);
		if (sid.present & PERF_SAMPLE_TID) {
			pfd_u64("pid", sid.pid);
			pfd_u64("tid", sid.tid);
		}
		pfd_u64("misc", h->misc);
		pfd_u64("size", h->size);
		pfd_pr.rename_task_ids = (sid.present & PERF_SAMPLE_TID) != 0;
	} else {
		if (sid.present & PERF_SAMPLE_TIME)
			fprintf(pfd_pr.out, "%" PRIu64 ".%09" PRIu64, sid.time / 1000000000u, sid.time % 1000000000u);
		else
			fputs("-", pfd_pr.out);
		if (sid.present & PERF_SAMPLE_CPU)
			fprintf(pfd_pr.out, " [%03u]", sid.cpu);
		else
			fputs(" [-]", pfd_pr.out);
		if (sid.present & PERF_SAMPLE_TID)
			fprintf(pfd_pr.out, " %u/%u", sid.pid, sid.tid);
		else
			fputs(" -/-", pfd_pr.out);
		fprintf(pfd_pr.out, " %s", tname);
	}

	if (h->type == PERF_RECORD_SAMPLE) {
		if (ev->name[0])
			pfd_cstr("event", ev->name);
		pfd_cstr("cpumode", pfd_cpumode_name(h->misc));
		if (h->misc & PERF_RECORD_MISC_EXACT_IP)
			pfd_u64("exact_ip", 1);
		pfd_pr.rename_task_ids = 0;
		print_sample(ev, &s);
		if (pfd_pr.json)
			pfd_obj_end();
		return 0;
	}
	print_body(h, ev, &r);
	pfd_pr.rename_task_ids = 0;
	if (!pfd_pr.json)
		putc('\n', pfd_pr.out);
	else
		pfd_obj_end();
	return r.bad ? -1 : 0;
}

