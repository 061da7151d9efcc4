/*
 * maps.c - the address -> mapping timeline (maps.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "maps.h"

void pf_maps_init(struct pf_maps *m)
{
	memset(m, 0, sizeof(*m));
}

void pf_maps_free(struct pf_maps *m)
{
	for (uint32_t i = 0; i < m->n_procs; i++) {
		free(m->procs[i].maps);
		free(m->procs[i].max_end);
		free(m->procs[i].bounds);
	}
	free(m->procs);
	free(m->proc_hash);
	for (uint32_t i = 0; i < m->n_dsos; i++)
		free(m->dsos[i].path);
	free(m->dsos);
	free(m->dso_hash);
	for (uint32_t i = 0; i < m->n_bids; i++)
		free(m->bids[i].path);
	free(m->bids);
	memset(m, 0, sizeof(*m));
}

static uint32_t hash32(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ULL;
	v ^= v >> 33;
	return (uint32_t)v;
}

/* ---- processes ---------------------------------------------------------- */

static int proc_rehash(struct pf_maps *m, uint32_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->n_procs; i++) {
		uint32_t k = hash32(m->procs[i].pid) & (cap - 1);
		while (h[k])
			k = (k + 1) & (cap - 1);
		h[k] = i + 1;
	}
	free(m->proc_hash);
	m->proc_hash = h;
	m->proc_hash_cap = cap;
	return 0;
}

static struct pf_maps_proc *proc_find(const struct pf_maps *m, uint32_t pid)
{
	if (!m->proc_hash_cap)
		return NULL;
	uint32_t k = hash32(pid) & (m->proc_hash_cap - 1);
	while (m->proc_hash[k]) {
		struct pf_maps_proc *p = &m->procs[m->proc_hash[k] - 1];
		if (p->pid == pid)
			return p;
		k = (k + 1) & (m->proc_hash_cap - 1);
	}
	return NULL;
}

static struct pf_maps_proc *proc_get(struct pf_maps *m, uint32_t pid)
{
	struct pf_maps_proc *p = proc_find(m, pid);
	if (p)
		return p;
	if ((m->n_procs + 1) * 2 > m->proc_hash_cap) {
		if (proc_rehash(m, m->proc_hash_cap ? m->proc_hash_cap * 2 : 64) < 0)
			return NULL;
	}
	if (m->n_procs == m->cap_procs) {
		uint32_t cap = m->cap_procs ? m->cap_procs * 2 : 32;
		struct pf_maps_proc *np = realloc(m->procs, cap * sizeof(*np));
		if (!np)
			return NULL;
		m->procs = np;
		m->cap_procs = cap;
	}
	p = &m->procs[m->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	uint32_t k = hash32(pid) & (m->proc_hash_cap - 1);
	while (m->proc_hash[k])
		k = (k + 1) & (m->proc_hash_cap - 1);
	m->proc_hash[k] = ++m->n_procs;
	return p;
}

/* ---- DSOs --------------------------------------------------------------- */

static uint64_t dso_key_hash(const char *path, size_t len, const uint8_t *bid, size_t bid_size)
{
	return pf_xxh3(path, len) ^ (pf_xxh3(bid, bid_size) * 31);
}

static int dso_rehash(struct pf_maps *m, uint32_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->n_dsos; i++) {
		struct pf_dso *d = &m->dsos[i];
		uint32_t k = (uint32_t)dso_key_hash(d->path, d->path_len, d->build_id, d->build_id_size) & (cap - 1);
		while (h[k])
			k = (k + 1) & (cap - 1);
		h[k] = i + 1;
	}
	free(m->dso_hash);
	m->dso_hash = h;
	m->dso_hash_cap = cap;
	return 0;
}

static const struct pf_maps_bid *bid_find(const struct pf_maps *m, const char *path, size_t len)
{
	for (uint32_t i = 0; i < m->n_bids; i++)
		if (m->bids[i].path_len == len && memcmp(m->bids[i].path, path, len) == 0)
			return &m->bids[i];
	return NULL;
}

