/*
 * views.c - pffold's perf-report views from the folding engine's entries
 * (pf_fold_entry_next(), pf_fold_node()): a table sorted by keys
 * (--sort comm,dso,sym,...), and the callers or callees of one function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "views.h"

static const struct {
	const char *name, *title;
	enum view_key key;
	unsigned flags; /* what the engine must key its entries by */
} key_table[] = {
	{ "comm", "Command", K_COMM, 0 },
	{ "pid", "Pid", K_PID, PF_FOLD_PID },
	{ "tid", "Tid", K_TID, PF_FOLD_TID },
	{ "dso", "Shared Object", K_DSO, 0 },
	{ "sym", "Symbol", K_SYM, 0 },
	{ "cpu", "CPU", K_CPU, PF_FOLD_CPU },
	{ "event", "Event", K_EVENT, PF_FOLD_ALL_EVENTS },
};
#define N_KEYS (sizeof(key_table) / sizeof(key_table[0]))

int view_keys_parse(const char *spec, struct view_keys *k, char *err, size_t errsz)
{
	memset(k, 0, sizeof(*k));
	const char *s = spec;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		size_t i;
		for (i = 0; i < N_KEYS; i++)
			if (strlen(key_table[i].name) == n && strncmp(s, key_table[i].name, n) == 0)
				break;
		if (i == N_KEYS) {
			snprintf(err, errsz, "unknown key '%.*s' (comm, pid, tid, dso, sym, cpu, event)", (int)n, s);
			return -1;
		}
		for (size_t j = 0; j < k->n; j++)
			if (k->key[j] == key_table[i].key) {
				snprintf(err, errsz, "key '%s' given twice", key_table[i].name);
				return -1;
			}
		k->key[k->n++] = key_table[i].key;
		k->fold_flags |= key_table[i].flags;
		if (key_table[i].key == K_DSO || key_table[i].key == K_SYM)
			k->per_frame = 1;
		if (!e)
			break;
		s = e + 1;
		if (!*s) {
			snprintf(err, errsz, "empty key at the end of '%s'", spec);
			return -1;
		}
	}
	if (!k->n) {
		snprintf(err, errsz, "no key given");
		return -1;
	}
	return 0;
}

/* ---- aggregation by text key ---- */

struct agg_item {
	char *key;
	uint64_t self, total;
	uint32_t ev; /* with the event key: the event's index (struct ev_totals), else 0 */
};

struct agg {
	struct agg_item *v;
	size_t n, cap;
};

static int agg_add_ev(struct agg *a, const char *key, uint64_t self, uint64_t total, uint32_t ev)
{
	if (pft_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v), 1024) < 0)
		return -ENOMEM;
	char *k = strdup(key);
	if (!k)
		return -ENOMEM;
	a->v[a->n++] = (struct agg_item){ k, self, total, ev };
	return 0;
}

static int agg_add(struct agg *a, const char *key, uint64_t self, uint64_t total)
{
	return agg_add_ev(a, key, self, total, 0);
}

static int by_key(const void *x, const void *y)
{
	return strcmp(((const struct agg_item *)x)->key, ((const struct agg_item *)y)->key);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Sums the items of equal keys. */
static void agg_merge(struct agg *a)
{
	qsort(a->v, a->n, sizeof(*a->v), by_key);
	size_t m = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (m && strcmp(a->v[m - 1].key, a->v[i].key) == 0) {
			a->v[m - 1].self = sat_add(a->v[m - 1].self, a->v[i].self);
			a->v[m - 1].total = sat_add(a->v[m - 1].total, a->v[i].total);
			free(a->v[i].key);
		} else {
			a->v[m++] = a->v[i];
		}
	}
	a->n = m;
}

/* Largest total first, then largest self, then the key. */
static int by_weight(const void *x, const void *y)
{
	const struct agg_item *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* With the event key: each event's rows together (in the file's order of
 * the events met), then by weight. */
static int by_event_weight(const void *x, const void *y)
{
	const struct agg_item *a = x, *b = y;
	if (a->ev != b->ev)
		return a->ev < b->ev ? -1 : 1;
	return by_weight(x, y);
}

/* The events of a view keyed by event, in the order met, with each one's
 * total weight: the rows' shares are of their own event's total, as perf
 * report keeps one table per event (clock ticks and page faults are not
 * parts of one whole). */
struct ev_totals {
	const char **name;
	uint64_t *total;
	uint32_t n;
	size_t cap_name, cap_total;
};

