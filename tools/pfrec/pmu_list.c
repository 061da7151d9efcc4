/*
 * pfrec/pmu_list.c - pfrec --list-events: the generic names, each PMU's
 * events with their encodings, and tracepoints, filtered by a pattern.
 */
#include "pmu_internal.h"

static bool has_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

static bool pat_match(const char *pat, const char *s)
{
	if (!pat)
		return true;
	if (has_glob(pat))
		return fnmatch(pat, s, FNM_CASEFOLD) == 0;
	return strcasestr(s, pat) != NULL;
}

/* The config words an events/ entry gives, or why not ("needs umask="). */
static void alias_encoding(struct pmu_model *m, struct pmu_desc *d, const struct alias *a, char *buf,
			   size_t size)
{
	char err[512];
	struct ctx c = {.m = m, .err = err, .errlen = sizeof(err), .ev = a->name};
	struct protos ps = {0};
	const char *q = a->terms ? strstr(a->terms, "=?") : NULL;
	if (q) {
		/* the first field the user must give */
		const char *b = q;
		while (b > a->terms && b[-1] != ',')
			b--;
		snprintf(buf, size, "(needs %.*s=VALUE)", (int)(q - b), b);
	} else if (pmu_resolve_on_pmu(&c, &ps, d, NULL, a) < 0) {
		const char *why = strchr(err, ':');
		snprintf(buf, size, "(%s)", why ? why + 2 : err);
	} else {
		const struct proto *p = &ps.v[0];
		int o = snprintf(buf, size, "config=0x%" PRIx64, (uint64_t)p->pa.attr.config);
		uint64_t w[3] = {p->pa.attr.config1, p->pa.attr.config2, PMU_CONFIG3(&p->pa)};
		for (int i = 0; i < 3; i++)
			if (w[i] && o > 0 && (size_t)o < size)
				o += snprintf(buf + o, size - (size_t)o, " config%d=0x%" PRIx64, i + 1, w[i]);
		if ((a->scale != 1.0 || a->unit[0]) && o > 0 && (size_t)o < size)
			snprintf(buf + o, size - (size_t)o, " scale=%.10g%s%s", a->scale, a->unit[0] ? " unit=" : "",
				 a->unit);
	}
	pmu_protos_free(&ps);
}

int pmu_list(struct pmu_model *m, const char *pattern, FILE *f)
{
	int count = 0, rc;
	char err[512], line[600];
	if (pattern && !*pattern)
		pattern = NULL;

	bool head = false;
	for (size_t i = 0; i < pmu_ngeneric; i++) {
		const struct generic *g = &pmu_generics[i];
		if (!pat_match(pattern, g->name))
			continue;
		if (!head)
			fprintf(f, "Generic events:\n");
		head = true;
		fprintf(f, "  %-40s %s event (%s)\n", g->name, g->type == PERF_TYPE_HARDWARE ? "hardware" : "software",
			g->what);
		count++;
	}

	head = false;
	char cname[64];
	uint64_t cconfig;
	for (size_t i = 0; pmu_cache_name(i, cname, sizeof(cname), &cconfig); i++) {
		if (!pat_match(pattern, cname))
			continue;
		if (!head)
			fprintf(f, "Hardware cache events (PERF_TYPE_HW_CACHE; counted where the CPU's PMU has them):\n");
		head = true;
		fprintf(f, "  %-40s config=0x%" PRIx64 "\n", cname, cconfig);
		count++;
	}

	for (int i = 0; i < m->npmus; i++) {
		struct pmu_desc *d = &m->pmus[i];
		if ((rc = pmu_load(m, d, err, sizeof(err))) < 0) {
			fprintf(f, "PMU %s: %s\n", d->name, err);
			continue;
		}
		if (!d->naliases && !d->nfields)
			continue;
		bool all = pattern && pat_match(pattern, d->name);
		head = false;
		for (int k = 0; k < d->naliases; k++) {
			const struct alias *a = &d->aliases[k];
			char full[300];
			snprintf(full, sizeof(full), "%s/%s/", d->name, a->name);
			if (!all && !pat_match(pattern, full))
				continue;
			if (!head) {
				fprintf(f, "PMU %s (type %u%s", d->name, d->type, d->core ? ", CPU PMU" : "");
				if (d->max_precise >= 0)
					fprintf(f, ", max_precise %d", d->max_precise);
				fprintf(f, "):\n");
				head = true;
			}
			alias_encoding(m, d, a, line, sizeof(line));
			fprintf(f, "  %-40s %s  %s\n", full, a->terms ? a->terms : "(unreadable)", line);
			count++;
		}
		if (d->nfields && (head || !pattern || all)) {
			if (!head) {
				/* a PMU of terms only (uprobe): its formats are its entry */
				fprintf(f, "PMU %s (type %u%s):\n", d->name, d->type, d->core ? ", CPU PMU" : "");
				count++;
			}
			fprintf(f, "  formats:");
			for (int k = 0; k < d->nfields; k++)
				fprintf(f, " %s=%s", d->fields[k].name, d->fields[k].text);
			fprintf(f, "\n");
		}
	}

	if (!m->tracefs_root)
		return count;
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/events", m->tracefs_root) >= (int)sizeof(path))
		return count;
	char **subs = NULL;
	int ns = pmu_list_dir(path, &subs);
	if (ns < 0)
		return count;
	head = false;
	for (int i = 0; i < ns; i++) {
		char sp[PATH_MAX];
		if (pmu_join_path(sp, sizeof(sp), path, subs[i], NULL) < 0 || !pmu_is_dir(sp))
			continue;
		char **evs = NULL;
		int ne = pmu_list_dir(sp, &evs);
		if (ne < 0)
			continue;
		int nev = 0;
		for (int k = 0; k < ne; k++) {
			char ep[PATH_MAX];
			if (pmu_join_path(ep, sizeof(ep), sp, evs[k], NULL) < 0 || !pmu_is_dir(ep))
				continue;
			nev++;
			if (!pattern)
				continue;
			char full[600];
			snprintf(full, sizeof(full), "%s:%s", subs[i], evs[k]);
			if (!pat_match(pattern, full))
				continue;
			if (!head)
				fprintf(f, "Tracepoints (%s):\n", path);
			head = true;
			fprintf(f, "  %s\n", full);
			count++;
		}
		if (!pattern && nev) {
			if (!head)
				fprintf(f, "Tracepoint subsystems (%s; pfrec --list SUBSYS lists their tracepoints):\n", path);
			head = true;
			fprintf(f, "  %-40s %d tracepoint%s\n", subs[i], nev, nev == 1 ? "" : "s");
			count++;
		}
		pmu_free_names(evs, ne);
	}
	pmu_free_names(subs, ns);
	return count;
}

