/*
 * pfrec/pmu_parse.c - event specifications (pmu.h gives the syntax) resolved
 * against the model of sysfs PMUs (pmu_model.c): generic names, raw events,
 * PMU/term/ events, tracepoints, groups and modifiers.
 */
#include "pmu_internal.h"

static int fail(struct ctx *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ctx *c, int rc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pmu_set_err(c->err, c->errlen, "%s: %s", c->ev, msg);
	return rc;
}

void pmu_protos_free(struct protos *ps)
{
	for (int i = 0; i < ps->n; i++) {
		free(ps->v[i].tp_format);
		free(ps->v[i].name);
	}
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}

static struct proto *proto_new(struct ctx *c, struct protos *ps)
{
	if (ps->n == ps->cap) {
		int ncap = ps->cap ? ps->cap * 2 : 4;
		struct proto *nv = realloc(ps->v, (size_t)ncap * sizeof(*nv));
		if (!nv) {
			fail(c, -ENOMEM, "out of memory");
			return NULL;
		}
		ps->v = nv;
		ps->cap = ncap;
	}
	struct proto *p = &ps->v[ps->n++];
	memset(p, 0, sizeof(*p));
	p->pa.attr.size = sizeof(struct pmu_attr);
	p->scale = 1.0;
	return p;
}

static uint64_t *attr_word(struct proto *p, int w)
{
	switch (w) {
	case 0:
		return (uint64_t *)&p->pa.attr.config;
	case 1:
		return (uint64_t *)&p->pa.attr.config1;
	case 2:
		return (uint64_t *)&p->pa.attr.config2;
	default:
		return (uint64_t *)&PMU_CONFIG3(&p->pa);
	}
}

static const char *word_name(int w)
{
	static const char *const n[] = {"config", "config1", "config2", "config3"};
	return n[w & 3];
}

/* "a, b, c" of a PMU's field names, cut to fit. */
static void field_names(const struct pmu_desc *p, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < p->nfields && o + 1 < size; i++) {
		int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", p->fields[i].name);
		if (w < 0 || (size_t)w >= size - o) {
			snprintf(buf + (o < size - 5 ? o : size - 5), 5, "...");
			return;
		}
		o += (size_t)w;
	}
}

/* Splits "a=1,b,c=0x2" (in place: the text is the ctx's scratch) into terms.
 * @return count or -errno. */
static int split_terms(struct ctx *c, char *s, struct term *t, int max, const char *where)
{
	int n = 0;
	if (!*s)
		return 0;
	for (;;) {
		char *comma = strchr(s, ',');
		if (comma)
			*comma = 0;
		if (!*s)
			return fail(c, -EINVAL, "%sempty term", where);
		if (n == max)
			return fail(c, -E2BIG, "%smore than %d terms", where, max);
		char *eq = strchr(s, '=');
		if (eq)
			*eq = 0;
		for (const char *q = s; *q; q++)
			if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-' && *q != '.')
				return fail(c, -EINVAL, "%sterm '%s': unexpected character '%c'", where, s, *q);
		if (!*s)
			return fail(c, -EINVAL, "%sterm with no name", where);
		if (eq && !eq[1])
			return fail(c, -EINVAL, "%sterm '%s=' has no value", where, s);
		t[n].name = s;
		t[n].val = eq ? eq + 1 : NULL;
		n++;
		if (!comma)
			return n;
		s = comma + 1;
	}
}

static bool is_special(const char *n)
{
	return !strcmp(n, "period") || !strcmp(n, "freq") || !strcmp(n, "name");
}

/* period=, freq=, name=. @return 0, or -errno. */
static int apply_special(struct ctx *c, struct proto *p, const struct term *t)
{
	uint64_t v;
	int rc;
	if (!t->val)
		return fail(c, -EINVAL, "%s needs a value (%s=...)", t->name, t->name);
	if (!strcmp(t->name, "name")) {
		for (const char *q = t->val; *q; q++)
			if (!isgraph((unsigned char)*q))
				return fail(c, -EINVAL, "name= holds a space or control character");
		free(p->name);
		if (!(p->name = strdup(t->val)))
			return fail(c, -ENOMEM, "out of memory");
		return 0;
	}
	rc = pmu_parse_u64(t->val, strlen(t->val), &v);
	if (rc == -EINVAL)
		return fail(c, rc, "%s=%s: not a number (decimal or 0x-hex)", t->name, t->val);
	if (!strcmp(t->name, "period")) {
		if (rc < 0 || v == 0 || v > INT64_MAX)
			return fail(c, -ERANGE, "period=%s: not a period from 1 to 2^63-1 events", t->val);
		if (p->flags & PMU_EV_FREQ)
			return fail(c, -EINVAL, "period= and freq= together");
		p->pa.attr.freq = 0;
		p->pa.attr.sample_period = v;
		p->flags |= PMU_EV_PERIOD;
	} else {
		if (rc < 0 || v == 0 || v > 10000000)
			return fail(c, -ERANGE, "freq=%s: not a frequency from 1 to 10000000 Hz", t->val);
		if (p->flags & PMU_EV_PERIOD)
			return fail(c, -EINVAL, "period= and freq= together");
		p->pa.attr.freq = 1;
		p->pa.attr.sample_freq = v;
		p->flags |= PMU_EV_FREQ;
	}
	return 0;
}

/* A field or config word term of a PMU. `where` prefixes errors of terms
 * that come from an events/ file. */
