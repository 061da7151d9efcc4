/*
 * pmu-test - prints the attrs that pfrec's event parser (tools/pfrec/pmu_*.c)
 * makes of event specs, one line per attr, for tests/pmu.bats.
 *
 *   pmu-test [--sysfs DIR] [--tracefs DIR] -e SPEC [-e SPEC]...
 *   pmu-test [--sysfs DIR] [--tracefs DIR] --list [PATTERN]
 *
 * Without --sysfs/--tracefs the parser's own defaults apply
 * (PFREC_SYSFS_ROOT, PFREC_TRACEFS_ROOT, then the system's). Each line:
 *   N: pmu=P type=T config=0x.. config1=0x.. config2=0x.. config3=0x..
 *   excl=ukhGH|- precise=N pinned=N sample=RAW,READ|- read=GROUP,ID|-
 *   period=N|- freq=N|- leader=N members=N mods=ukhGHpSD|- flags=...|-
 *   name=... spec=... [scale=S] [unit=U] [tp_format=PATH]
 * A parse error prints "pmu-test: MESSAGE [ERRNO NAME]" and exits 1 (usage:
 * 2; 3 when the error contract breaks: no message, more than one line, or
 * events left behind).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfrec/pmu.h"

static void add(char *buf, size_t size, const char *word)
{
	size_t n = strlen(buf);
	snprintf(buf + n, size - n, "%s%s", n ? "," : "", word);
}

struct bit_name {
	uint64_t bit;
	const char *name;
};

/* The names of the bits of v that t names, then OTHER for any other bit */
static void bit_words(char *buf, size_t size, uint64_t v, const struct bit_name *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v & t[i].bit)
			add(buf, size, t[i].name);
		v &= ~t[i].bit;
	}
	if (v)
		add(buf, size, "OTHER");
}

static void print_event(const struct pmu_events *evs, int i)
{
	const struct pmu_event *e = &evs->ev[i];
	const struct perf_event_attr *a = &e->pa.attr;
	char excl[8] = "", sample[32] = "", rf[32] = "", mods[16] = "", flags[96] = "";
	char period[32] = "-", freq[32] = "-";
	size_t k;
	pmu_attr_excl_letters(a, excl);
	static const struct bit_name st[] = { { PERF_SAMPLE_RAW, "RAW" }, { PERF_SAMPLE_READ, "READ" } };
	static const struct bit_name rfb[] = { { PERF_FORMAT_GROUP, "GROUP" }, { PERF_FORMAT_ID, "ID" } };
	bit_words(sample, sizeof(sample), a->sample_type, st, 2);
	bit_words(rf, sizeof(rf), a->read_format, rfb, 2);
	k = 0;
	static const struct {
		unsigned bit;
		char c;
	} mb[] = {{PMU_MOD_USER, 'u'}, {PMU_MOD_KERNEL, 'k'}, {PMU_MOD_HV, 'h'}, {PMU_MOD_GUEST, 'G'},
		  {PMU_MOD_HOST, 'H'}, {PMU_MOD_SAMPLE_READ, 'S'}, {PMU_MOD_PINNED, 'D'}};
	for (size_t j = 0; j < sizeof(mb) / sizeof(mb[0]); j++)
		if (e->mods & mb[j].bit)
			mods[k++] = mb[j].c;
	mods[k] = 0;
	static const struct {
		unsigned bit;
		const char *name;
	} fb[] = {{PMU_EV_GENERIC, "generic"}, {PMU_EV_EXPANDED, "expanded"}, {PMU_EV_PERIOD, "period"},
		  {PMU_EV_FREQ, "freq"}, {PMU_EV_NO_SAMPLE, "nosample"}, {PMU_EV_RAW, "raw"},
		  {PMU_EV_TRACEPOINT, "tracepoint"}, {PMU_EV_PRECISE_UNCHECKED, "precise_unchecked"}};
	for (size_t j = 0; j < sizeof(fb) / sizeof(fb[0]); j++)
		if (e->flags & fb[j].bit)
			add(flags, sizeof(flags), fb[j].name);
	if (a->freq)
		snprintf(freq, sizeof(freq), "%" PRIu64, (uint64_t)a->sample_freq);
	else if (a->sample_period)
		snprintf(period, sizeof(period), "%" PRIu64, (uint64_t)a->sample_period);
	printf("%d: pmu=%s type=%u config=0x%" PRIx64 " config1=0x%" PRIx64 " config2=0x%" PRIx64
	       " config3=0x%" PRIx64 " excl=%s precise=%u pinned=%u sample=%s read=%s period=%s freq=%s"
	       " leader=%d members=%d mods=%s flags=%s name=%s spec=%s",
	       i, e->pmu, a->type, (uint64_t)a->config, (uint64_t)a->config1, (uint64_t)a->config2,
	       (uint64_t)PMU_CONFIG3(&e->pa), excl[0] ? excl : "-", (unsigned)a->precise_ip, (unsigned)a->pinned,
	       sample[0] ? sample : "-", rf[0] ? rf : "-", period, freq, e->leader, e->nr_members,
	       mods[0] ? mods : "-", flags[0] ? flags : "-", e->name, e->spec);
	if (e->scale != 1.0)
		printf(" scale=%.10g", e->scale);
	if (e->unit[0])
		printf(" unit=%s", e->unit);
	if (e->tp_format)
		printf(" tp_format=%s", e->tp_format);
	printf("\n");
}

