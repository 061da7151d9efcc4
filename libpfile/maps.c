/*
 * maps.c - the address -> mapping timeline (maps.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "advanced.h"
#include "internal/alloc.h"
#include "internal/bound.h"

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
		free(m->procs[i].execs);
		free(m->procs[i].kids);
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

PFI_NEW_DELETE(pf_maps, pf_maps_free)

struct pf_dso *pf_maps_dso(const struct pf_maps *m, uint32_t id)
{
	return id < m->n_dsos ? &m->dsos[id] : NULL;
}

uint32_t pf_maps_dso_count(const struct pf_maps *m)
{
	return m->n_dsos;
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

static uint64_t proc_hash_at(const void *m, uint32_t i)
{
	return hash32(((const struct pf_maps *)m)->procs[i].pid);
}

static int proc_rehash(struct pf_maps *m, uint32_t cap)
{
	return pfi_slots_rebuild(&m->proc_hash, &m->proc_hash_cap, cap, m->n_procs, proc_hash_at, m);
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
	if (pfi_grow((void **)&m->procs, &m->cap_procs, (uint64_t)m->n_procs + 1, sizeof(*m->procs), 32) < 0)
		return NULL;
	p = &m->procs[m->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	pfi_slot_put(m->proc_hash, m->proc_hash_cap - 1, hash32(pid), ++m->n_procs);
	return p;
}

/* ---- DSOs --------------------------------------------------------------- */

static uint64_t dso_key_hash(const char *path, size_t len, const uint8_t *bid, size_t bid_size)
{
	return pf_xxh3(path, len) ^ (pf_xxh3(bid, bid_size) * 31);
}

static uint64_t dso_hash_at(const void *m, uint32_t i)
{
	const struct pf_dso *d = &((const struct pf_maps *)m)->dsos[i];
	return dso_key_hash(d->path, d->path_len, d->build_id, d->build_id_size);
}

static int dso_rehash(struct pf_maps *m, uint32_t cap)
{
	return pfi_slots_rebuild(&m->dso_hash, &m->dso_hash_cap, cap, m->n_dsos, dso_hash_at, m);
}

static const struct pf_maps_bid *bid_find(const struct pf_maps *m, const char *path, size_t len)
{
	for (uint32_t i = 0; i < m->n_bids; i++)
		if (m->bids[i].path_len == len && memcmp(m->bids[i].path, path, len) == 0)
			return &m->bids[i];
	return NULL;
}

static int has_prefix(const char *p, size_t len, const char *pre)
{
	size_t n = strlen(pre);
	return len >= n && memcmp(p, pre, n) == 0;
}

#define DELETED_SUFFIX " (deleted)"
#define DELETED_LEN 10

int pf_dso_perf_anon(const char *path, size_t len)
{
	return (len == 6 && memcmp(path, "//anon", 6) == 0) || has_prefix(path, len, "/dev/zero") ||
	       has_prefix(path, len, "/anon_hugepage") || has_prefix(path, len, "/SYSV");
}

/* The kind and display length of a DSO from its path and the BUILDID entry
 * for that path (b, may be NULL). */
