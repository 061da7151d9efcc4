/*
 * pfrec/counts.c - each event's total count at the end of a recording:
 * read(2) of the event fds (read_format ID, TOTAL_TIME_ENABLED,
 * TOTAL_TIME_RUNNING, GROUP: perf_event_open(2), "Reading results"),
 * summed per event, the COUNTS section (format/pfile.md 4.9) and the
 * summary lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pfrec.h"

static int event_of(uint64_t id, const struct pfrec_count_ids *ids)
{
	for (int e = 0; e < ids->nev; e++)
		for (uint32_t i = 0; i < ids->nids[e]; i++)
			if (ids->ids[e][i] == id)
				return e;
	return -1;
}

int pfrec_count_read(int fd, uint64_t read_format, const struct pfrec_count_ids *ids, struct pfrec_count *out)
{
	uint64_t v[3 + 2 * 64 + 8];
	ssize_t n = read(fd, v, sizeof(v));
	if (n < 0)
		return -errno;
	size_t words = (size_t)n / 8, k = 0;
	int te = (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) != 0;
	int tr = (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) != 0;
	int id = (read_format & PERF_FORMAT_ID) != 0;
	int lost = (read_format & PERF_FORMAT_LOST) != 0;
	if (read_format & PERF_FORMAT_GROUP) {
		/* nr, [enabled], [running], then nr x {value, [id], [lost]} */
		if (words < 1u + te + tr)
			return -EIO;
		uint64_t nr = v[k++];
		uint64_t ena = te ? v[k++] : 0, run = tr ? v[k++] : 0;
		for (uint64_t i = 0; i < nr; i++) {
			if (k + 1 + id + lost > words || !id)
				return -EIO;
			uint64_t value = v[k++], eid = v[k++];
			k += lost;
			int e = event_of(eid, ids);
			if (e < 0)
				continue;
			out[e].value += value;
			out[e].enabled_ns += ena;
			out[e].running_ns += run;
			out[e].nr_read++;
		}
		return 0;
	}
	/* value, [enabled], [running], [id], [lost] */
	if (words < 1u + te + tr + id || !id)
		return -EIO;
	uint64_t value = v[k++];
	uint64_t ena = te ? v[k++] : 0, run = tr ? v[k++] : 0;
	int e = event_of(v[k], ids);
	if (e >= 0) {
		out[e].value += value;
		out[e].enabled_ns += ena;
		out[e].running_ns += run;
		out[e].nr_read++;
	}
	return 0;
}

int pfrec_counts_encode(struct pf_buf *b, const struct pfrec_count *c, int nev)
{
	int rc = 0;
	char key[48];
	for (int e = 0; e < nev; e++) {
		if (!c[e].nr_read)
			continue;
		snprintf(key, sizeof(key), "%d.value", e);
		rc |= pf_kv_add_u64(b, key, c[e].value);
		snprintf(key, sizeof(key), "%d.time_enabled_ns", e);
		rc |= pf_kv_add_u64(b, key, c[e].enabled_ns);
		snprintf(key, sizeof(key), "%d.time_running_ns", e);
		rc |= pf_kv_add_u64(b, key, c[e].running_ns);
	}
	return rc < 0 ? -ENOMEM : 0;
}

double pfrec_count_scaled(const struct pfrec_count *c)
{
	if (c->running_ns && c->running_ns < c->enabled_ns)
		return (double)c->value * ((double)c->enabled_ns / (double)c->running_ns);
	return (double)c->value;
}