static int apply_term(struct ctx *c, struct proto *p, const struct pmu_desc *d, const struct term *t,
		      const char *where)
{
	uint64_t v = 1;
	int rc;
	if (is_special(t->name))
		return apply_special(c, p, t);
	if (t->val && !strcmp(t->val, "?"))
		return fail(c, -EINVAL, "%s%s=?: '?' is not a value", where, t->name);
	if (t->val) {
		rc = pmu_parse_u64(t->val, strlen(t->val), &v);
		if (rc == -EINVAL)
			return fail(c, rc, "%s%s=%s: not a number (decimal or 0x-hex)", where, t->name, t->val);
		if (rc < 0)
			return fail(c, rc, "%s%s=%s: more than 64 bits", where, t->name, t->val);
	}
	for (int w = 0; w < 4; w++) {
		if (!strcmp(t->name, word_name(w))) {
			if (!t->val)
				return fail(c, -EINVAL, "%s%s needs a value", where, t->name);
			*attr_word(p, w) = v;
			return 0;
		}
	}
	const struct field *f = pmu_find_field(d, t->name);
	if (!f) {
		char names[200];
		field_names(d, names, sizeof(names));
		if (*where)
			return fail(c, -ENOENT, "%sunknown field '%s' (fields of %s: %s)", where, t->name, d->name,
				    names[0] ? names : "none");
		return fail(c, -ENOENT, "unknown term '%s' of PMU %s (its fields: %s; its events: pfrec --list %s)",
			    t->name, d->name, names[0] ? names : "none", d->name);
	}
	if (f->word < 0)
		return fail(c, -EINVAL, "%sformat/%s of PMU %s is not understood: '%s'", where, f->name, d->name, f->text);
	if (v > pmu_field_max(f->mask))
		return fail(c, -ERANGE, "%s%s=%s does not fit in %s (%s: %d bits, at most 0x%" PRIx64 ")",
			    where, t->name, t->val ? t->val : "1", f->name, f->text, pmu_popcount64(f->mask),
			    pmu_field_max(f->mask));
	uint64_t *wp = attr_word(p, f->word);
	*wp = (*wp & ~f->mask) | pmu_deposit(v, f->mask);
	return 0;
}

#define MAX_TERMS 64

/* PMU/TERMS/ on one PMU: the terms of its events/NAME (if a term names one)
 * then the user's, in order. forced: a bare event name resolved already. */
int pmu_resolve_on_pmu(struct ctx *c, struct protos *ps, struct pmu_desc *d, char *terms_text,
			  const struct alias *forced)
{
	struct term t[MAX_TERMS];
	int nt = 0, rc;
	if ((rc = pmu_load(c->m, d, c->err, c->errlen)) < 0)
		return rc;
	if (terms_text && (nt = split_terms(c, terms_text, t, MAX_TERMS, "")) < 0)
		return nt;
	const struct alias *al = forced;
	const struct generic *legacy = NULL;
	int event_term = -1;
	for (int i = 0; i < nt && !forced; i++) {
		if (t[i].val || is_special(t[i].name) || pmu_find_field(d, t[i].name))
			continue;
		bool word = false;
		for (int w = 0; w < 4; w++)
			word |= !strcmp(t[i].name, word_name(w));
		if (word)
			continue;
		const struct alias *a = pmu_find_alias(d, t[i].name);
		const struct generic *g = a ? NULL : pmu_find_generic(t[i].name);
		if (g && !(d->core && g->type == PERF_TYPE_HARDWARE))
			g = NULL;
		if (!a && !g)
			continue; /* apply_term names it */
		if (event_term >= 0)
			return fail(c, -EINVAL, "two events named: %s and %s", t[event_term].name, t[i].name);
		event_term = i;
		al = a;
		legacy = g;
	}
	if (!nt && !al)
		return fail(c, -EINVAL, "no event and no terms for PMU %s", d->name);

	struct proto *p = proto_new(c, ps);
	if (!p)
		return -ENOMEM;
	p->desc = d;
	p->pmu_name = d->name;
	p->pa.attr.type = d->type;

	/* the '?' of an events/ file: a term the user must give */
	if (legacy) {
		p->pa.attr.type = PERF_TYPE_HARDWARE;
		p->pa.attr.config = legacy->config;
		if (c->m->ncore > 1)
			p->pa.attr.config |= (uint64_t)d->type << PERF_PMU_TYPE_SHIFT;
	} else if (al) {
		if (!al->terms)
			return fail(c, -al->read_err, "cannot read events/%s of PMU %s: %s", al->name, d->name,
				    strerror(al->read_err));
		char copy[FILE_MAX], where[320];
		struct term at[MAX_TERMS];
		snprintf(copy, sizeof(copy), "%s", al->terms);
		snprintf(where, sizeof(where), "events/%s of PMU %s: ", al->name, d->name);
		int na = split_terms(c, copy, at, MAX_TERMS, where);
		if (na < 0)
			return na;
		for (int i = 0; i < na; i++) {
			if (at[i].val && !strcmp(at[i].val, "?")) {
				bool given = false;
				for (int j = 0; j < nt; j++)
					given |= j != event_term && !strcmp(t[j].name, at[i].name);
				if (!given)
					return fail(c, -EINVAL, "event %s needs %s=VALUE (events/%s has %s=?)", al->name,
						    at[i].name, al->name, at[i].name);
				continue;
			}
			if (is_special(at[i].name))
				continue; /* not the kernel's business; perf ignores them too */
			if ((rc = apply_term(c, p, d, &at[i], where)) < 0)
				return rc;
		}
		p->scale = al->scale;
		snprintf(p->unit, sizeof(p->unit), "%s", al->unit);
	}
	for (int i = 0; i < nt; i++) {
		if (i == event_term)
			continue;
		if (legacy && !is_special(t[i].name))
			return fail(c, -EINVAL, "term '%s' does not apply to the generic event %s (period=, freq=, name= do)",
				    t[i].name, legacy->name);
		if ((rc = apply_term(c, p, d, &t[i], "")) < 0)
			return rc;
	}
	if (legacy)
		p->flags |= PMU_EV_GENERIC;
	return 0;
}