static void dso_classify(struct pf_dso *d, const struct pf_maps_bid *b)
{
	const char *p = d->path;
	size_t len = d->path_len;
	int deleted = len > DELETED_LEN && memcmp(p + len - DELETED_LEN, DELETED_SUFFIX, DELETED_LEN) == 0;
	/* an entry for the literal path without the flag: a real file so named */
	if (deleted && b && !(b->flags & PF_BUILDID_DELETED))
		deleted = 0;
	d->name_len = (uint32_t)(deleted ? len - DELETED_LEN : len);
	if (len && p[0] == '[')
		d->kind = PF_DSO_PSEUDO;
	else if (!len || p[0] != '/' || has_prefix(p, len, "//anon") || has_prefix(p, len, "/memfd:") ||
		 has_prefix(p, len, "/SYSV") || has_prefix(p, len, "/anon_hugepage"))
		d->kind = PF_DSO_ANON;
	else if (deleted)
		d->kind = PF_DSO_DELETED;
	else if (b && (b->flags & PF_BUILDID_REPLACED) && !d->build_id_size && !b->size)
		d->kind = PF_DSO_REPLACED; /* with a build-id, the file at the path fails its check */
	else
		d->kind = PF_DSO_FILE;
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
	const struct pf_maps_bid *noted = bid_find(m, path, len);
	if (!bid_size && noted) {
		bid = noted->id;
		bid_size = noted->size;
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
	if (pfi_grow((void **)&m->dsos, &m->cap_dsos, (uint64_t)m->n_dsos + 1, sizeof(*m->dsos), 32) < 0)
		return -ENOMEM;
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
	if (noted && bid == noted->id && (noted->flags & PF_BUILDID_INODE))
		d->proof = PF_DSO_PROOF_INODE;
	dso_classify(d, noted);
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
	if (pfi_grow((void **)&m->bids, &m->cap_bids, (uint64_t)m->n_bids + 1, sizeof(*m->bids), 16) < 0)
		return -ENOMEM;
	struct pf_maps_bid *b = &m->bids[m->n_bids];
	b->path = malloc(e->path_len + 1);
	if (!b->path)
		return -ENOMEM;
	memcpy(b->path, e->path, e->path_len);
	b->path[e->path_len] = 0;
	b->path_len = (uint32_t)e->path_len;
	b->size = e->build_id_size > 64 ? 64 : e->build_id_size;
	b->flags = e->flags;
	memcpy(b->id, e->build_id, b->size);
	m->n_bids++;
	/* DSOs already seen without a build-id take it (their hash slot keys on
	 * the empty build-id; rebuild the hash), and every DSO of this path
	 * learns what the path names. */
	int changed = 0;
	for (uint32_t i = 0; i < m->n_dsos; i++) {
		struct pf_dso *d = &m->dsos[i];
		if (d->path_len != b->path_len || memcmp(d->path, b->path, b->path_len) != 0)
			continue;
		dso_classify(d, b);
		if (!d->build_id_size && b->size) {
			d->build_id_size = b->size;
			memcpy(d->build_id, b->id, b->size);
			if (b->flags & PF_BUILDID_INODE)
				d->proof = PF_DSO_PROOF_INODE;
			changed = 1;
		}
	}
	if (changed && m->dso_hash_cap)
		return dso_rehash(m, m->dso_hash_cap);
	return 0;
}

/* ---- mappings ----------------------------------------------------------- */

#define MAX_FORK_DEPTH 64 /* generations a mapping is handed down at once */

static void recompute_max_end(struct pf_maps_proc *p, uint32_t from)
{
	uint64_t mx = from ? p->max_end[from - 1] : 0;
	for (uint32_t i = from; i < p->n; i++) {
		if (p->maps[i].end > mx)
			mx = p->maps[i].end;
		p->max_end[i] = mx;
	}
}

static int overlaps(const struct pf_map *a, const struct pf_map *b)
{
	return a->start < b->end && b->start < a->end;
}

/* Whether mapping o, already in the timeline, ends where mp starts: a
 * record's mapping ends every overlapping one live then; a snapshot's only
 * other snapshot ones. */
static int ends(const struct pf_map *mp, const struct pf_map *o)
{
	return !(mp->flags & PF_MAP_SNAPSHOT) || (o->flags & PF_MAP_SNAPSHOT);
}

/* The parts of mappings that a new one overlapped in part and that live on
 * after it (proc_insert()), to be added in their turn. */
struct pieces {
	struct pf_map *v;
	uint32_t n, cap;
};

static int piece_add(struct pieces *pc, const struct pf_map *o, uint64_t start, uint64_t end, uint64_t t_start,
		     uint64_t t_end)
{
	if (pfi_grow((void **)&pc->v, &pc->cap, (uint64_t)pc->n + 1, sizeof(*pc->v), 4) < 0)
		return -ENOMEM;
	struct pf_map x = *o;
	x.pgoff = o->pgoff + (start - o->start);
	x.start = start;
	x.end = end;
	x.t_start = t_start;
	x.t_end = t_end;
	pc->v[pc->n++] = x;
	return 0;
}

/* Inserts mp into p with the timeline's rules, whatever was applied before:
 * it ends at the first exec of p after its start and at the first later
 * overlapping mapping that ends it; overlapping ones live at its start that
 * it ends end there, and their parts outside it (before, after) go on as
 * mappings of their own from its start, added to *pc for the caller to add
 * (perf's maps__fixup_overlappings() splits a mapping so: a process forked
 * later inherits those parts). 0 if an identical mapping is there already. */
static int proc_insert(struct pf_maps *m, struct pf_maps_proc *p, struct pf_map mp, struct pieces *pc)
{
	for (uint32_t i = 0; i < p->n_execs; i++) {
		if (p->execs[i] > mp.t_start) {
			if (p->execs[i] < mp.t_end)
				mp.t_end = p->execs[i];
			break;
		}
	}
	for (uint32_t i = 0; i < p->n; i++) {
		const struct pf_map *o = &p->maps[i];
		if (!overlaps(o, &mp))
			continue;
		if (o->start == mp.start && o->end == mp.end && o->pgoff == mp.pgoff && o->dso == mp.dso &&
		    o->flags == mp.flags && o->t_start == mp.t_start)
			return 0; /* the same record twice, or a fork's copy again */
		if (o->t_start > mp.t_start && o->t_start < mp.t_end && ends(o, &mp))
			mp.t_end = o->t_start;
	}
	if (mp.t_end <= mp.t_start)
		return 0;
	for (uint32_t i = 0; i < p->n; i++) {
		struct pf_map *o = &p->maps[i];
		if (overlaps(o, &mp) && o->t_start <= mp.t_start && o->t_end > mp.t_start && ends(&mp, o)) {
			uint64_t t_end = o->t_end;
			o->t_end = mp.t_start;
			if (o->start < mp.start && piece_add(pc, o, o->start, mp.start, mp.t_start, t_end) < 0)
				return -ENOMEM;
			o = &p->maps[i];
			if (o->end > mp.end && piece_add(pc, o, mp.end, o->end, mp.t_start, t_end) < 0)
				return -ENOMEM;
		}
	}
	/* two arrays of one capacity: p->cap follows the second */
	uint32_t maps_cap = p->cap;
	if (pfi_grow((void **)&p->maps, &maps_cap, (uint64_t)p->n + 1, sizeof(*p->maps), 16) < 0 ||
	    pfi_grow((void **)&p->max_end, &p->cap, (uint64_t)p->n + 1, sizeof(*p->max_end), 16) < 0)
		return -ENOMEM;
	/* upper bound on start: keep insertion order among equal starts */
	uint32_t lo = PFC_UPPER_BOUND(p->maps, p->n, start, mp.start);
	memmove(&p->maps[lo + 1], &p->maps[lo], (p->n - lo) * sizeof(mp));
	p->maps[lo] = mp;
	p->n++;
	recompute_max_end(p, lo);
	p->gen = ++m->gen_next;
	return 1;
}

/* Adds mp to pid and hands it down to the children forked while it was
 * live (their FORK may have been applied before it). */
static int add_map(struct pf_maps *m, uint32_t pid, const struct pf_map *mp, int depth)
{
	struct pf_maps_proc *p = proc_get(m, pid);
	if (!p)
		return -ENOMEM;
	struct pieces pc = { 0 };
	int rc = proc_insert(m, p, *mp, &pc);
	/* the parts of the mappings it overlapped in part, as mappings of
	 * their own (handed down to children in their turn) */
	for (uint32_t i = 0; rc > 0 && i < pc.n; i++) {
		int r = add_map(m, pid, &pc.v[i], depth);
		if (r < 0)
			rc = r;
	}
	free(pc.v);
	p = proc_find(m, pid);
	if (rc <= 0 || depth >= MAX_FORK_DEPTH)
		return rc < 0 ? rc : 0;
	/* the inserted copy, as cut by the rules */
	struct pf_map got = *mp;
	for (uint32_t i = 0; i < p->n; i++) {
		if (p->maps[i].start == mp->start && p->maps[i].t_start == mp->t_start &&
		    p->maps[i].dso == mp->dso && p->maps[i].flags == mp->flags) {
			got = p->maps[i];
			break;
		}
	}
	for (uint32_t k = 0; k < p->n_kids; k++) {
		/* p may move when a child is added: read it again each time */
		p = proc_find(m, pid);
		struct pf_maps_kid kid = p->kids[k];
		if (kid.pid == pid || !(got.t_start <= kid.time && kid.time < got.t_end))
			continue;
		struct pf_map c = got;
		c.t_end = PF_TIME_INF;
		if ((rc = add_map(m, kid.pid, &c, depth + 1)) < 0)
			return rc;
	}
	return 0;
}

int pf_maps_mmap(struct pf_maps *m, uint32_t pid, uint64_t start, uint64_t len,
		 uint64_t pgoff, uint32_t dso, uint64_t time_ns)
{
	if (!len || start + len < start)
		return 0;
	struct pf_map mp = { start, start + len, pgoff, time_ns, PF_TIME_INF, dso, 0 };
	return add_map(m, pid, &mp, 0);
}

static int add_time(uint64_t **v, uint32_t *n, uint32_t *cap, uint64_t t)
{
	uint32_t i = *n;
	while (i > 0 && (*v)[i - 1] > t)
		i--;
	if (i > 0 && (*v)[i - 1] == t)
		return 0;
	if (*n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 4;
		uint64_t *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	memmove(&(*v)[i + 1], &(*v)[i], (*n - i) * sizeof(**v));
	(*v)[i] = t;
	(*n)++;
	return 1;
}

int pf_maps_fork(struct pf_maps *m, uint32_t pid, uint32_t ppid, uint64_t time_ns)
{
	if (pid == ppid)
		return 0;
	struct pf_maps_proc *pp = proc_get(m, ppid);
	if (!pp || !proc_get(m, pid))
		return -ENOMEM;
	pp = proc_find(m, ppid); /* proc_get(pid) may have moved it */
	for (uint32_t i = 0; i < pp->n_kids; i++)
		if (pp->kids[i].pid == pid && pp->kids[i].time == time_ns)
			return 0;
	if (pfi_grow((void **)&pp->kids, &pp->cap_kids, (uint64_t)pp->n_kids + 1, sizeof(*pp->kids), 4) < 0)
		return -ENOMEM;
	pp->kids[pp->n_kids++] = (struct pf_maps_kid){ pid, time_ns };
	if (!pp->n)
		return 0;
	/* copy first: adding to the child may move the procs array */
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
	int rc = 0;
	for (uint32_t i = 0; i < n && rc == 0; i++)
		rc = add_map(m, pid, &copy[i], 1);
	free(copy);
	return rc;
}

int pf_maps_exec(struct pf_maps *m, uint32_t pid, uint64_t time_ns)
{
	struct pf_maps_proc *p = proc_get(m, pid);
	if (!p)
		return -ENOMEM;
	int rc = add_time(&p->execs, &p->n_execs, &p->cap_execs, time_ns);
	if (rc <= 0)
		return rc;
	for (uint32_t i = 0; i < p->n; i++)
		if (p->maps[i].t_start < time_ns && p->maps[i].t_end > time_ns)
			p->maps[i].t_end = time_ns;
	p->gen = ++m->gen_next;
	return 0;
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

/* A DEV field "MAJ:MIN" (hex). @return 0, or -1 if it does not parse. */
static int parse_dev(const char *s, const char *eol, uint32_t *maj, uint32_t *min)
{
	uint64_t a, b;
	if (parse_hex(&s, eol, &a) || s >= eol || *s != ':')
		return -1;
	s++;
	if (parse_hex(&s, eol, &b) || a > UINT32_MAX || b > UINT32_MAX)
		return -1;
	*maj = (uint32_t)a;
	*min = (uint32_t)b;
	return 0;
}

/* pf_proc_maps_next() that also gives the DEV field (*has_dev 0 when it
 * does not parse). */
static int proc_maps_next_dev(const char *text, size_t len, size_t *pos, struct pf_proc_map *m, uint32_t *maj,
			      uint32_t *min, int *has_dev);

int pf_proc_maps_next(const char *text, size_t len, size_t *pos, struct pf_proc_map *m)
{
	uint32_t a, b;
	int h;
	return proc_maps_next_dev(text, len, pos, m, &a, &b, &h);
}

static int proc_maps_next_dev(const char *text, size_t len, size_t *pos, struct pf_proc_map *m, uint32_t *maj,
			      uint32_t *min, int *has_dev)
{
	*has_dev = 0;
	const char *end = text + len;
	if (*pos >= len)
		return 0;
	const char *s = text + *pos;
	const char *eol = memchr(s, '\n', (size_t)(end - s));
	if (!eol)
		eol = end;
	*pos = eol < end ? (size_t)(eol - text) + 1 : len;
	memset(m, 0, sizeof(*m));
	m->path = "";
	if (parse_hex(&s, eol, &m->start) || s >= eol || *s != '-')
		return -1;
	s++;
	if (parse_hex(&s, eol, &m->end) || s >= eol || *s != ' ')
		return -1;
	s++;
	if (eol - s < 4)
		return -1;
	memcpy(m->perms, s, 4);
	s = skip_field(s, eol); /* perms */
	if (parse_hex(&s, eol, &m->pgoff))
		return -1;
	s = skip_field(s, eol); /* offset */
	*has_dev = parse_dev(s, eol, maj, min) == 0;
	s = skip_field(s, eol); /* dev */
	while (s < eol && *s >= '0' && *s <= '9')
		m->inode = m->inode * 10 + (uint64_t)(*s++ - '0');
	s = skip_field(s, eol); /* inode */
	m->path = s;
	m->path_len = (size_t)(eol - s);
	return 1;
}

int pf_proc_map_remapped(struct pf_proc_map *pm, const struct pf_proc_map *prev, const char *text, size_t len,
			 size_t pos)
{
	struct pf_proc_map next;
	int rc;
	if (pm->path_len || pm->inode || !prev || !prev->path_len || prev->path[0] != '/' || !prev->inode ||
	    prev->end != pm->start)
		return 0;
	while ((rc = pf_proc_maps_next(text, len, &pos, &next)) < 0)
		;
	if (rc == 0 || next.start != pm->end || next.inode != prev->inode || next.path_len != prev->path_len ||
	    memcmp(next.path, prev->path, prev->path_len) != 0 || next.pgoff < prev->pgoff ||
	    next.pgoff - prev->pgoff != next.start - prev->start)
		return 0;
	pm->pgoff = prev->pgoff + (pm->start - prev->start);
	pm->path = prev->path;
	pm->path_len = prev->path_len;
	pm->inode = prev->inode;
	return 1;
}

int pf_proc_map_anon_label(struct pf_proc_map *pm, const struct pf_proc_map *prev, const char *text, size_t len,
			   size_t pos, char *buf, size_t size)
{
	if (pm->path_len || pm->inode || pm->perms[2] != 'x')
		return 0;
	const struct pf_proc_map *f = NULL;
	struct pf_proc_map next;
	int rc;
	if (prev && prev->path_len && prev->path[0] == '/' && prev->inode && prev->end == pm->start) {
		f = prev;
	} else {
		while ((rc = pf_proc_maps_next(text, len, &pos, &next)) < 0)
			;
		if (rc > 0 && next.path_len && next.path[0] == '/' && next.inode && next.start == pm->end)
			f = &next;
	}
	if (!f)
		return 0;
	const char *bn = f->path + f->path_len;
	while (bn > f->path && bn[-1] != '/')
		bn--;
	size_t bl = (size_t)(f->path + f->path_len - bn);
	if (!bl || bl + 8 > size)
		return 0;
	memcpy(buf, "[anon:", 6);
	memcpy(buf + 6, bn, bl);
	buf[6 + bl] = ']';
	buf[7 + bl] = 0;
	pm->path = buf;
	pm->path_len = bl + 7;
	pm->pgoff = 0;
	return 1;
}

/* Notes the file a mapping of DSO `id` names (device, inode): known while
 * every mapping names the same one. */
static void dso_note_ino(struct pf_maps *m, uint32_t id, uint32_t maj, uint32_t min, uint64_t ino)
{
	struct pf_dso *d = &m->dsos[id];
	if (!ino || d->ino_state == PF_DSO_INO_CONFLICT)
		return;
	if (d->ino_state == PF_DSO_INO_NONE) {
		d->ino_state = PF_DSO_INO_KNOWN;
		d->dev_maj = maj;
		d->dev_min = min;
		d->ino = ino;
	} else if (d->dev_maj != maj || d->dev_min != min || d->ino != ino) {
		d->ino_state = PF_DSO_INO_CONFLICT;
	}
}

int pf_maps_add_proc_maps(struct pf_maps *m, uint32_t pid, uint64_t time_ns,
			  const char *text, size_t len)
{
	uint32_t maj = 0, min = 0;
	int has_dev = 0;
	struct pf_proc_map pm, prev;
	memset(&prev, 0, sizeof(prev));
	size_t pos = 0;
	int rc, added = 0, have_prev = 0;
	while ((rc = proc_maps_next_dev(text, len, &pos, &pm, &maj, &min, &has_dev)) != 0) {
		if (rc < 0)
			continue;
		struct pf_proc_map line = pm;
		int own = 1; /* the line's own file (not remapped text, not a label) */
		char label[320]; /* "[anon:" NAME "]", NAME at most 255 bytes */
		if (pm.perms[2] == 'x' && !pf_proc_map_remapped(&pm, have_prev ? &prev : NULL, text, len, pos))
			pf_proc_map_anon_label(&pm, have_prev ? &prev : NULL, text, len, pos, label, sizeof(label));
		own = pm.path == line.path;
		prev = line;
		have_prev = 1;
		/* executable, file-backed or pseudo ("[vdso]", "[anon:NAME]"), not empty */
		if (pm.perms[2] != 'x' || !pm.path_len || pm.end <= pm.start)
			continue;
		int64_t dso = pf_maps_dso_intern(m, pm.path, pm.path_len, NULL, 0);
		if (dso < 0)
			return (int)dso;
		if (own && has_dev && pm.path[0] == '/')
			dso_note_ino(m, (uint32_t)dso, maj, min, pm.inode);
		struct pf_map mp = { pm.start, pm.end, pm.pgoff, time_ns, PF_TIME_INF, (uint32_t)dso, PF_MAP_SNAPSHOT };
		if ((rc = add_map(m, pid, &mp, 0)) < 0)
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
		if (rec->type == PERF_RECORD_MMAP2 && !mm.has_build_id && mm.filename_len && mm.filename[0] == '/')
			dso_note_ino(m, (uint32_t)dso, mm.maj, mm.min, mm.ino);
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
		return pf_maps_exec(m, c.pid, pf_record_time(ev, rec));
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
	uint32_t lo = PFC_UPPER_BOUND(p->maps, p->n, start, addr);
	const struct pf_map *best = NULL;
	uint64_t best_dist = UINT64_MAX;
	for (uint32_t i = lo; i-- > 0;) {
		if (p->max_end[i] <= addr)
			break;
		const struct pf_map *mp = &p->maps[i];
		if (addr >= mp->end)
			continue;
		if (mp->t_start <= time_ns && time_ns < mp->t_end) {
			/* live: a record's before a snapshot's, then the latest */
			int snap = (mp->flags & PF_MAP_SNAPSHOT) != 0;
			int best_snap = best && (best->flags & PF_MAP_SNAPSHOT) != 0;
			if (!best || best_dist != 0 || snap < best_snap ||
			    (snap == best_snap && mp->t_start > best->t_start)) {
				best = mp;
				best_dist = 0;
			}
			continue;
		}
		uint64_t dist = mp->t_start > time_ns ? mp->t_start - time_ns : time_ns - mp->t_end + 1;
		if (dist < best_dist || (dist == best_dist && best && (best->flags & PF_MAP_SNAPSHOT) &&
					 !(mp->flags & PF_MAP_SNAPSHOT))) {
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
	uint32_t lo = pfc_upper_bound(p->bounds, p->n_bounds, sizeof(*p->bounds), 0, time_ns);
	uint64_t key = (uint64_t)p->gen << 32 | lo;
	m->tk_ok = 1;
	m->tk_pid = pid;
	m->tk_gen = m->gen_next;
	m->tk_lo = lo ? p->bounds[lo - 1] : 0;
	m->tk_hi = lo < p->n_bounds ? p->bounds[lo] : UINT64_MAX;
	m->tk_key = key;
	return key;
}