static int ev_index(struct ev_totals *t, const char *name, uint32_t *idx)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0) {
			*idx = i;
			return 0;
		}
	if (pft_grow((void **)&t->name, &t->cap_name, (size_t)t->n + 1, sizeof(*t->name), 8) < 0 ||
	    pft_grow((void **)&t->total, &t->cap_total, (size_t)t->n + 1, sizeof(*t->total), 8) < 0)
		return -ENOMEM;
	t->name[t->n] = name;
	t->total[t->n] = 0;
	*idx = t->n++;
	return 0;
}

static void agg_free(struct agg *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].key);
	free(a->v);
}

/* ---- stacks ---- */

struct frames {
	struct pf_fold_node *v; /* root first */
	size_t n, cap;
};

static int frames_of(const pf_fold *f, uint32_t node, struct frames *fr)
{
	fr->n = 0;
	for (uint32_t d = node; d != PF_PROF_NONE;) {
		if (pft_grow((void **)&fr->v, &fr->cap, fr->n + 1, sizeof(*fr->v), 256) < 0)
			return -ENOMEM;
		if (pf_fold_node(f, d, &fr->v[fr->n]) < 0)
			return -EINVAL;
		d = fr->v[fr->n++].parent;
	}
	for (size_t i = 0; i < fr->n / 2; i++) {
		struct pf_fold_node t = fr->v[i];
		fr->v[i] = fr->v[fr->n - 1 - i];
		fr->v[fr->n - 1 - i] = t;
	}
	return 0;
}

/* The key text of an entry for one frame (NULL: no frame): the fields
 * joined by tabs (names are escaped: they hold no tab). */