int64_t pf_maps_dso_intern(struct pf_maps *m, const char *path, size_t len,
			   const uint8_t *bid, size_t bid_size)
{
	if (bid_size > 64)
		bid_size = 64;
	if (len > UINT32_MAX - 1)
		return -EINVAL;
	/* bid may be a DSO's build-id in this table, which may move below:
	 * copied first (a path is a block of its own, which stays put) */
	uint8_t bid_copy[64];
	if (bid_size) {
		memcpy(bid_copy, bid, bid_size);
		bid = bid_copy;
	}
	if (!bid_size) {
		const struct pf_maps_bid *b = bid_find(m, path, len);
		if (b) {
			bid = b->id;
			bid_size = b->size;
		}
	}
	uint64_t hv = dso_key_hash(path, len, bid, bid_size);
	if (m->dso_hash_cap) {
		uint32_t k = (uint32_t)hv & (m->dso_hash_cap - 1);
		while (m->dso_hash[k]) {
			struct pf_dso *d = &m->dsos[m->dso_hash[k] - 1];
			if (d->path_len == len && d->build_id_size == bid_size && memcmp(d->path, path, len) == 0 &&
			    (bid_size == 0 || memcmp(d->build_id, bid, bid_size) == 0))
				return d->id;
			k = (k + 1) & (m->dso_hash_cap - 1);
		}
	}
	if ((m->n_dsos + 1) * 2 > m->dso_hash_cap) {
		if (dso_rehash(m, m->dso_hash_cap ? m->dso_hash_cap * 2 : 64) < 0)
			return -ENOMEM;
	}
	if (m->n_dsos == m->cap_dsos) {
		uint32_t cap = m->cap_dsos ? m->cap_dsos * 2 : 32;
		struct pf_dso *nd = realloc(m->dsos, cap * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		m->dsos = nd;
		m->cap_dsos = cap;
	}
	struct pf_dso *d = &m->dsos[m->n_dsos];
	memset(d, 0, sizeof(*d));
	d->path = malloc(len + 1);
	if (!d->path)
		return -ENOMEM;
	memcpy(d->path, path, len);
	d->path[len] = 0;
	d->path_len = (uint32_t)len;
	d->build_id_size = (uint8_t)bid_size;
	if (bid_size)
		memcpy(d->build_id, bid, bid_size);
	d->id = m->n_dsos;
	uint32_t k = (uint32_t)hv & (m->dso_hash_cap - 1);
	while (m->dso_hash[k])
		k = (k + 1) & (m->dso_hash_cap - 1);
	m->dso_hash[k] = ++m->n_dsos;
	return d->id;
}

int pf_maps_note_buildid(struct pf_maps *m, const struct pf_buildid *e)
{
	if (!e->build_id_size || e->path_len > UINT32_MAX - 1)
		return 0;
	if (bid_find(m, e->path, e->path_len))
		return 0;
	if (m->n_bids == m->cap_bids) {
		uint32_t cap = m->cap_bids ? m->cap_bids * 2 : 16;
		struct pf_maps_bid *nb = realloc(m->bids, cap * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		m->bids = nb;
		m->cap_bids = cap;
	}
	struct pf_maps_bid *b = &m->bids[m->n_bids];
	b->path = malloc(e->path_len + 1);
	if (!b->path)
		return -ENOMEM;
	memcpy(b->path, e->path, e->path_len);
	b->path[e->path_len] = 0;
	b->path_len = (uint32_t)e->path_len;
	b->size = e->build_id_size > 64 ? 64 : e->build_id_size;
	memcpy(b->id, e->build_id, b->size);
	m->n_bids++;
	/* DSOs already seen without a build-id take it (their hash slot keys on
	 * the empty build-id; rebuild the hash). */
	int changed = 0;
	for (uint32_t i = 0; i < m->n_dsos; i++) {
		struct pf_dso *d = &m->dsos[i];
		if (!d->build_id_size && d->path_len == b->path_len && memcmp(d->path, b->path, b->path_len) == 0) {
			d->build_id_size = b->size;
			memcpy(d->build_id, b->id, b->size);
			changed = 1;
		}
	}
	if (changed && m->dso_hash_cap)
		return dso_rehash(m, m->dso_hash_cap);
	return 0;
}

/* ---- mappings ----------------------------------------------------------- */

static void recompute_max_end(struct pf_maps_proc *p, uint32_t from)
{
	uint64_t mx = from ? p->max_end[from - 1] : 0;
	for (uint32_t i = from; i < p->n; i++) {
		if (p->maps[i].end > mx)
			mx = p->maps[i].end;
		p->max_end[i] = mx;
	}
}

static int proc_insert(struct pf_maps_proc *p, const struct pf_map *mp)
{
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 16;
		struct pf_map *nm = realloc(p->maps, cap * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		p->maps = nm;
		uint64_t *ne = realloc(p->max_end, cap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		p->max_end = ne;
		p->cap = cap;
	}
	/* upper bound on start: keep insertion order among equal starts */
	uint32_t lo = 0, hi = p->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (p->maps[mid].start <= mp->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&p->maps[lo + 1], &p->maps[lo], (p->n - lo) * sizeof(*mp));
	p->maps[lo] = *mp;
	p->n++;
	recompute_max_end(p, lo);
	return 0;
}

int pf_maps_mmap(struct pf_maps *m, uint32_t pid, uint64_t start, uint64_t len,
		 uint64_t pgoff, uint32_t dso, uint64_t time_ns)
{
	if (!len || start + len < start)
		return 0;
	struct pf_maps_proc *p = proc_get(m, pid);
	if (!p)
		return -ENOMEM;
	uint64_t end = start + len;
	for (uint32_t i = 0; i < p->n; i++) {
		struct pf_map *o = &p->maps[i];
		if (o->start < end && start < o->end && o->t_end > time_ns && o->t_start <= time_ns)
			o->t_end = time_ns;
	}
	p->gen = ++m->gen_next;
	struct pf_map mp = { start, end, pgoff, time_ns, PF_TIME_INF, dso };
	return proc_insert(p, &mp);
}

int pf_maps_fork(struct pf_maps *m, uint32_t pid, uint32_t ppid, uint64_t time_ns)
{
	if (pid == ppid)
		return 0;
	struct pf_maps_proc *pp = proc_find(m, ppid);
	if (!pp || !pp->n)
		return 0;
	/* copy first: proc_get may move the procs array */
	uint32_t n = 0;
	struct pf_map *copy = malloc(pp->n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (uint32_t i = 0; i < pp->n; i++) {
		if (pp->maps[i].t_start <= time_ns && pp->maps[i].t_end > time_ns) {
			copy[n] = pp->maps[i];
			copy[n].t_end = PF_TIME_INF;
			n++;
		}
	}
	struct pf_maps_proc *p = proc_get(m, pid);
	int rc = p ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < n && rc == 0; i++)
		rc = proc_insert(p, &copy[i]);
	if (p)
		p->gen = ++m->gen_next;
	free(copy);
	return rc;
}

void pf_maps_exec(struct pf_maps *m, uint32_t pid, uint64_t time_ns)
{
	struct pf_maps_proc *p = proc_find(m, pid);
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n; i++)
		if (p->maps[i].t_end > time_ns)
			p->maps[i].t_end = time_ns;
	p->gen = ++m->gen_next;
}

static int parse_hex(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int n = 0;
	while (p < end) {
		int c = *p, d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (n++ >= 16)
			return -1;
		v = v << 4 | (uint64_t)d;
		p++;
	}
	if (!n)
		return -1;
	*s = p;
	*out = v;
	return 0;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

int pf_maps_add_proc_maps(struct pf_maps *m, uint32_t pid, uint64_t time_ns,
			  const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int added = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *s = p;
		p = eol < end ? eol + 1 : end;
		uint64_t start, stop, off;
		if (parse_hex(&s, eol, &start) || s >= eol || *s != '-')
			continue;
		s++;
		if (parse_hex(&s, eol, &stop) || s >= eol || *s != ' ')
			continue;
		s++;
		if (eol - s < 4 || s[2] != 'x')
			continue; /* not executable */
		s = skip_field(s, eol); /* perms */
		if (parse_hex(&s, eol, &off))
			continue;
		s = skip_field(s, eol); /* offset */
		s = skip_field(s, eol); /* dev */
		s = skip_field(s, eol); /* inode */
		if (s >= eol)
			continue; /* anonymous */
		size_t plen = (size_t)(eol - s);
		if (plen >= 10 && memcmp(s + plen - 10, " (deleted)", 10) == 0)
			plen -= 10;
		if (stop <= start)
			continue;
		int64_t dso = pf_maps_dso_intern(m, s, plen, NULL, 0);
		if (dso < 0)
			return (int)dso;
		int rc = pf_maps_mmap(m, pid, start, stop - start, off, (uint32_t)dso, time_ns);
		if (rc < 0)
			return rc;
		added++;
	}
	return added;
}

int pf_maps_record(struct pf_maps *m, const struct pf_event *ev, const struct perf_event_header *rec)
{
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct pf_mmap mm;
		if (pf_mmap_decode(ev, rec, &mm) < 0)
			return 0;
		if (mm.pid == UINT32_MAX)
			return 0; /* kernel maps */
		if (mm.mmap2 ? !(mm.prot & PROT_EXEC) : (rec->misc & PERF_RECORD_MISC_MMAP_DATA) != 0)
			return 0;
		uint8_t bid_size = mm.build_id_size > 20 ? 20 : mm.build_id_size;
		int64_t dso = pf_maps_dso_intern(m, mm.filename, mm.filename_len,
						 mm.has_build_id ? mm.build_id : NULL, mm.has_build_id ? bid_size : 0);
		if (dso < 0)
			return (int)dso;
		return pf_maps_mmap(m, mm.pid, mm.addr, mm.len, mm.pgoff, (uint32_t)dso,
				    pf_record_time(ev, rec));
	}
	case PERF_RECORD_FORK: {
		struct pf_task t;
		if (pf_task_decode(ev, rec, &t) < 0)
			return 0;
		return pf_maps_fork(m, t.pid, t.ppid, t.time);
	}
	case PERF_RECORD_COMM: {
		struct pf_comm c;
		if (!(rec->misc & PERF_RECORD_MISC_COMM_EXEC) || pf_comm_decode(ev, rec, &c) < 0)
			return 0;
		pf_maps_exec(m, c.pid, pf_record_time(ev, rec));
		return 0;
	}
	default:
		return 0;
	}
}

