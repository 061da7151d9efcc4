/*
 * fuzz_evspec - pfrec's event-spec parser (tools/pfrec/pmu_*.c) against the
 * fake sysfs trees of tests/fixtures/sysfs/ and tests/fixtures/tracefs/
 * (the working directory is the source tree, as tests/fuzz/run.sh and
 * tests/fuzz.bats run it; PFTOOLS_FIXTURES names another fixtures folder).
 *
 * Input: an option byte, then text. Bits 0-1 pick the tree (intel, amd,
 * hybrid, arm); bit 2 splits the text at newlines into several -e arguments
 * parsed into one list; bit 3 also lists the events with the text as
 * pattern. Invariants: a refused spec leaves the list as it was and says why
 * in one non-empty line; an accepted one gives well-formed groups (members
 * right after their leader, leaders lead themselves, counts add up), a
 * precise level of at most 3, PERF_SAMPLE_RAW exactly on tracepoints, no
 * sampling on members of a sample-read group, NUL-terminated strings; a
 * second parse gives the same attrs; and a lone event's own text, parsed
 * alone, gives the same attr again.
 */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "pfrec/pmu.h"

static struct pmu_model *models[4];

static struct pmu_model *model(int tree)
{
	static const char *const names[4] = {"intel", "amd", "hybrid", "arm"};
	if (models[tree])
		return models[tree];
	const char *fx = getenv("PFTOOLS_FIXTURES");
	char sys[4096], tfs[4096], err[512];
	if (!fx)
		fx = "tests/fixtures";
	snprintf(sys, sizeof(sys), "%s/sysfs/%s", fx, names[tree]);
	snprintf(tfs, sizeof(tfs), "%s/tracefs", fx);
	struct pmu_env env = {.sysfs_root = sys, .tracefs_root = tfs};
	if (pmu_model_open(&models[tree], &env, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_evspec: %s (run from the source tree or set PFTOOLS_FIXTURES)\n", err);
		abort();
	}
	return models[tree];
}

static void check_events(const struct pmu_events *evs, int from)
{
	for (int i = from; i < evs->n; i++) {
		const struct pmu_event *e = &evs->ev[i];
		const struct perf_event_attr *a = &e->pa.attr;
		FUZZ_ASSERT(a->size == sizeof(struct pmu_attr));
		FUZZ_ASSERT(e->spec && e->text && e->name && e->pmu);
		fuzz_touch(e->spec, strlen(e->spec) + 1);
		fuzz_touch(e->text, strlen(e->text) + 1);
		fuzz_touch(e->name, strlen(e->name) + 1);
		fuzz_touch(e->pmu, strlen(e->pmu) + 1);
		FUZZ_ASSERT(e->leader >= from && e->leader <= i);
		const struct pmu_event *l = &evs->ev[e->leader];
		FUZZ_ASSERT(l->leader == e->leader && l->nr_members >= 1);
		FUZZ_ASSERT(i < e->leader + l->nr_members);
		FUZZ_ASSERT(e->leader == i || e->nr_members == 0);
		FUZZ_ASSERT(e->leader + l->nr_members <= evs->n);
		FUZZ_ASSERT(a->precise_ip <= 3);
		FUZZ_ASSERT(!!(a->sample_type & PERF_SAMPLE_RAW) == (a->type == PERF_TYPE_TRACEPOINT));
		FUZZ_ASSERT(!e->tp_format || a->type == PERF_TYPE_TRACEPOINT);
		if (e->tp_format)
			fuzz_touch(e->tp_format, strlen(e->tp_format) + 1);
		if (e->flags & PMU_EV_NO_SAMPLE)
			FUZZ_ASSERT(e->leader != i && !a->freq && !a->sample_period);
		if (a->pinned)
			FUZZ_ASSERT(e->leader == i);
		FUZZ_ASSERT(!(a->sample_type & ~(uint64_t)(PERF_SAMPLE_RAW | PERF_SAMPLE_READ)));
		FUZZ_ASSERT(!(a->read_format & ~(uint64_t)(PERF_FORMAT_GROUP | PERF_FORMAT_ID)));
		FUZZ_ASSERT(e->scale > 0);
		FUZZ_ASSERT(memchr(e->unit, 0, sizeof(e->unit)));
	}
}

static void check_error(const char *err, size_t errlen, int rc, int n_before, int n_after)
{
	FUZZ_ASSERT(rc < 0);
	FUZZ_ASSERT(n_after == n_before);
	size_t len = strnlen(err, errlen);
	FUZZ_ASSERT(len > 0 && len < errlen);
	FUZZ_ASSERT(!memchr(err, '\n', len));
}

/* A lone event's text alone means the same event. */
static void check_alone(struct pmu_model *m, const struct pmu_event *e)
{
	struct pmu_events again = {0};
	char err[256];
	int rc = pmu_parse(m, e->text, &again, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "fuzz_evspec: '%s' was accepted in a list but alone: %s\n", e->text, err);
	FUZZ_ASSERT(rc == 0);
	bool found = false;
	for (int k = 0; k < again.n && !found; k++)
		found = !memcmp(&again.ev[k].pa, &e->pa, sizeof(e->pa)) && !strcmp(again.ev[k].pmu, e->pmu);
	FUZZ_ASSERT(found);
	pmu_events_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 3 * PMU_SPEC_MAX)
		return 0;
	uint8_t opts = data[0];
	struct pmu_model *m = model(opts & 3);
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0; /* an embedded NUL ends the spec early, as in argv */

	struct pmu_events evs = {0}, again = {0};
	char err[200];
	int nspecs = 0;
	const char *specs[16];
	if (opts & 4) {
		for (char *s = text, *nl; nspecs < 16; s = nl + 1) {
			specs[nspecs++] = s;
			if (!(nl = strchr(s, '\n')))
				break;
			*nl = 0;
		}
	} else {
		specs[nspecs++] = text;
	}
	for (int i = 0; i < nspecs; i++) {
		int before = evs.n;
		memset(err, 'x', sizeof(err));
		int rc = pmu_parse(m, specs[i], &evs, err, sizeof(err));
		if (rc < 0) {
			check_error(err, sizeof(err), rc, before, evs.n);
			continue;
		}
		FUZZ_ASSERT(rc == 0 && evs.n > before);
		check_events(&evs, before);
		/* the same spec again: the same attrs */
		int b2 = again.n;
		rc = pmu_parse(m, specs[i], &again, err, sizeof(err));
		FUZZ_ASSERT(rc == 0 && again.n - b2 == evs.n - before);
		for (int k = 0; k < evs.n - before; k++) {
			const struct pmu_event *x = &evs.ev[before + k], *y = &again.ev[b2 + k];
			FUZZ_ASSERT(!memcmp(&x->pa, &y->pa, sizeof(x->pa)));
			FUZZ_ASSERT(!strcmp(x->name, y->name) && !strcmp(x->pmu, y->pmu));
			FUZZ_ASSERT(x->leader - before == y->leader - b2 && x->nr_members == y->nr_members);
		}
		for (int k = before; k < evs.n; k++)
			if (evs.ev[k].nr_members == 1 && !strcmp(evs.ev[k].text, evs.ev[k].spec))
				check_alone(m, &evs.ev[k]);
	}
	if (opts & 8) {
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			FUZZ_ASSERT(pmu_list(m, text, f) >= 0);
			fclose(f);
		}
	}
	pmu_events_free(&evs);
	pmu_events_free(&again);
	free(text);
	return 0;
}