static int key_text(const struct view_keys *k, const struct pf_fold_entry *e, const struct pf_fold_node *fr,
		    char *buf, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < k->n; i++) {
		char num[24], comm[256];
		const char *v = num;
		switch (k->key[i]) {
		case K_COMM: {
			/* a thread name is the process's to choose: no control
			 * bytes (a tab would split the key) in the table */
			size_t j = 0;
			for (const char *c = e->comm; *c && j < sizeof(comm) - 1; c++)
				comm[j++] = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
			comm[j] = 0;
			v = j ? comm : "[unknown]";
			break;
		}
		case K_PID:
			snprintf(num, sizeof(num), "%u", e->pid);
			break;
		case K_TID:
			snprintf(num, sizeof(num), "%u", e->tid);
			break;
		case K_CPU:
			snprintf(num, sizeof(num), "%u", e->cpu);
			break;
		case K_EVENT:
			v = e->event;
			break;
		case K_DSO:
			v = fr ? (fr->dso[0] ? fr->dso : "[unknown]") : "[none]";
			break;
		case K_SYM:
			v = fr ? fr->name : "[none]";
			break;
		}
		int w = snprintf(buf + n, size - n, "%s%s", i ? "\t" : "", v);
		if (w < 0 || (size_t)w >= size - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	return 0;
}

static int by_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Adds one entry to the sort view: self under its leaf's key, total once
 * under each distinct key of its frames. */
static int sort_entry(const pf_fold *f, const struct view_keys *k, const struct pf_fold_entry *e, struct frames *fr,
		      struct agg *a, uint32_t ev)
{
	char buf[8192];
	int rc = frames_of(f, e->node, fr);
	if (rc < 0)
		return rc;
	if (!k->per_frame || !fr->n) {
		if ((rc = key_text(k, e, fr->n ? &fr->v[fr->n - 1] : NULL, buf, sizeof(buf))) < 0)
			return rc;
		return agg_add_ev(a, buf, e->weight, e->weight, ev);
	}
	if ((rc = key_text(k, e, &fr->v[fr->n - 1], buf, sizeof(buf))) < 0 ||
	    (rc = agg_add_ev(a, buf, e->weight, 0, ev)) < 0)
		return rc;
	char **keys = calloc(fr->n, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < fr->n && rc == 0; i++) {
		if ((rc = key_text(k, e, &fr->v[i], buf, sizeof(buf))) == 0 && !(keys[i] = strdup(buf)))
			rc = -ENOMEM;
	}
	if (rc == 0) {
		qsort(keys, fr->n, sizeof(*keys), by_str);
		for (size_t i = 0; i < fr->n && rc == 0; i++)
			if (i == 0 || strcmp(keys[i], keys[i - 1]) != 0)
				rc = agg_add_ev(a, keys[i], 0, e->weight, ev);
	}
	for (size_t i = 0; i < fr->n; i++)
		free(keys[i]);
	free(keys);
	return rc;
}

static double pct(uint64_t w, uint64_t total)
{
	return total ? 100.0 * (double)w / (double)total : 0.0;
}

/* The first line: what the shares are of. Lost samples are in the total,
 * as the [lost] line of folded stacks, and said so. */
static void weight_line(FILE *out, const pf_fold *f, const struct view_opts *vo)
{
	unsigned long long total = pf_fold_total(f), n = pf_fold_samples(f), lost = pf_fold_lost(f);
	fprintf(out, "# %llu samples", n);
	if (lost)
		fprintf(out, " + %llu lost", lost);
	if (vo->period)
		fprintf(out, ", %llu %s of period%s", total, pf_fold_unit(f),
			lost ? " (the lost at the mean period)" : "");
	if (lost)
		fprintf(out, ": shares include the lost");
	fputc('\n', out);
}

int view_sort(const pf_fold *f, const struct view_keys *k, const struct view_opts *vo, FILE *out)
{
	struct agg a = { 0 };
	struct frames fr = { 0 };
	struct ev_totals et = { 0 };
	struct pf_fold_entry e;
	size_t pos = 0;
	int rc = 0, by_event = 0;
	for (size_t c = 0; c < k->n; c++)
		by_event |= k->key[c] == K_EVENT;
	while (rc == 0 && pf_fold_entry_next(f, &pos, &e)) {
		uint32_t ev = 0;
		if (by_event && (rc = ev_index(&et, e.event, &ev)) == 0)
			et.total[ev] = sat_add(et.total[ev], e.weight);
		if (rc == 0)
			rc = sort_entry(f, k, &e, &fr, &a, ev);
	}
	free(fr.v);
	if (rc < 0) {
		agg_free(&a);
		free(et.name);
		free(et.total);
		return rc;
	}
	agg_merge(&a);
	if (by_event) {
		/* the events in the file's order: each item's ev becomes its
		 * event's rank, the totals and names follow */
		uint32_t *rank = malloc((et.n ? et.n : 1) * sizeof(*rank));
		const char **name = malloc((et.n ? et.n : 1) * sizeof(*name));
		uint64_t *tot = malloc((et.n ? et.n : 1) * sizeof(*tot));
		if (!rank || !name || !tot) {
			free(rank);
			free(name);
			free(tot);
			agg_free(&a);
			free(et.name);
			free(et.total);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < et.n; i++) {
			rank[i] = 0;
			int xi = pf_fold_event_index(f, et.name[i]);
			for (uint32_t j = 0; j < et.n; j++) {
				int xj = pf_fold_event_index(f, et.name[j]);
				if (xj < xi || (xj == xi && strcmp(et.name[j], et.name[i]) < 0))
					rank[i]++;
			}
		}
		for (uint32_t i = 0; i < et.n; i++) {
			name[rank[i]] = et.name[i];
			tot[rank[i]] = et.total[i];
		}
		for (size_t r = 0; r < a.n; r++)
			a.v[r].ev = rank[a.v[r].ev];
		memcpy(et.name, name, et.n * sizeof(*name));
		memcpy(et.total, tot, et.n * sizeof(*tot));
		free(rank);
		free(name);
		free(tot);
	}
	qsort(a.v, a.n, sizeof(*a.v), by_event ? by_event_weight : by_weight);
	/* --top=N: the first N rows (of each event's, with the event key) */
	size_t rows = 0;
	for (size_t r = 0, in_ev = 0; r < a.n; r++) {
		in_ev = r && a.v[r].ev == a.v[r - 1].ev ? in_ev + 1 : 0;
		if (vo->top && in_ev >= vo->top) {
			a.v[r].key[0] = 0; /* not printed */
			continue;
		}
		rows = r + 1;
	}
	/* column widths over the rows printed */
	size_t width[VIEW_MAX_KEYS] = { 0 };
	for (size_t c = 0; c < k->n; c++)
		for (size_t i = 0; i < N_KEYS; i++)
			if (key_table[i].key == k->key[c])
				width[c] = strlen(key_table[i].title);
	for (size_t r = 0; r < rows; r++) {
		const char *s = a.v[r].key;
		for (size_t c = 0; c < k->n; c++) {
			size_t n = strcspn(s, "\t");
			if (n > width[c])
				width[c] = n;
			s += n + (s[n] ? 1 : 0);
		}
	}
	weight_line(out, f, vo);
	if (by_event) {
		fprintf(out, "# each share is of its event's own total:");
		for (uint32_t i = 0; i < et.n; i++)
			fprintf(out, "%s %s %llu", i ? "," : "", et.name[i], (unsigned long long)et.total[i]);
		fputc('\n', out);
	}
	fprintf(out, "# %8s %8s", "Total", "Self");
	for (size_t c = 0; c < k->n; c++)
		for (size_t i = 0; i < N_KEYS; i++)
			if (key_table[i].key == k->key[c])
				fprintf(out, "  %-*s", c + 1 < k->n ? (int)width[c] : 0, key_table[i].title);
	fputc('\n', out);
	for (size_t r = 0; r < rows; r++) {
		if (!a.v[r].key[0] && vo->top)
			continue; /* past its event's first N */
		uint64_t total = by_event ? et.total[a.v[r].ev] : pf_fold_total(f);
		fprintf(out, "  %7.2f%% %7.2f%%", pct(a.v[r].total, total), pct(a.v[r].self, total));
		const char *s = a.v[r].key;
		for (size_t c = 0; c < k->n; c++) {
			size_t n = strcspn(s, "\t");
			if (c + 1 < k->n)
				fprintf(out, "  %-*.*s", (int)width[c], (int)n, s);
			else
				fprintf(out, "  %.*s", (int)n, s);
			s += n + (s[n] ? 1 : 0);
		}
		fputc('\n', out);
	}
	agg_free(&a);
	free(et.name);
	free(et.total);
	return 0;
}

/* ---- callers and callees ---- */

/* Appends frames [from, to) joined by ';' to buf; "" when empty. */
static int path_text(const struct frames *fr, size_t from, size_t to, char **buf, size_t *cap)
{
	size_t n = 0;
	for (size_t i = from; i < to; i++) {
		size_t l = strlen(fr->v[i].name);
		if (n + l + 2 > *cap) {
			size_t c = (*cap ? *cap * 2 : 4096);
			while (c < n + l + 2)
				c *= 2;
			char *b = realloc(*buf, c);
			if (!b)
				return -ENOMEM;
			*buf = b;
			*cap = c;
		}
		if (i > from)
			(*buf)[n++] = ';';
		memcpy(*buf + n, fr->v[i].name, l);
		n += l;
	}
	if (!*buf && !(*buf = malloc(*cap = 64)))
		return -ENOMEM;
	(*buf)[n] = 0;
	return 0;
}

int view_calls(const pf_fold *f, const char *name, int callees, const struct view_opts *vo, FILE *out)
{
	struct agg a = { 0 };
	struct frames fr = { 0 };
	struct pf_fold_entry e;
	size_t pos = 0, cap = 0;
	char *buf = NULL;
	uint64_t in_name = 0, self = 0;
	int rc = 0;
	while (rc == 0 && pf_fold_entry_next(f, &pos, &e)) {
		if ((rc = frames_of(f, e.node, &fr)) < 0)
			break;
		/* the outermost frame of that name: recursion counts once */
		size_t i;
		for (i = 0; i < fr.n; i++)
			if (strcmp(fr.v[i].name, name) == 0)
				break;
		if (i == fr.n)
			continue;
		in_name = sat_add(in_name, e.weight);
		if (i == fr.n - 1)
			self = sat_add(self, e.weight);
		rc = callees ? path_text(&fr, i + 1, fr.n, &buf, &cap) : path_text(&fr, 0, i, &buf, &cap);
		if (rc == 0)
			rc = agg_add(&a, buf[0] ? buf : (callees ? "[self]" : "[root]"), e.weight, e.weight);
	}
	free(fr.v);
	free(buf);
	if (rc < 0) {
		agg_free(&a);
		return rc;
	}
	if (!in_name) {
		agg_free(&a);
		return -ENOENT;
	}
	agg_merge(&a);
	qsort(a.v, a.n, sizeof(*a.v), by_weight);
	uint64_t total = pf_fold_total(f);
	weight_line(out, f, vo);
	fprintf(out, "# %s: %.2f%% total, %.2f%% self; %s, outermost call (recursion counted once)\n", name,
		pct(in_name, total), pct(self, total),
		callees ? "where its time goes (NAME;callee;...)" : "the paths that lead into it (root;...;caller)");
	fprintf(out, "# %8s %8s  %s\n", "Total", "Of it", callees ? "Callees" : "Callers");
	size_t rows = vo->top && vo->top < a.n ? vo->top : a.n;
	for (size_t r = 0; r < rows; r++)
		fprintf(out, "  %7.2f%% %7.2f%%  %s\n", pct(a.v[r].total, total), pct(a.v[r].total, in_name),
			a.v[r].key);
	agg_free(&a);
	return 0;
}
