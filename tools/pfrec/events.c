/*
 * pfrec/events.c - what pfrec does with the events pfrec/pmu_parse.c resolves:
 * the description appended to each EVENT section (format/pfile.md 4.2.1:
 * the spec as typed, the PMU, the group, scale and unit, a tracepoint's
 * format file) and the lines of --dry-run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfrec.h"
#include "pfrec/pmu.h"

/* Largest tracepoint format file stored (sched_switch's is about 1.4 KiB). */
#define TP_FORMAT_MAX (256u << 10)

/* "SUBSYS:NAME" from ".../events/SUBSYS/NAME/format". */
static void tp_name_of(const char *path, char *out, size_t size)
{
	const char *end = strrchr(path, '/'), *b = end, *a;
	out[0] = 0;
	if (!end || end == path)
		return;
	for (b = end - 1; b > path && *b != '/'; b--)
		;
	if (b == path)
		return;
	for (a = b - 1; a > path && *a != '/'; a--)
		;
	if (*a == '/')
		a++;
	snprintf(out, size, "%.*s:%.*s", (int)(b - a), a, (int)(end - b - 1), b + 1);
}

int pfrec_event_desc(struct pf_buf *b, const struct pmu_event *ev, int leader_index, int nr_members,
		     char *err, size_t errlen)
{
	int rc = 0;
	char num[64];
	rc |= pf_kv_add(b, "spec", ev->spec);
	rc |= pf_kv_add(b, "text", ev->text);
	rc |= pf_kv_add(b, "pmu", ev->pmu);
	rc |= pf_kv_add_u64(b, "group_leader", (uint64_t)leader_index);
	if (nr_members > 1)
		rc |= pf_kv_add_u64(b, "group_members", (uint64_t)nr_members);
	if (ev->scale != 1.0) {
		snprintf(num, sizeof(num), "%.17g", ev->scale);
		rc |= pf_kv_add(b, "scale", num);
	}
	if (ev->unit[0])
		rc |= pf_kv_add(b, "unit", ev->unit);
	if (rc < 0)
		goto nomem;
	if (ev->tp_format) {
		char *text = NULL, name[256];
		size_t len = 0;
		int r = pfrec_read_file(ev->tp_format, TP_FORMAT_MAX, &text, &len);
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot read the tracepoint's format: %s", ev->tp_format,
				 strerror(-r));
			return r;
		}
		tp_name_of(ev->tp_format, name, sizeof(name));
		if (name[0])
			rc |= pf_kv_add(b, "tracepoint", name);
		rc |= pf_kv_add(b, "tp_format", text);
		free(text);
		if (rc < 0)
			goto nomem;
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

struct bitname {
	uint64_t bit;
	const char *name;
};

static const struct bitname st_names[] = {
	{PERF_SAMPLE_IP, "IP"},           {PERF_SAMPLE_TID, "TID"},
	{PERF_SAMPLE_TIME, "TIME"},       {PERF_SAMPLE_ADDR, "ADDR"},
	{PERF_SAMPLE_READ, "READ"},       {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"},
	{PERF_SAMPLE_ID, "ID"},           {PERF_SAMPLE_CPU, "CPU"},
	{PERF_SAMPLE_PERIOD, "PERIOD"},   {PERF_SAMPLE_STREAM_ID, "STREAM_ID"},
	{PERF_SAMPLE_RAW, "RAW"},         {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"},
	{PERF_SAMPLE_REGS_USER, "REGS_USER"}, {PERF_SAMPLE_STACK_USER, "STACK_USER"},
	{PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"},
};

static const struct bitname rf_names[] = {
	{PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"},
	{PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"},
	{PERF_FORMAT_ID, "ID"},
	{PERF_FORMAT_GROUP, "GROUP"},
};

static void print_bits(FILE *f, const char *key, uint64_t v, const struct bitname *t, size_t n)
{
	int any = 0;
	fprintf(f, " %s=", key);
	for (size_t i = 0; i < n; i++)
		if (v & t[i].bit) {
			fprintf(f, "%s%s", any ? "|" : "", t[i].name);
			v &= ~t[i].bit;
			any = 1;
		}
	if (v)
		fprintf(f, "%s0x%" PRIx64, any ? "|" : "", v);
	else if (!any)
		fputc('-', f);
}

void pfrec_event_print(FILE *f, int idx, const struct pmu_event *ev, const struct pmu_attr *pa)
{
	const struct perf_event_attr *a = &pa->attr;
	char excl[8];
	if (!pmu_attr_excl_letters(a, excl)[0])
		strcpy(excl, "-");
	fprintf(f, "event %d: %s pmu=%s type=%" PRIu32 " config=0x%" PRIx64 " config1=0x%" PRIx64
		   " config2=0x%" PRIx64 " config3=0x%" PRIx64 " exclude=%s precise_ip=%u pinned=%u",
		idx, ev->name, ev->pmu, a->type, (uint64_t)a->config, (uint64_t)a->config1, (uint64_t)a->config2,
		(uint64_t)PMU_CONFIG3(pa), excl, (unsigned)a->precise_ip, (unsigned)a->pinned);
	fprintf(f, " leader=%d", ev->leader);
	if (a->freq)
		fprintf(f, " freq=%" PRIu64, (uint64_t)a->sample_freq);
	else
		fprintf(f, " period=%" PRIu64, (uint64_t)a->sample_period);
	print_bits(f, "sample_type", a->sample_type, st_names, sizeof(st_names) / sizeof(st_names[0]));
	print_bits(f, "read_format", a->read_format, rf_names, sizeof(rf_names) / sizeof(rf_names[0]));
	if (ev->scale != 1.0 || ev->unit[0])
		fprintf(f, " scale=%.17g unit=%s", ev->scale, ev->unit[0] ? ev->unit : "-");
	if (ev->filter)
		fprintf(f, " filter='%s'", ev->filter);
	if (a->type == PERF_TYPE_BREAKPOINT) /* bp_addr and bp_len are config1 and config2 */
		fprintf(f, " bp_type=%" PRIu32, (uint32_t)a->bp_type);
	fprintf(f, " spec=%s\n", ev->spec);
}