static const char *errname(int rc)
{
	static char buf[24];
	switch (-rc) {
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case ERANGE: return "ERANGE";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case E2BIG: return "E2BIG";
	case ENOMEM: return "ENOMEM";
	case ENOTDIR: return "ENOTDIR";
	default:
		snprintf(buf, sizeof(buf), "errno %d", -rc);
		return buf;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: pmu-test [--sysfs DIR] [--tracefs DIR] (-e SPEC... | --list [PATTERN])\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct pmu_env env = {0};
	const char *specs[256];
	int nspecs = 0, list = 0;
	const char *pattern = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sysfs") && i + 1 < argc)
			env.sysfs_root = argv[++i];
		else if (!strcmp(argv[i], "--tracefs") && i + 1 < argc)
			env.tracefs_root = argv[++i];
		else if (!strcmp(argv[i], "-e") && i + 1 < argc && nspecs < 256)
			specs[nspecs++] = argv[++i];
		else if (!strcmp(argv[i], "--list")) {
			list = 1;
			if (i + 1 < argc)
				pattern = argv[++i];
		} else
			usage();
	}
	if (!list && !nspecs)
		usage();
	char err[512];
	struct pmu_model *m;
	int rc = pmu_model_open(&m, &env, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "pmu-test: %s\n", err);
		return 1;
	}
	if (list) {
		rc = pmu_list(m, pattern, stdout);
		pmu_model_close(m);
		if (rc < 0) {
			fprintf(stderr, "pmu-test: --list: %s\n", strerror(-rc));
			return 1;
		}
		printf("(%d entries)\n", rc);
		return 0;
	}
	struct pmu_events evs = {0};
	int status = 0;
	for (int i = 0; i < nspecs; i++) {
		int before = evs.n;
		rc = pmu_parse(m, specs[i], &evs, err, sizeof(err));
		if (rc < 0) {
			/* the contract: one line, out unchanged */
			if (!err[0] || strchr(err, '\n') || evs.n != before) {
				fprintf(stderr, "pmu-test: broken error contract for %s\n", specs[i]);
				status = 3;
				break;
			}
			fprintf(stderr, "pmu-test: %s [%s]\n", err, errname(rc));
			status = 1;
			break;
		}
	}
	if (status == 0)
		for (int i = 0; i < evs.n; i++)
			print_event(&evs, i);
	pmu_events_free(&evs);
	pmu_model_close(m);
	return status;
}