const struct pf_map *pf_maps_find(const struct pf_maps *m, uint32_t pid, uint64_t addr, uint64_t time_ns)
{
	return pf_maps_find_live(m, pid, addr, time_ns, NULL);
}

const struct pf_map *pf_maps_find_live(const struct pf_maps *m, uint32_t pid, uint64_t addr,
				       uint64_t time_ns, int *live)
{
	if (live)
		*live = 0;
	const struct pf_maps_proc *p = proc_find(m, pid);
	if (!p || !p->n)
		return NULL;
	/* last entry with start <= addr */
	uint32_t lo = 0, hi = p->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct pf_map *best = NULL;
	uint64_t best_dist = UINT64_MAX;
	for (uint32_t i = lo; i-- > 0;) {
		if (p->max_end[i] <= addr)
			break;
		const struct pf_map *mp = &p->maps[i];
		if (addr >= mp->end)
			continue;
		if (mp->t_start <= time_ns && time_ns < mp->t_end) {
			if (!best || best_dist != 0 || mp->t_start > best->t_start) {
				best = mp;
				best_dist = 0;
			}
			continue;
		}
		uint64_t dist = mp->t_start > time_ns ? mp->t_start - time_ns : time_ns - mp->t_end + 1;
		if (dist < best_dist) {
			best = mp;
			best_dist = dist;
		}
	}
	if (live)
		*live = best && best_dist == 0;
	return best;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The sorted distinct times at which the live set of p changes. */
static int build_bounds(struct pf_maps_proc *p)
{
	uint64_t need = (uint64_t)p->n * 2;
	if (need > p->cap_bounds) {
		uint64_t *nb = realloc(p->bounds, need * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		p->bounds = nb;
		p->cap_bounds = (uint32_t)need;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		p->bounds[n++] = p->maps[i].t_start;
		if (p->maps[i].t_end != PF_TIME_INF)
			p->bounds[n++] = p->maps[i].t_end;
	}
	qsort(p->bounds, n, sizeof(*p->bounds), u64_cmp);
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!k || p->bounds[k - 1] != p->bounds[i])
			p->bounds[k++] = p->bounds[i];
	p->n_bounds = k;
	p->bounds_gen = p->gen;
	return 0;
}

uint64_t pf_maps_time_key(struct pf_maps *m, uint32_t pid, uint64_t time_ns)
{
	/* samples come in runs of one pid, between the same two changes */
	if (m->tk_ok && m->tk_pid == pid && m->tk_gen == m->gen_next && m->tk_lo <= time_ns && time_ns < m->tk_hi)
		return m->tk_key;
	struct pf_maps_proc *p = proc_find(m, pid);
	if (!p || !p->n)
		return 0;
	if (p->bounds_gen != p->gen || !p->bounds) {
		if (build_bounds(p) < 0)
			return UINT64_MAX;
	}
	/* number of bounds <= time_ns: the live set is constant between two */
	uint32_t lo = 0, hi = p->n_bounds;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (p->bounds[mid] <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t key = (uint64_t)p->gen << 32 | lo;
	m->tk_ok = 1;
	m->tk_pid = pid;
	m->tk_gen = m->gen_next;
	m->tk_lo = lo ? p->bounds[lo - 1] : 0;
	m->tk_hi = lo < p->n_bounds ? p->bounds[lo] : UINT64_MAX;
	m->tk_key = key;
	return key;
}