/* Terms after a generic name, raw code or tracepoint: period=, freq=, name=. */
static int apply_specials(struct ctx *c, struct protos *ps, int first, char *terms_text, const char *what)
{
	struct term t[MAX_TERMS];
	if (!terms_text)
		return 0;
	int nt = split_terms(c, terms_text, t, MAX_TERMS, "");
	if (nt < 0)
		return nt;
	if (nt == 0)
		return fail(c, -EINVAL, "empty terms '//'");
	for (int i = 0; i < nt; i++) {
		if (!is_special(t[i].name))
			return fail(c, -EINVAL, "term '%s' does not apply to %s (period=, freq=, name= do)", t[i].name, what);
		for (int k = first; k < ps->n; k++) {
			int rc = apply_special(c, &ps->v[k], &t[i]);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* For a core (CPU) PMU d: loads its description and adds a proto naming
 * it to ps (*out); *out = NULL when d is not a core PMU.
 * @return 0 or -errno (err set by pmu_load; -ENOMEM). */
/* Adds a proto for each CPU PMU from *i on (its model loaded, desc and
 * pmu_name set) until the last: the next in *out, *i past its PMU.
 * @return 1, 0 when no CPU PMU is left, or -errno. */
static int next_core_proto(struct ctx *c, struct protos *ps, int *i, struct proto **out)
{
	for (; *i < c->m->npmus; (*i)++) {
		struct pmu_desc *d = &c->m->pmus[*i];
		if (!d->core)
			continue;
		int rc = pmu_load(c->m, d, c->err, c->errlen);
		if (rc < 0)
			return rc;
		struct proto *p = proto_new(c, ps);
		if (!p)
			return -ENOMEM;
		p->desc = d;
		p->pmu_name = d->name;
		*out = p;
		(*i)++;
		return 1;
	}
	return 0;
}

static int resolve_generic(struct ctx *c, struct protos *ps, const struct generic *g)
{
	struct pmu_model *m = c->m;
	if (g->type == PERF_TYPE_HARDWARE && m->ncore > 1) {
		struct proto *p;
		int rc;
		for (int i = 0; (rc = next_core_proto(c, ps, &i, &p)) > 0;) {
			p->pa.attr.type = PERF_TYPE_HARDWARE;
			p->pa.attr.config = g->config | (uint64_t)p->desc->type << PERF_PMU_TYPE_SHIFT;
			p->flags = PMU_EV_GENERIC | PMU_EV_EXPANDED;
		}
		return rc;
	}
	struct proto *p = proto_new(c, ps);
	if (!p)
		return -ENOMEM;
	p->pa.attr.type = g->type;
	p->pa.attr.config = g->config;
	p->flags = PMU_EV_GENERIC;
	p->pmu_name = g->type == PERF_TYPE_SOFTWARE ? "software" : "hardware";
	if ((g->type == PERF_TYPE_HARDWARE || g->type == PERF_TYPE_HW_CACHE) && m->ncore == 1) {
		for (int i = 0; i < m->npmus; i++)
			if (m->pmus[i].core) {
				int rc = pmu_load(m, &m->pmus[i], c->err, c->errlen);
				if (rc < 0)
					return rc;
				p->desc = &m->pmus[i];
				p->pmu_name = p->desc->name;
			}
	}
	return 0;
}

/* A hardware cache event (pmu_parse_cache()): PERF_TYPE_HW_CACHE; on a
 * hybrid machine one attr per CPU PMU, with its type in bits 32-63 of the
 * config, as for the generic hardware events. */
static int resolve_cache(struct ctx *c, struct protos *ps, uint64_t config)
{
	struct generic g = { "", PERF_TYPE_HW_CACHE, config, "PERF_TYPE_HW_CACHE" };
	struct pmu_model *m = c->m;
	if (m->ncore > 1) {
		struct proto *p;
		int rc;
		for (int i = 0; (rc = next_core_proto(c, ps, &i, &p)) > 0;) {
			p->pa.attr.type = PERF_TYPE_HW_CACHE;
			p->pa.attr.config = config | (uint64_t)p->desc->type << PERF_PMU_TYPE_SHIFT;
			p->flags = PMU_EV_GENERIC | PMU_EV_EXPANDED;
		}
		return rc;
	}
	int rc = resolve_generic(c, ps, &g);
	if (rc == 0 && ps->n && !ps->v[ps->n - 1].desc)
		ps->v[ps->n - 1].pmu_name = "hardware";
	return rc;
}

static bool is_raw(const char *s)
{
	size_t n = strlen(s);
	if (n < 2 || n > 17 || s[0] != 'r')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* rHEX: the CPU PMU's config (PERF_TYPE_RAW); on a hybrid machine one attr
 * per CPU PMU, with that PMU's type. */
static int resolve_raw(struct ctx *c, struct protos *ps, const char *s)
{
	struct pmu_model *m = c->m;
	uint64_t v = 0;
	for (const char *q = s + 1; *q; q++)
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : (tolower((unsigned char)*q) - 'a' + 10));
	bool found = false;
	struct proto *p;
	int rc;
	for (int i = 0; (rc = next_core_proto(c, ps, &i, &p)) > 0;) {
		p->pa.attr.type = m->ncore > 1 ? p->desc->type : PERF_TYPE_RAW;
		p->pa.attr.config = v;
		p->flags = PMU_EV_RAW | (m->ncore > 1 ? PMU_EV_EXPANDED : 0);
		found = true;
	}
	if (rc < 0)
		return rc;
	if (!found) {
		if (!(p = proto_new(c, ps)))
			return -ENOMEM;
		p->pa.attr.type = PERF_TYPE_RAW;
		p->pa.attr.config = v;
		p->pmu_name = "raw";
		p->flags = PMU_EV_RAW;
	}
	return 0;
}

static bool tp_name_ok(const char *s)
{
	if (!*s || *s == '.' || strlen(s) > 255)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

static int resolve_tracepoint(struct ctx *c, struct protos *ps, const char *sys, const char *name);

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* A glob of tracepoints (sched:*, syscalls:sys_enter_*, *:sched_switch),
 * as perf expands it: one event per tracepoint whose subsystem and name
 * match (fnmatch(3)), in the tracefs folders' sorted order, each named
 * SUBSYS:NAME[:MODS]. None matching is an error. */
static int resolve_tracepoint_glob(struct ctx *c, struct protos *ps, const char *sys, const char *name,
				   const char *mods)
{
	const char *root = c->m->tracefs_root;
	if (c->in_group)
		return fail(c, -EINVAL, "a tracepoint glob in a group: name the tracepoints (pfrec --list %s:%s)", sys,
			    name);
	if (!root)
		return resolve_tracepoint(c, ps, "x", "x"); /* its error: no tracefs */
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/events", root) >= (int)sizeof(path))
		return fail(c, -ENAMETOOLONG, "path too long");
	char **subs = NULL;
	int nsub = pmu_list_dir(path, &subs), rc = 0, found = 0;
	if (nsub < 0)
		return fail(c, nsub, "%s: %s", path, strerror(-nsub));
	for (int i = 0; i < nsub && rc == 0; i++) {
		if (fnmatch(sys, subs[i], 0) != 0 || !tp_name_ok(subs[i]))
			continue;
		char **evs = NULL;
		if (snprintf(path, sizeof(path), "%s/events/%s", root, subs[i]) >= (int)sizeof(path))
			continue;
		int nev = pmu_list_dir(path, &evs);
		for (int k = 0; k < nev && rc == 0; k++) {
			char id[PATH_MAX];
			if (fnmatch(name, evs[k], 0) != 0 || !tp_name_ok(evs[k]) ||
			    snprintf(id, sizeof(id), "%s/%s/id", path, evs[k]) >= (int)sizeof(id) || access(id, R_OK) != 0)
				continue;
			if ((rc = resolve_tracepoint(c, ps, subs[i], evs[k])) < 0)
				break;
			struct proto *p = &ps->v[ps->n - 1];
			size_t n = strlen(subs[i]) + strlen(evs[k]) + (mods ? strlen(mods) + 1 : 0) + 2;
			if (!(p->name = malloc(n))) {
				rc = fail(c, -ENOMEM, "out of memory");
				break;
			}
			snprintf(p->name, n, "%s:%s%s%s", subs[i], evs[k], mods ? ":" : "", mods ? mods : "");
			found++;
		}
		for (int k = 0; k < nev; k++)
			free(evs[k]);
		free(evs);
	}
	for (int i = 0; i < nsub; i++)
		free(subs[i]);
	free(subs);
	if (rc == 0 && !found)
		rc = fail(c, -ENOENT, "no tracepoint matches %s:%s (in %s/events)", sys, name, root);
	return rc;
}

static int resolve_tracepoint(struct ctx *c, struct protos *ps, const char *sys, const char *name)
{
	const char *root = c->m->tracefs_root;
	char path[PATH_MAX], buf[64];
	if (!tp_name_ok(sys))
		return fail(c, -EINVAL, "'%s' is not a tracepoint subsystem name (letters, digits, _ - .)", sys);
	if (!tp_name_ok(name))
		return fail(c, -EINVAL, "'%s' is not a tracepoint name (letters, digits, _ - .)", name);
	if (!root)
		return fail(c, -ENOENT, "no tracefs (not mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing: "
			    "as root, mount -t tracefs nodev /sys/kernel/tracing; PFREC_TRACEFS_ROOT names another)");
	if (snprintf(path, sizeof(path), "%s/events/%s", root, sys) >= (int)sizeof(path))
		return fail(c, -ENAMETOOLONG, "path too long");
	if (!pmu_is_dir(path)) {
		int e = errno == ENOTDIR ? ENOENT : errno;
		if (e == ENOENT)
			return fail(c, -ENOENT, "unknown event or tracepoint subsystem '%s' (no %s)", sys, path);
		return fail(c, -e, "%s: %s", path, strerror(e));
	}
	if (snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sys, name) >= (int)sizeof(path))
		return fail(c, -ENAMETOOLONG, "path too long");
	int r = pmu_read_small(path, buf, sizeof(buf));
	if (r == -ENOENT || r == -ENOTDIR)
		return fail(c, -ENOENT, "no tracepoint '%s' in subsystem %s (no %s)", name, sys, path);
	if (r < 0)
		return fail(c, r, "cannot read %s: %s", path, strerror(-r));
	uint64_t id;
	if (pmu_parse_u64(buf, (size_t)r, &id) < 0)
		return fail(c, -EINVAL, "%s holds '%s', not a tracepoint id", path, buf);
	struct proto *p = proto_new(c, ps);
	if (!p)
		return -ENOMEM;
	p->pa.attr.type = PERF_TYPE_TRACEPOINT;
	p->pa.attr.config = id;
	p->pa.attr.sample_type = PERF_SAMPLE_RAW;
	p->pmu_name = "tracepoint";
	p->flags = PMU_EV_TRACEPOINT;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, sys, name);
	if (access(path, R_OK) == 0 && !(p->tp_format = strdup(path)))
		return fail(c, -ENOMEM, "out of memory");
	return 0;
}

/* A bare name that is no generic name and no raw code: an event of the
 * sysfs PMUs. Taken when one PMU has it, or one family of them (the CPU
 * PMUs of a hybrid machine; PMU_0, PMU_1, ...): then on each. */
static int resolve_bare(struct ctx *c, struct protos *ps, const char *name)
{
	struct pmu_model *m = c->m;
	struct pmu_desc *hit[64];
	int nhit = 0, more = 0;
	for (int i = 0; i < m->npmus; i++) {
		int rc = pmu_load(m, &m->pmus[i], c->err, c->errlen);
		if (rc < 0)
			return rc;
		if (pmu_find_alias(&m->pmus[i], name)) {
			if (nhit < 64)
				hit[nhit++] = &m->pmus[i];
			else
				more++;
		}
	}
	if (!nhit)
		return fail(c, -ENOENT, "unknown event (not a generic name, rHEX, PMU event or SUBSYS:TRACEPOINT; "
			    "see pfrec --list)");
	bool all_core = true, one_family = true;
	for (int i = 0; i < nhit; i++) {
		all_core &= hit[i]->core;
		one_family &= pmu_base_len(hit[i]->name) == pmu_base_len(hit[0]->name) &&
			      !strncmp(hit[i]->name, hit[0]->name, pmu_base_len(hit[0]->name));
	}
	if (nhit > 1 && !all_core && !one_family) {
		char list[256];
		size_t o = 0;
		list[0] = 0;
		for (int i = 0; i < nhit && o < sizeof(list) - 1; i++) {
			int w = snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", hit[i]->name);
			if (w < 0)
				break;
			o += (size_t)w;
		}
		return fail(c, -EINVAL, "event of several PMUs (%s%s): name one as PMU/%s/", list, more ? ", ..." : "",
			    name);
	}
	for (int i = 0; i < nhit; i++) {
		int first = ps->n;
		int rc = pmu_resolve_on_pmu(c, ps, hit[i], NULL, pmu_find_alias(hit[i], name));
		if (rc < 0)
			return rc;
		if (nhit > 1)
			for (int k = first; k < ps->n; k++)
				ps->v[k].flags |= PMU_EV_EXPANDED;
	}
	return 0;
}

/* The PMUs a name given before '/' means: the one of that name, else those
 * named NAME_N (armv8_pmuv3 for armv8_pmuv3_0; uncore_imc for uncore_imc_0,
 * uncore_imc_1, ...). @return count. */
static int match_pmus(struct pmu_model *m, const char *name, struct pmu_desc **out, int max)
{
	int n = 0;
	size_t len = strlen(name);
	for (int i = 0; i < m->npmus; i++)
		if (!strcmp(m->pmus[i].name, name)) {
			out[0] = &m->pmus[i];
			return 1;
		}
	for (int i = 0; i < m->npmus && n < max; i++) {
		const char *pn = m->pmus[i].name;
		if (strncmp(pn, name, len) == 0 && pn[len] == '_' && pn[len + 1] && pmu_base_len(pn) == len)
			out[n++] = &m->pmus[i];
	}
	return n;
}

static void pmu_names(const struct pmu_model *m, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < m->npmus; i++) {
		int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", m->pmus[i].name);
		if (w < 0 || (size_t)w >= size - o) {
			snprintf(buf + (o < size - 5 ? o : size - 5), 5, "...");
			return;
		}
		o += (size_t)w;
	}
}

static bool is_mod_char(char ch)
{
	return ch && strchr("ukhGHpSD", ch) != NULL;
}

static int parse_mods(struct ctx *c, const char *s, struct mods *md)
{
	for (; *s; s++) {
		switch (*s) {
		case 'u': md->bits |= PMU_MOD_USER; break;
		case 'k': md->bits |= PMU_MOD_KERNEL; break;
		case 'h': md->bits |= PMU_MOD_HV; break;
		case 'G': md->bits |= PMU_MOD_GUEST; break;
		case 'H': md->bits |= PMU_MOD_HOST; break;
		case 'S': md->bits |= PMU_MOD_SAMPLE_READ; break;
		case 'D': md->bits |= PMU_MOD_PINNED; break;
		case 'p':
			if (++md->precise > 3)
				return fail(c, -EINVAL, "more than three p modifiers (precise levels are 0-3)");
			break;
		default:
			if (isgraph((unsigned char)*s))
				return fail(c, -EINVAL, "unknown modifier '%c' (modifiers: u k h G H p pp ppp S D)", *s);
			return fail(c, -EINVAL, "unknown modifier 0x%02x (modifiers: u k h G H p pp ppp S D)",
				    (unsigned char)*s);
		}
	}
	return 0;
}

static bool tp_subsystem_exists(const struct pmu_model *m, const char *sys)
{
	char path[PATH_MAX];
	return m->tracefs_root && tp_name_ok(sys) &&
	       snprintf(path, sizeof(path), "%s/events/%s", m->tracefs_root, sys) < (int)sizeof(path) && pmu_is_dir(path);
}

/* A generic name, raw code or event of a sysfs PMU. */
static bool known_event(struct pmu_model *m, const char *name)
{
	uint64_t cc;
	if (pmu_find_generic(name) || is_raw(name) || pmu_parse_cache(name, &cc))
		return true;
	for (int i = 0; i < m->npmus; i++)
		if (pmu_load(m, &m->pmus[i], NULL, 0) == 0 && pmu_find_alias(&m->pmus[i], name))
			return true;
	return false;
}

/* One event (no group), text NUL-terminated and writable: fills protos and
 * its own modifiers. */
/* mem:ADDR[/LEN][:ACCESS]: a hardware breakpoint (PERF_TYPE_BREAKPOINT), as
 * perf parses it: ACCESS any of r, w, x (default rw), LEN in bytes (default
 * 4; for x, the size of a long); bp_addr in config1, bp_len in config2
 * (include/uapi/linux/perf_event.h, hw_breakpoint.h), every hit sampled
 * (period 1). The kernel checks the address, the length and the access. */
static int resolve_breakpoint(struct ctx *c, struct protos *ps, const char *spec)
{
	const char *s = spec + 4;
	char *end;
	errno = 0;
	unsigned long long addr = strtoull(s, &end, 0);
	if (end == s || errno || *s == '-' || *s == '+')
		return fail(c, -EINVAL, "mem:%s: not an address (mem:ADDR[/LEN][:rwx])", s);
	unsigned long long len = 0;
	if (*end == '/') {
		s = end + 1;
		errno = 0;
		len = strtoull(s, &end, 0);
		if (end == s || errno || *s == '-' || *s == '+' || !len || len > 8)
			return fail(c, -EINVAL, "mem: '%.*s' is not a length of 1 to 8 bytes", (int)strcspn(s, ":"), s);
	}
	unsigned type = 0;
	if (*end == ':') {
		const char *a = end + 1;
		if (!*a || strlen(a) > 3)
			return fail(c, -EINVAL, "mem: '%s' is not an access (r, w, x, or several)", a);
		for (; *a; a++) {
			unsigned bit = *a == 'r' ? HW_BREAKPOINT_R : *a == 'w' ? HW_BREAKPOINT_W : *a == 'x' ? HW_BREAKPOINT_X : 0;
			if (!bit || (type & bit))
				return fail(c, -EINVAL, "mem: '%s' is not an access (r, w, x, each once)", end + 1);
			type |= bit;
		}
	} else if (*end) {
		return fail(c, -EINVAL, "mem: '%s' after the address (mem:ADDR[/LEN][:rwx])", end);
	}
	if (!type)
		type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	if (!len)
		len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;
	struct proto *p = proto_new(c, ps);
	if (!p)
		return -ENOMEM;
	p->pa.attr.type = PERF_TYPE_BREAKPOINT;
	p->pa.attr.config = 0;
	p->pa.attr.bp_type = type;
	p->pa.attr.bp_addr = addr;
	p->pa.attr.bp_len = len;
	p->pa.attr.sample_period = 1;
	p->pmu_name = "breakpoint";
	p->flags = PMU_EV_PERIOD;
	return 0;
}

static int parse_event(struct ctx *c, char *text, struct protos *ps, struct mods *md)
{
	if (strncmp(text, "mem:", 4) == 0) {
		memset(md, 0, sizeof(*md));
		return resolve_breakpoint(c, ps, text);
	}
	char *slash = strchr(text, '/');
	char *terms = NULL, *modtext = NULL, *head = text;
	memset(md, 0, sizeof(*md));
	if (!*text)
		return fail(c, -EINVAL, "empty event");
	if (slash) {
		char *close = strchr(slash + 1, '/');
		if (!close)
			return fail(c, -EINVAL, "no closing '/' after the terms");
		*slash = 0;
		*close = 0;
		terms = slash + 1;
		modtext = close + 1;
		if (*modtext == ':') {
			modtext++;
			if (!*modtext)
				return fail(c, -EINVAL, "nothing after ':'");
		}
		if (!*head)
			return fail(c, -EINVAL, "no PMU name before '/'");
	} else {
		char *colon = strchr(text, ':');
		if (colon) {
			*colon = 0;
			char *rest = colon + 1;
			bool all_mods = *rest != 0;
			for (const char *q = rest; *q; q++)
				all_mods &= is_mod_char(*q);
			if (!*rest)
				return fail(c, -EINVAL, "nothing after ':'");
			if (all_mods) {
				modtext = rest;
			} else if (!tp_subsystem_exists(c->m, head) && known_event(c->m, head)) {
				/* cycles:x is a bad modifier, not a tracepoint */
				return parse_mods(c, rest, md);
			} else {
				/* SUBSYS:NAME[:MODS] */
				char *c2 = strchr(rest, ':');
				if (c2) {
					*c2 = 0;
					modtext = c2 + 1;
					if (!*modtext)
						return fail(c, -EINVAL, "nothing after ':'");
				}
				int rc = has_glob(head) || has_glob(rest)
						 ? resolve_tracepoint_glob(c, ps, head, rest, modtext)
						 : resolve_tracepoint(c, ps, head, rest);
				if (rc < 0)
					return rc;
				return modtext ? parse_mods(c, modtext, md) : 0;
			}
		}
		if (!*head)
			return fail(c, -EINVAL, "no event before ':'");
	}
	int rc;
	if (modtext && (rc = parse_mods(c, modtext, md)) < 0)
		return rc;

	if (slash) {
		struct pmu_desc *pm[64];
		int npm = match_pmus(c->m, head, pm, 64);
		if (npm > 0) {
			if (!*terms)
				return fail(c, -EINVAL, "no event and no terms for PMU %s", head);
			char copy[PMU_SPEC_MAX + 1];
			for (int i = 0; i < npm; i++) {
				int first = ps->n;
				snprintf(copy, sizeof(copy), "%s", terms);
				if ((rc = pmu_resolve_on_pmu(c, ps, pm[i], copy, NULL)) < 0)
					return rc;
				if (npm > 1)
					for (int k = first; k < ps->n; k++)
						ps->v[k].flags |= PMU_EV_EXPANDED;
			}
			return 0;
		}
		const struct generic *g = pmu_find_generic(head);
		char *colon = strchr(head, ':');
		if (g)
			rc = resolve_generic(c, ps, g);
		else if (is_raw(head))
			rc = resolve_raw(c, ps, head);
		else if (colon) {
			*colon = 0;
			rc = resolve_tracepoint(c, ps, head, colon + 1);
			*colon = ':';
		} else {
			char names[240];
			pmu_names(c->m, names, sizeof(names));
			return fail(c, -ENOENT, "unknown PMU '%s' (PMUs in %s: %s)", head, c->m->sysfs_root,
				    names[0] ? names : "none");
		}
		if (rc < 0)
			return rc;
		return apply_specials(c, ps, 0, terms, head);
	}
	const struct generic *g = pmu_find_generic(head);
	if (g)
		return resolve_generic(c, ps, g);
	if (is_raw(head))
		return resolve_raw(c, ps, head);
	uint64_t cache;
	if (pmu_parse_cache(head, &cache))
		return resolve_cache(c, ps, cache);
	for (const char *q = head; *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-' && *q != '.')
			return fail(c, -EINVAL, "unexpected character '%c'", *q);
	return resolve_bare(c, ps, head);
}

/* Modifiers (an event's own, merged with its group's) into its attr. */
static int apply_mods(struct ctx *c, struct proto *p, const struct mods *md)
{
	struct perf_event_attr *a = &p->pa.attr;
	unsigned b = md->bits;
	if (b & (PMU_MOD_USER | PMU_MOD_KERNEL | PMU_MOD_HV)) {
		a->exclude_user = !(b & PMU_MOD_USER);
		a->exclude_kernel = !(b & PMU_MOD_KERNEL);
		a->exclude_hv = !(b & PMU_MOD_HV);
	}
	if (b & (PMU_MOD_GUEST | PMU_MOD_HOST)) {
		a->exclude_guest = !(b & PMU_MOD_GUEST);
		a->exclude_host = !(b & PMU_MOD_HOST);
	} else if (b & PMU_MOD_USER) {
		/* as perf (6.1: `perf stat -vv -e cycles:u` shows it): a
		 * modifier with u and neither G nor H counts the host's user
		 * space only, not a guest's (on a KVM host, a guest's time
		 * would count otherwise) */
		a->exclude_guest = 1;
	}
	if (md->precise && p->desc && p->desc->max_precise >= 0 && md->precise > p->desc->max_precise)
		return fail(c, -EOPNOTSUPP, "precise level %d (:%.*s) is more than PMU %s offers (caps/max_precise %d)",
			    md->precise, md->precise, "ppp", p->desc->name, p->desc->max_precise);
	a->precise_ip = (unsigned)md->precise & 3;
	if (md->precise && !(p->desc && p->desc->max_precise >= 0))
		p->flags |= PMU_EV_PRECISE_UNCHECKED;
	return 0;
}

static int events_reserve(struct ctx *c, struct pmu_events *out, int more)
{
	if (more > PMU_EVENTS_MAX - out->n)
		return fail(c, -E2BIG, "more than %d events", PMU_EVENTS_MAX);
	if (out->n + more <= out->cap)
		return 0;
	int ncap = out->cap ? out->cap : 8;
	while (ncap < out->n + more)
		ncap *= 2;
	struct pmu_event *nv = realloc(out->ev, (size_t)ncap * sizeof(*nv));
	if (!nv)
		return fail(c, -ENOMEM, "out of memory");
	out->ev = nv;
	out->cap = ncap;
	return 0;
}

static void event_free(struct pmu_event *e)
{
	free(e->spec);
	free(e->text);
	free(e->name);
	free(e->pmu);
	free(e->tp_format);
}

/* Appends a proto as an event; takes its tp_format and name. */
static int emit(struct ctx *c, struct pmu_events *out, struct proto *p, const char *item, const char *text,
		int leader, unsigned mods)
{
	int rc = events_reserve(c, out, 1);
	if (rc < 0)
		return rc;
	struct pmu_event *e = &out->ev[out->n];
	memset(e, 0, sizeof(*e));
	e->pa = p->pa;
	e->spec = strdup(item);
	e->text = strdup(text);
	e->name = p->name ? p->name : strdup(text);
	e->pmu = strdup(p->pmu_name);
	e->tp_format = p->tp_format;
	p->name = NULL;
	p->tp_format = NULL;
	e->leader = leader < 0 ? out->n : leader;
	e->nr_members = leader < 0 ? 1 : 0;
	e->mods = mods;
	e->flags = p->flags;
	e->scale = p->scale;
	snprintf(e->unit, sizeof(e->unit), "%s", p->unit);
	out->n++;
	if (!e->spec || !e->text || !e->name || !e->pmu)
		return fail(c, -ENOMEM, "out of memory");
	return 0;
}

struct member {
	char *text;       /* own text, as typed */
	struct protos ps;
	struct mods md;
};

/* A group: the members' attrs, one group per CPU PMU (or PMU instance) when
 * a member opens on several. */
static int build_group(struct ctx *c, struct pmu_events *out, const char *item, struct member *mb, int nm,
		       const struct mods *gm)
{
	int split = -1;
	for (int i = 0; i < nm; i++) {
		if (mb[i].ps.n > 1) {
			if (split < 0) {
				split = i;
				continue;
			}
			/* a second multi-PMU member must open on the same PMUs */
			bool same = mb[i].ps.n == mb[split].ps.n;
			for (int k = 0; same && k < mb[i].ps.n; k++)
				same = mb[i].ps.v[k].desc == mb[split].ps.v[k].desc;
			if (!same) {
				c->ev = mb[i].text;
				return fail(c, -EINVAL, "opens on other PMUs than %s in the same group", mb[split].text);
			}
		}
	}
	int copies = split < 0 ? 1 : mb[split].ps.n;
	for (int k = 0; k < copies; k++) {
		const struct pmu_desc *dk = split < 0 ? NULL : mb[split].ps.v[k].desc;
		int leader = -1, count = 0;
		for (int i = 0; i < nm; i++) {
			struct proto *p;
			if (mb[i].ps.n > 1) {
				p = &mb[i].ps.v[k];
			} else {
				p = &mb[i].ps.v[0];
				/* a member fixed on another CPU PMU joins the copy of its PMU only */
				if (dk && p->desc && p->desc != dk && (p->desc->core || pmu_base_len(p->desc->name) == pmu_base_len(dk->name)))
					continue;
			}
			struct mods md = mb[i].md;
			c->ev = mb[i].text;
			if (md.bits & PMU_MOD_SAMPLE_READ)
				return fail(c, -EINVAL, "modifier S belongs to the whole group ({...}:S)");
			if ((md.bits & PMU_MOD_PINNED) && i > 0)
				return fail(c, -EINVAL, "modifier D on a group member: only a group leader can be pinned");
			md.bits |= gm->bits;
			if (gm->precise > md.precise)
				md.precise = gm->precise;
			struct proto q = *p;
			q.name = NULL;
			q.tp_format = NULL;
			if ((p->name && !(q.name = strdup(p->name))) || (p->tp_format && !(q.tp_format = strdup(p->tp_format)))) {
				free(q.name);
				return fail(c, -ENOMEM, "out of memory");
			}
			int rc = apply_mods(c, &q, &md);
			struct perf_event_attr *a = &q.pa.attr;
			if (rc == 0 && (md.bits & PMU_MOD_SAMPLE_READ)) {
				a->sample_type |= PERF_SAMPLE_READ;
				a->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID;
				if (leader >= 0) {
					if (q.flags & (PMU_EV_PERIOD | PMU_EV_FREQ))
						rc = fail(c, -EINVAL, "period= or freq= on a member of a sample-read group "
							  "(only its leader samples)");
					a->sample_period = 0;
					a->freq = 0;
					q.flags |= PMU_EV_NO_SAMPLE;
				}
			}
			if (rc == 0 && leader < 0 && (md.bits & PMU_MOD_PINNED))
				a->pinned = 1;
			if (rc == 0)
				rc = emit(c, out, &q, item, mb[i].text, leader, md.bits);
			free(q.name);
			free(q.tp_format);
			if (rc < 0)
				return rc;
			if (leader < 0)
				leader = out->n - 1;
			count++;
		}
		if (leader >= 0)
			out->ev[leader].nr_members = count;
	}
	return 0;
}

/* Length of the next item or member: up to a comma outside '/.../' and
 * '{...}'. @return its length, or -1 with *why set. */
static long next_item(const char *s, bool in_group, const char **why)
{
	bool slash = false, brace = false, mem = false;
	size_t i;
	for (i = 0; s[i]; i++) {
		char ch = s[i];
		/* mem:ADDR/LEN:rwx: its '/' is no PMU's */
		if (!slash && (i == 0 || s[i - 1] == '{' || s[i - 1] == ',') && strncmp(s + i, "mem:", 4) == 0)
			mem = true;
		if (ch == '/' && mem) {
			continue;
		} else if (ch == '/') {
			slash = !slash;
		} else if (slash) {
			continue;
		} else if (ch == '{') {
			if (brace || in_group) {
				*why = "groups cannot nest";
				return -1;
			}
			if (i != 0) {
				*why = "'{' must begin a group";
				return -1;
			}
			brace = true;
		} else if (ch == '}') {
			if (!brace) {
				*why = "'}' without '{'";
				return -1;
			}
			brace = false;
		} else if (ch == ',' && !brace) {
			break;
		}
		if (ch == ',')
			mem = false;
	}
	if (slash) {
		*why = "no closing '/' after the terms";
		return -1;
	}
	if (brace) {
		*why = "no closing '}'";
		return -1;
	}
	return (long)i;
}

static int parse_item(struct ctx *c, const char *item, struct pmu_events *out)
{
	int rc = 0;
	char text[PMU_SPEC_MAX + 1];
	c->ev = item;
	if (item[0] != '{') {
		struct protos ps = {0};
		struct mods md;
		snprintf(text, sizeof(text), "%s", item);
		rc = parse_event(c, text, &ps, &md);
		for (int k = 0; rc == 0 && k < ps.n; k++) {
			c->ev = item;
			if ((rc = apply_mods(c, &ps.v[k], &md)) < 0)
				break;
			if (md.bits & PMU_MOD_SAMPLE_READ)
				ps.v[k].pa.attr.sample_type |= PERF_SAMPLE_READ;
			if (md.bits & PMU_MOD_PINNED)
				ps.v[k].pa.attr.pinned = 1;
			rc = emit(c, out, &ps.v[k], item, item, -1, md.bits);
		}
		pmu_protos_free(&ps);
		return rc;
	}
	/* {A,B,...}[:MODS]: next_item() saw the braces balance */
	const char *close = strrchr(item, '}');
	struct mods gm = {0};
	if (close[1]) {
		if (close[1] != ':')
			return fail(c, -EINVAL, "'%s' after a group: modifiers follow ':'", close + 1);
		if (!close[2])
			return fail(c, -EINVAL, "nothing after ':'");
		if ((rc = parse_mods(c, close + 2, &gm)) < 0)
			return rc;
	}
	char inner[PMU_SPEC_MAX + 1];
	snprintf(inner, sizeof(inner), "%.*s", (int)(close - item - 1), item + 1);
	if (!inner[0])
		return fail(c, -EINVAL, "empty group");
	enum { MAX_MEMBERS = 64 };
	struct member *mb = calloc(MAX_MEMBERS, sizeof(*mb));
	if (!mb)
		return fail(c, -ENOMEM, "out of memory");
	int nm = 0;
	for (char *s = inner;;) {
		const char *why = NULL;
		long len = next_item(s, true, &why);
		c->ev = item;
		if (len < 0) {
			rc = fail(c, -EINVAL, "%s", why);
			break;
		}
		if (nm == MAX_MEMBERS) {
			rc = fail(c, -E2BIG, "more than %d events in a group", MAX_MEMBERS);
			break;
		}
		bool last = s[len] == 0;
		s[len] = 0;
		struct member *m = &mb[nm++];
		m->text = s;
		if (!*s) {
			rc = fail(c, -EINVAL, "empty event in the group");
			break;
		}
		snprintf(text, sizeof(text), "%s", s);
		c->ev = s;
		c->in_group = true;
		rc = parse_event(c, text, &m->ps, &m->md);
		c->in_group = false;
		if (rc < 0)
			break;
		if (last)
			break;
		s += len + 1;
	}
	if (rc == 0)
		rc = build_group(c, out, item, mb, nm, &gm);
	for (int i = 0; i < nm; i++)
		pmu_protos_free(&mb[i].ps);
	free(mb);
	return rc;
}

int pmu_parse(struct pmu_model *m, const char *spec, struct pmu_events *out, char *err, size_t errlen)
{
	struct ctx c = {.m = m, .err = err, .errlen = errlen, .ev = spec};
	int start = out->n, rc = 0;
	if (err && errlen)
		err[0] = 0;
	size_t len = strnlen(spec, PMU_SPEC_MAX + 1);
	if (len > PMU_SPEC_MAX) {
		pmu_set_err(err, errlen, "%.40s...: longer than %d bytes", spec, PMU_SPEC_MAX);
		return -E2BIG;
	}
	if (!len) {
		pmu_set_err(err, errlen, "empty event spec");
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if (!isgraph((unsigned char)spec[i])) {
			if (spec[i] == ' ')
				return fail(&c, -EINVAL, "unexpected space");
			return fail(&c, -EINVAL, "unexpected character 0x%02x", (unsigned char)spec[i]);
		}
	char item[PMU_SPEC_MAX + 1];
	for (const char *s = spec;;) {
		const char *why = NULL;
		long n = next_item(s, false, &why);
		c.ev = spec; /* syntax errors name the whole spec */
		if (n < 0) {
			rc = fail(&c, -EINVAL, "%s", why);
			break;
		}
		memcpy(item, s, (size_t)n);
		item[n] = 0;
		if (!n) {
			rc = fail(&c, -EINVAL, "empty event between commas");
			break;
		}
		if ((rc = parse_item(&c, item, out)) < 0)
			break;
		if (!s[n])
			break;
		s += n + 1;
		if (!*s) {
			c.ev = spec;
			rc = fail(&c, -EINVAL, "empty event after the last comma");
			break;
		}
	}
	if (rc < 0) {
		for (int i = start; i < out->n; i++)
			event_free(&out->ev[i]);
		out->n = start;
	}
	return rc;
}

void pmu_events_free(struct pmu_events *evs)
{
	for (int i = 0; i < evs->n; i++)
		event_free(&evs->ev[i]);
	free(evs->ev);
	memset(evs, 0, sizeof(*evs));
}

char *pmu_attr_excl_letters(const struct perf_event_attr *a, char out[static 6])
{
	size_t k = 0;
	if (a->exclude_user)
		out[k++] = 'u';
	if (a->exclude_kernel)
		out[k++] = 'k';
	if (a->exclude_hv)
		out[k++] = 'h';
	if (a->exclude_guest)
		out[k++] = 'G';
	if (a->exclude_host)
		out[k++] = 'H';
	out[k] = 0;
	return out;
}
