/*
 * fold.c - the folding engine (fold.h): samples to folded lines, the display
 * names of frames, the sorted lines and the top-N functions. Reading the
 * input is fold_read.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal/alloc.h"
#include "internal/bytes.h"
#include "internal/fold.h"
#include "internal/oatab.h"


static void add_line(struct pf_buf *to, const char *fmt, va_list ap)
{
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	/* the same line once */
	if (to->len && memmem(to->data, to->len, buf, (size_t)n))
		return;
	if (to->len)
		to->len--; /* drop the NUL */
	pf_buf_put(to, buf, (size_t)n);
	pf_buf_put(to, "\n", 2); /* newline and NUL */
}

void pfi_fold_warnf(pf_fold *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_line(&f->warn, fmt, ap);
	va_end(ap);
}

/* Damage: a line for pf_fold_damage(). */
void pfi_fold_damagef(pf_fold *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_line(&f->damage, fmt, ap);
	va_end(ap);
}

static uint64_t ent_hash(const void *entry)
{
	const struct fold_ent *e = entry;
	return mix64(((uint64_t)e->node << 32 | e->comm) ^
		     mix64((uint64_t)e->pid << 32 | e->tid) ^ mix64((uint64_t)e->cpu << 32 | e->event));
}

static int ent_grow(pf_fold *f)
{
	return PFC_OA_GROW(f->ent, f->cap_ent, 4096, used, ent_hash);
}

static int event_keep(pf_fold *f, uint16_t idx)
{
	if (f->ev_known[idx >> 3] & (1u << (idx & 7)))
		return (f->ev_keep[idx >> 3] >> (idx & 7)) & 1;
	const struct pf_events *evs = f->ev_src;
	for (uint32_t i = 0; evs && i < evs->n; i++)
		if (evs->ev[i].index == idx && pf_event_reads_group(&evs->ev[i]))
			f->ev_grp[idx >> 3] |= (uint8_t)(1u << (idx & 7));
	int keep;
	if (f->o.flags & PF_FOLD_ALL_EVENTS) {
		keep = 1;
	} else if (!evs || !evs->n) {
		keep = idx == 0;
	} else {
		/* the name to keep is looked up at each call, never kept: the
		 * event table is reallocated as EVENT sections arrive (a
		 * pointer to the first event's name dangled after the 9th) */
		const char *want = f->o.event ? f->o.event : evs->ev[0].name;
		keep = 0;
		for (uint32_t i = 0; i < evs->n; i++)
			if (evs->ev[i].index == idx) {
				keep = strcmp(evs->ev[i].name, want) == 0;
				if (!keep && !f->o.event)
					pfi_fold_warnf(f, "notice: samples of event '%s' not folded (use --event)",
					      evs->ev[i].name);
				break;
			}
	}
	f->ev_known[idx >> 3] |= (uint8_t)(1u << (idx & 7));
	if (keep)
		f->ev_keep[idx >> 3] |= (uint8_t)(1u << (idx & 7));
	return keep;
}

static int comm_keep(pf_fold *f, uint32_t comm)
{
	if (!f->o.comm)
		return 1;
	if (comm == NONE)
		return 0;
	if (comm >= f->comm_keep_cap) {
		uint32_t cap = f->comm_keep_cap ? f->comm_keep_cap : 256;
		while (cap <= comm)
			cap *= 2;
		uint8_t *n = realloc(f->comm_keep, cap);
		if (!n)
			return 0;
		memset(n + f->comm_keep_cap, 0, cap - f->comm_keep_cap);
		f->comm_keep = n;
		f->comm_keep_cap = cap;
	}
	if (!f->comm_keep[comm]) {
		const char *s = pf_prof_str_get(&f->prof, comm, NULL);
		f->comm_keep[comm] = s && strcmp(s, f->o.comm) == 0 ? 1 : 2;
	}
	return f->comm_keep[comm] == 1;
}

static uint64_t w_add(pf_fold *f, uint64_t a, uint64_t b)
{
	if (a > W_MAX || b > W_MAX - a) {
		f->saturated = 1;
		return W_MAX;
	}
	return a + b;
}

static int64_t stack_dnode(pf_fold *f, uint32_t stack);
static int leaf_keep(pf_fold *f, uint32_t node);

static int in_list(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* Whether a sample at `time` is of the run asked for (opts run, 0 = all). */
static int run_keep(const pf_fold *f, uint64_t time)
{
	if (!f->o.run)
		return 1;
	uint32_t k = f->n_rec_runs ? pf_run_of(f->run_starts, f->n_rec_runs, time) : 1;
	return k == f->o.run;
}

int pfi_fold_sample(void *ctx, const struct pf_prof_sample *s)
{
	pf_fold *f = ctx;
	if (!(s->flags & PF_SAMPLE_LOST) && !f->replaying)
		f->read_all++;
	if (!run_keep(f, s->time))
		return 0;
	if (s->flags & PF_SAMPLE_LOST) {
		if (s->period > W_MAX) {
			/* no ring buffer loses that many: a damaged entry */
			pfi_fold_damagef(f, "%s: a LOST entry claims %llu lost samples (more than 2^63-1): ignored", f->path,
				(unsigned long long)s->period);
			return 0;
		}
		f->lost = w_add(f, f->lost, s->period);
		return 0;
	}
	if (!f->replaying) { /* a deferred sample was met once already */
		f->seen++;
		/* --time counts from the earliest sample: a recording holds
		 * each CPU's (perf.data: each buffer's) samples in runs, not
		 * in time order */
		if (!f->have_t0 || s->time < f->t0) {
			f->have_t0 = 1;
			f->t0 = s->time;
		}
	}
	if (!event_keep(f, s->event))
		return 0;
	/* a table it needs is missing, damaged, or comes later (out of
	 * order): the sample is tried again at the end of the file */
	int refs_ok = !((s->stack != NONE && s->stack >= f->prof.n_stacks) || (s->comm != NONE && s->comm >= f->prof.n_str));
	if (f->o.use_time) {
		/* the origin is known at the end: the samples wait till then */
		if (!f->replaying) {
			struct pf_buf *b = refs_ok ? &f->timed : &f->deferred;
			if (!b->len && pf_prof_samples_begin(b))
				return -ENOMEM;
			return pf_prof_samples_add(b, s) ? -ENOMEM : 0;
		}
		uint64_t rel = s->time - f->t0;
		if (rel < f->o.time_start_ns || rel >= f->o.time_end_ns)
			return 0;
	}
	if (!refs_ok) {
		if (f->replaying) {
			f->bad_refs++;
			return 0;
		}
		if (!f->deferred.len && pf_prof_samples_begin(&f->deferred))
			return -ENOMEM;
		return pf_prof_samples_add(&f->deferred, s) ? -ENOMEM : 0;
	}
	if (f->replaying == 1)
		f->late_refs++;
	/* of the event and time range, before the process filters */
	f->samples_all++;
	if (f->o.n_pids) {
		size_t i;
		for (i = 0; i < f->o.n_pids; i++)
			if (f->o.pids[i] == s->pid)
				break;
		if (i == f->o.n_pids)
			return 0;
	}
	if (f->o.n_tids && !in_list(f->o.tids, f->o.n_tids, s->tid))
		return 0;
	if (f->o.n_cpus && !in_list(f->o.cpus, f->o.n_cpus, s->cpu))
		return 0;
	if (!comm_keep(f, s->comm))
		return 0;
	uint64_t w = f->o.weight == PF_FOLD_PERIOD ? s->period : 1;
	uint32_t comm = (f->o.flags & PF_FOLD_NO_COMM) ? NONE : s->comm;
	uint32_t pid = (f->o.flags & (PF_FOLD_PID | PF_FOLD_TID)) ? s->pid : 0;
	uint32_t tid = (f->o.flags & PF_FOLD_TID) ? s->tid : 0;
	uint32_t cpu = (f->o.flags & PF_FOLD_CPU) ? s->cpu : 0;
	uint32_t event = (f->o.flags & PF_FOLD_ALL_EVENTS) ? s->event : 0;
	/* a sample the leaf filters drop is never remembered here */
	struct fold_memo *mm = &f->memo[s->stack & 255];
	if (mm->k < f->cap_ent && mm->stack == s->stack && mm->comm == comm && mm->pid == pid && mm->tid == tid &&
	    mm->cpu == cpu && mm->event == event) {
		f->period_sum += (double)s->period;
		f->period_n++;
		f->group_kept += (f->ev_grp[s->event >> 3] >> (s->event & 7)) & 1;
		f->ent[mm->k].w = w_add(f, f->ent[mm->k].w, w);
		f->total = w_add(f, f->total, w);
		if ((f->o.flags & PF_FOLD_BY_LINE) && pfi_fold_line_add(f, s->stack, w) < 0)
			return -ENOMEM;
		f->samples++;
		if (f->any_trunc && f->ent[mm->k].node != NONE && f->dn[f->ent[mm->k].node].trunc)
			f->truncated++;
		return 0;
	}
	int64_t node = stack_dnode(f, s->stack);
	if (node < 0)
		return (int)node;
	if ((f->o.dso || f->have_sym_re) && !leaf_keep(f, (uint32_t)node))
		return 0;
	f->period_sum += (double)s->period;
	f->period_n++;
	f->group_kept += (f->ev_grp[s->event >> 3] >> (s->event & 7)) & 1;
	struct fold_ent key = { (uint32_t)node, comm, pid, tid, cpu, event, 0, 1 };
	if ((f->n_ent + 1) * 2 > f->cap_ent) {
		if (ent_grow(f) < 0)
			return -ENOMEM;
		memset(f->memo, 0xff, sizeof(f->memo)); /* slots moved */
	}
	uint32_t mask = f->cap_ent - 1, k = (uint32_t)ent_hash(&key) & mask;
	for (;;) {
		struct fold_ent *e = &f->ent[k];
		if (!e->used) {
			*e = key;
			f->n_ent++;
			break;
		}
		if (e->node == key.node && e->comm == key.comm && e->pid == key.pid && e->tid == key.tid &&
		    e->cpu == key.cpu && e->event == key.event)
			break;
		k = (k + 1) & mask;
	}
	*mm = (struct fold_memo){ s->stack, comm, pid, tid, cpu, event, k };
	f->ent[k].w = w_add(f, f->ent[k].w, w);
	f->total = w_add(f, f->total, w);
	if ((f->o.flags & PF_FOLD_BY_LINE) && pfi_fold_line_add(f, s->stack, w) < 0)
		return -ENOMEM;
	f->samples++;
	if (f->any_trunc && node != NONE && f->dn[node].trunc)
		f->truncated++;
	return 0;
}

/* ---- display ---- */

/* spaces: ' ' becomes '_' (the root frame); brackets: '[' and ']' are
 * escaped too (x5b, x5d: the file of a " [FILE:LINE]" source line, which
 * readers find between brackets) */
static int put_escaped_ex(struct pf_buf *b, const char *s, size_t len, int spaces, int brackets)
{
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		/* ';' separates frames; a backslash starts an escape, so it
		 * is escaped too (x5c): an escaped x3b is always a ';' */
		if (c == ';' || c == '\\' || c < 0x20 || c == 0x7f || (spaces && c == ' ') ||
		    (brackets && (c == '[' || c == ']'))) {
			if (pf_buf_put(b, s + start, i - start))
				return -ENOMEM;
			if (spaces && c == ' ') {
				if (pf_buf_put(b, "_", 1))
					return -ENOMEM;
			} else {
				char esc[5];
				snprintf(esc, sizeof(esc), "\\x%02x", c);
				if (pf_buf_put(b, esc, 4))
					return -ENOMEM;
			}
			start = i + 1;
		}
	}
	return pf_buf_put(b, s + start, len - start) ? -ENOMEM : 0;
}

static int put_escaped(struct pf_buf *b, const char *s, size_t len, int spaces)
{
	return put_escaped_ex(b, s, len, spaces, 0);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* Whether a module is a perf map ("/tmp/perf-PID.map"): JIT code, as
 * FlameGraph's stackcollapse-perf.pl --jit tells it. */
static int is_perf_map(const char *dso)
{
	const char *b = base_name(dso);
	if (strncmp(b, "perf-", 5) != 0)
		return 0;
	b += 5;
	if (*b < '0' || *b > '9')
		return 0;
	while (*b >= '0' && *b <= '9')
		b++;
	return strcmp(b, ".map") == 0;
}

/* Makes room for index i in the memo *a of *cap entries (frame_disp,
 * stack_dn): doubled from 1024, the new entries NONE. @return 0 or <0. */
static int memo_grow(uint32_t **a, uint32_t *cap, uint32_t i)
{
	uint32_t old = *cap;
	int rc = pfi_grow((void **)a, cap, (uint64_t)i + 1, sizeof(**a), 1024);
	for (uint32_t j = old; rc == 0 && j < *cap; j++)
		(*a)[j] = NONE;
	return rc;
}

static int64_t frame_display(pf_fold *f, uint32_t frame)
{
	if (memo_grow(&f->frame_disp, &f->frame_disp_cap, frame) < 0)
		return -ENOMEM;
	if (f->frame_disp[frame] != NONE)
		return f->frame_disp[frame];
	const struct pf_prof_frame *fr = &f->prof.frames[frame];
	struct pf_buf b = { 0 };
	const char *name = fr->name != NONE ? pf_prof_str_get(&f->prof, fr->name, NULL) : NULL;
	const char *dso = fr->dso != NONE ? pf_prof_str_get(&f->prof, fr->dso, NULL) : NULL;
	char tmp[64];
	int rc = 0;
	if (name) {
		rc = put_escaped(&b, name, strlen(name), 0);
	} else if (fr->flags & PF_FRAME_KERNEL) {
		if (f->o.flags & PF_FOLD_ADDRS) {
			snprintf(tmp, sizeof(tmp), "[kernel+0x%llx]", (unsigned long long)fr->file_off);
			rc = pf_buf_put(&b, tmp, strlen(tmp));
		} else {
			rc = pf_buf_put(&b, "[kernel]", 8);
		}
	} else if (dso) {
		const char *bn = base_name(dso);
		size_t bl = strlen(bn);
		if (bl >= 2 && bn[0] == '[' && bn[bl - 1] == ']') { /* "[vdso]" */
			bn++;
			bl -= 2;
		}
		rc = pf_buf_put(&b, "[", 1);
		rc |= put_escaped(&b, bn, bl, 0);
		if (f->o.flags & PF_FOLD_ADDRS) {
			snprintf(tmp, sizeof(tmp), "+0x%llx]", (unsigned long long)fr->file_off);
			rc |= pf_buf_put(&b, tmp, strlen(tmp));
		} else {
			rc |= pf_buf_put(&b, "]", 1);
		}
	} else {
		rc = pf_buf_put(&b, "[unknown]", 9);
	}
	if ((f->o.flags & PF_FOLD_LINES) && fr->line) {
		snprintf(tmp, sizeof(tmp), ":%u", fr->line);
		rc |= pf_buf_put(&b, tmp, strlen(tmp));
	}
	if ((f->o.flags & PF_FOLD_SRCLINE) && fr->line && fr->src_file != NONE) {
		const char *file = pf_prof_str_get(&f->prof, fr->src_file, NULL);
		if (file && *file) {
			rc |= pf_buf_put(&b, " [", 2);
			rc |= put_escaped_ex(&b, file, strlen(file), 0, 1);
			snprintf(tmp, sizeof(tmp), ":%u]", fr->line);
			rc |= pf_buf_put(&b, tmp, strlen(tmp));
		}
	}
	if (name && (f->o.flags & PF_FOLD_DSO) && dso) {
		const char *bn = base_name(dso);
		rc |= pf_buf_put(&b, " [", 2);
		rc |= put_escaped(&b, bn, strlen(bn), 0);
		rc |= pf_buf_put(&b, "]", 1);
	}
	if ((fr->flags & PF_FRAME_KERNEL) && (f->o.flags & PF_FOLD_KERNEL))
		rc |= pf_buf_put(&b, "_[k]", 4);
	else if ((fr->flags & PF_FRAME_INLINE) && (f->o.flags & PF_FOLD_INLINE_MARK))
		rc |= pf_buf_put(&b, "_[i]", 4);
	else if (name && dso && (f->o.flags & PF_FOLD_JIT) && is_perf_map(dso))
		rc |= pf_buf_put(&b, "_[j]", 4);
	if (rc) {
		pf_buf_free(&b);
		return -ENOMEM;
	}
	int64_t id = pf_prof_str(&f->disp, b.data ? (const char *)b.data : "", b.len);
	pf_buf_free(&b);
	if (id < 0)
		return id;
	f->frame_disp[frame] = (uint32_t)id;
	return id;
}

/* The display string id of a frame's DSO name (file name without the
 * directory; "[kernel]" for kernel frames), or NONE when it has none. */
static int64_t frame_dso(pf_fold *f, const struct pf_prof_frame *fr)
{
	if (fr->flags & PF_FRAME_KERNEL)
		return pf_prof_str(&f->disp, "[kernel]", 8);
	if (fr->dso == NONE)
		return NONE;
	const char *bn = base_name(pf_prof_str_get(&f->prof, fr->dso, NULL));
	return pf_prof_str(&f->disp, bn, strlen(bn));
}

/* Whether samples with this leaf display node pass the dso and sym
 * filters; memoised per node. */
static int leaf_keep(pf_fold *f, uint32_t node)
{
	if (node == NONE)
		return 0;
	struct dnode *d = &f->dn[node];
	if (!d->leaf) {
		int keep = 1;
		if (f->o.dso) {
			const char *ds = d->dso != NONE ? pf_prof_str_get(&f->disp, d->dso, NULL) : "";
			keep = strcmp(ds, f->o.dso) == 0;
		}
		if (keep && f->have_sym_re)
			keep = regexec(&f->sym_re, pf_prof_str_get(&f->disp, d->disp, NULL), 0, NULL, 0) == 0;
		d->leaf = keep ? 1 : 2;
	}
	return d->leaf == 1;
}

/* A display node: one frame of a folded line (its display string) under the
 * display node of its caller. Stacks whose frames read the same fold into
 * one node, so samples aggregate by what the line will say as they arrive
 * and the end of the input only formats the distinct lines. */
static uint64_t dn_key_hash(uint32_t disp, uint32_t parent, uint32_t kanon, uint32_t dso)
{
	return mix64(((uint64_t)disp << 32 | parent) ^ ((uint64_t)kanon << 63) ^ mix64(dso));
}

static uint64_t dn_hash_at(const void *f, uint32_t i)
{
	const struct dnode *d = &((const pf_fold *)f)->dn[i];
	return dn_key_hash(d->disp, d->parent, d->kanon, d->dso);
}

/* Nodes are keyed by their DSO too (for pf_fold_node() and the dso
 * filter): two frames of one name in two DSOs make two nodes, whose lines
 * read the same and are merged by pfi_fold_build_lines(). */
static int64_t dn_intern(pf_fold *f, uint32_t disp, uint32_t parent, uint32_t kanon, uint32_t dso)
{
	if ((f->n_dn + 1) * 2 > f->dn_hash_cap &&
	    pfi_slots_rebuild(&f->dn_hash, &f->dn_hash_cap, f->dn_hash_cap ? f->dn_hash_cap * 2 : 1024, f->n_dn, dn_hash_at,
			      f) < 0)
		return -ENOMEM;
	uint32_t mask = f->dn_hash_cap - 1, k = (uint32_t)dn_key_hash(disp, parent, kanon, dso) & mask;
	for (; f->dn_hash[k]; k = (k + 1) & mask) {
		const struct dnode *d = &f->dn[f->dn_hash[k] - 1];
		if (d->disp == disp && d->parent == parent && d->kanon == kanon && d->dso == dso)
			return f->dn_hash[k] - 1;
	}
	if (pfi_grow((void **)&f->dn, &f->cap_dn, (uint64_t)f->n_dn + 1, sizeof(*f->dn), 1024) < 0)
		return -ENOMEM;
	f->dn[f->n_dn] = (struct dnode){ disp, parent, kanon, parent != NONE ? f->dn[parent].trunc : 0, dso, 0 };
	f->dn_hash[k] = f->n_dn + 1;
	return f->n_dn++;
}

/* The display node of a (defined) stack node, or NONE for no stack: its
 * caller's, plus its frame's display string, except that a nameless kernel
 * frame repeating its caller's collapses into it. Memoised per stack id. */
static int64_t stack_dnode(pf_fold *f, uint32_t stack)
{
	if (stack == NONE)
		return NONE;
	if (memo_grow(&f->stack_dn, &f->stack_dn_cap, stack) < 0)
		return -ENOMEM;
	if (f->stack_dn[stack] != NONE)
		return f->stack_dn[stack];
	/* the stack nodes up to the first with a display node, leaf first */
	size_t n = 0;
	uint32_t top = NONE;
	for (uint32_t s = stack; s != NONE; s = f->prof.stacks[s].parent) {
		if (s < f->stack_dn_cap && f->stack_dn[s] != NONE) {
			top = f->stack_dn[s];
			break;
		}
		if (n == f->dn_path_cap) {
			size_t nc = n ? n * 2 : 256;
			uint32_t *p = realloc(f->dn_path, nc * sizeof(*p));
			if (!p)
				return -ENOMEM;
			f->dn_path = p;
			f->dn_path_cap = nc;
		}
		f->dn_path[n++] = s;
	}
	while (n--) {
		uint32_t s = f->dn_path[n], fr = f->prof.stacks[s].frame;
		if ((f->o.flags & PF_FOLD_NO_INLINE) && (f->prof.frames[fr].flags & PF_FRAME_INLINE)) {
			f->stack_dn[s] = top; /* the outer function's node */
			continue;
		}
		int64_t d = frame_display(f, fr);
		if (d < 0)
			return d;
		const struct pf_prof_frame *pf = &f->prof.frames[fr];
		uint32_t kanon = (pf->flags & PF_FRAME_KERNEL) && pf->name == NONE && !(f->o.flags & PF_FOLD_ADDRS);
		if (!(kanon && top != NONE && f->dn[top].kanon && f->dn[top].disp == (uint32_t)d)) {
			int64_t dso = frame_dso(f, pf);
			if (dso < 0)
				return dso;
			int64_t id = dn_intern(f, (uint32_t)d, top, kanon, (uint32_t)dso);
			if (id < 0)
				return id;
			if (top == NONE && (pf->flags & PF_FRAME_TRUNCATED)) {
				f->dn[id].trunc = 1;
				f->any_trunc = 1;
			}
			top = (uint32_t)id;
		}
		f->stack_dn[s] = top;
	}
	return top;
}

/* Fills ids[] with the display ids of a display node's line, root first.
 * @return the count, or <0. */
static int64_t dnode_display(pf_fold *f, uint32_t node, uint32_t **ids, size_t *cap)
{
	size_t n = 0;
	for (uint32_t d = node; d != NONE; d = f->dn[d].parent) {
		if (n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			uint32_t *ni = realloc(*ids, nc * sizeof(*ni));
			if (!ni)
				return -ENOMEM;
			*ids = ni;
			*cap = nc;
		}
		(*ids)[n++] = f->dn[d].disp;
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = (*ids)[i];
		(*ids)[i] = (*ids)[n - 1 - i];
		(*ids)[n - 1 - i] = t;
	}
	return (int64_t)n;
}

/* qsort_r(3) comparators take their context as an argument: the library
 * keeps no state between calls (folds may run in several threads). */
static int line_cmp(const void *a, const void *b, void *base)
{
	const struct line *x = a, *y = b;
	return strcmp((const char *)base + x->off, (const char *)base + y->off);
}

int pfi_fold_build_lines(pf_fold *f)
{
	uint32_t *ids = NULL;
	size_t cap = 0;
	int rc = 0;
	size_t n = 0;
	struct line *lines = malloc((f->n_ent + 1) * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->cap_ent && rc == 0; i++) {
		struct fold_ent *e = &f->ent[i];
		if (!e->used)
			continue;
		lines[n].off = f->text.len;
		lines[n].w = e->w;
		int need_sep = 0;
		if (!(f->o.flags & PF_FOLD_NO_COMM)) {
			size_t clen = 0;
			const char *c = e->comm != NONE ? pf_prof_str_get(&f->prof, e->comm, &clen) : NULL;
			if (!c) {
				c = "[unknown]";
				clen = 9;
			}
			rc |= put_escaped(&f->text, c, clen, 1);
			char num[40];
			if (f->o.flags & PF_FOLD_TID)
				snprintf(num, sizeof(num), "-%u/%u", e->pid, e->tid);
			else if (f->o.flags & PF_FOLD_PID)
				snprintf(num, sizeof(num), "-%u", e->pid);
			else
				num[0] = 0;
			rc |= pf_buf_put(&f->text, num, strlen(num));
			need_sep = 1;
		}
		int64_t m = dnode_display(f, e->node, &ids, &cap);
		if (m < 0) {
			rc = (int)m;
			break;
		}
		for (int64_t j = 0; j < m; j++) {
			size_t dl;
			const char *ds = pf_prof_str_get(&f->disp, ids[j], &dl);
			if (need_sep)
				rc |= pf_buf_put(&f->text, ";", 1);
			rc |= pf_buf_put(&f->text, ds, dl);
			need_sep = 1;
		}
		rc |= pf_buf_put(&f->text, "", 1);
		n++;
	}
	/* lost samples weigh their count, or with --weight=period that count
	 * times the mean period of the kept samples; without any kept sample
	 * that period is unknown and there is no [lost] line (see fold_read);
	 * nor when the kept samples read a group: their periods, the increase
	 * since the previous sample, hold the lost samples' already */
	if (rc == 0 && f->lost && (f->o.weight != PF_FOLD_PERIOD || (f->period_n && !f->group_kept))) {
		uint64_t w = f->lost;
		if (f->o.weight == PF_FOLD_PERIOD) {
			double e = (double)f->lost * (f->period_sum / (double)f->period_n);
			if (e >= (double)W_MAX) {
				f->saturated = 1;
				w = W_MAX;
			} else {
				w = (uint64_t)e;
			}
		}
		lines[n].off = f->text.len;
		lines[n].w = w;
		rc |= pf_buf_put(&f->text, "[lost]", 7);
		f->total = w_add(f, f->total, w);
		n++;
	}
	free(ids);
	if (rc) {
		free(lines);
		return rc < 0 ? rc : -ENOMEM;
	}
	const char *sort_base = (const char *)f->text.data;
	qsort_r(lines, n, sizeof(*lines), line_cmp, f->text.data);
	/* merge equal texts (different frames with the same names) */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && strcmp(sort_base + lines[m - 1].off, sort_base + lines[i].off) == 0)
			lines[m - 1].w = w_add(f, lines[m - 1].w, lines[i].w);
		else
			lines[m++] = lines[i];
	}
	f->lines = lines;
	f->n_lines = m;
	if (f->saturated)
		pfi_fold_warnf(f, "warning: weights reached 2^63-1 and were capped there");
	return 0;
}

/* Folds every entry of a SAMPLES payload: pf_prof_samples_next()'s
 * checks, once per payload. @return 0, -EBADMSG (bad header), -ENOMEM. */
int pfi_fold_samples(pf_fold *f, const uint8_t *data, size_t size)
{
	if (size < 8)
		return -EBADMSG;
	uint32_t count = pfi_le32(data), esize = pfi_le32(data + 4);
	if (esize < PF_PROF_SAMPLE_SIZE || (uint64_t)count * esize > size - 8)
		return -EBADMSG;
	const uint8_t *e = data + 8;
	struct fold_run *run = NULL;
	if (count) {
		if (pfi_grow((void **)&f->runs, &f->cap_runs, (uint64_t)f->n_runs + 1, sizeof(*f->runs), 64) < 0)
			return -ENOMEM;
		run = &f->runs[f->n_runs++];
		run->n = count;
	}
	for (uint32_t i = 0; i < count; i++, e += esize) {
		struct pf_prof_sample ps = {
			.time = pfi_le64(e), .period = pfi_le64(e + 8), .pid = pfi_le32(e + 16), .tid = pfi_le32(e + 20),
			.cpu = pfi_le32(e + 24), .stack = pfi_le32(e + 28), .comm = pfi_le32(e + 32), .event = pfi_le16(e + 36),
			.flags = pfi_le16(e + 38),
		};
		if (i == 0)
			run->first = ps;
		if (i == count - 1)
			run->last = ps;
		if (ps.flags & PF_SAMPLE_LOST)
			f->res_lost += ps.period;
		else
			f->res_samples++;
		int rc = pfi_fold_sample(f, &ps);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int pf_fold_open(pf_fold **out, const char *path, const struct pf_fold_opts *o)
{
	*out = NULL;
	/* callers built with 0.1's options (up to time_end_ns) keep working */
	size_t min = offsetof(struct pf_fold_opts, time_end_ns) + sizeof(o->time_end_ns);
	if (!o || o->sz < min)
		return -EINVAL;
	pf_fold *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	memcpy(&f->o, o, o->sz < sizeof(*o) ? o->sz : sizeof(*o));
	if (f->o.sym) {
		int rc = regcomp(&f->sym_re, f->o.sym, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[128];
			regerror(rc, &f->sym_re, why, sizeof(why));
			snprintf(f->errmsg, sizeof(f->errmsg), "bad regular expression '%s': %s", f->o.sym, why);
			*out = f;
			return -EINVAL;
		}
		f->have_sym_re = 1;
	}
	f->in_fd = f->spool_fd = -1;
	memset(f->memo, 0xff, sizeof(f->memo)); /* k out of range: empty */
	f->ev_src = &f->evs;
	*out = f;
	return pfi_fold_read(f, path);
}

size_t pf_fold_count(const pf_fold *f) { return f->n_lines; }

const char *pf_fold_line(const pf_fold *f, size_t i, uint64_t *weight)
{
	if (i >= f->n_lines)
		return NULL;
	if (weight)
		*weight = f->lines[i].w;
	return (const char *)f->text.data + f->lines[i].off;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int pf_fold_write(const pf_fold *f, int fd)
{
	struct pf_buf b = { 0 };
	int rc = 0;
	for (size_t i = 0; i < f->n_lines && rc == 0; i++) {
		const char *s = (const char *)f->text.data + f->lines[i].off;
		char num[32];
		int nl = snprintf(num, sizeof(num), " %llu\n", (unsigned long long)f->lines[i].w);
		if (pf_buf_put(&b, s, strlen(s)) || pf_buf_put(&b, num, (size_t)nl))
			rc = -ENOMEM;
		if (b.len >= 1 << 16) {
			rc = rc ? rc : write_all(fd, (const char *)b.data, b.len);
			b.len = 0;
		}
	}
	if (rc == 0 && b.len)
		rc = write_all(fd, (const char *)b.data, b.len);
	pf_buf_free(&b);
	return rc;
}

uint64_t pf_fold_total(const pf_fold *f) { return f->total; }
uint64_t pf_fold_samples(const pf_fold *f) { return f->samples; }
uint64_t pf_fold_lost(const pf_fold *f) { return f->lost; }
int pf_fold_periods_hold_lost(const pf_fold *f) { return f && f->group_kept != 0; }
uint64_t pf_fold_samples_all(const pf_fold *f) { return f->samples_all; }

double pf_fold_mean_period(const pf_fold *f)
{
	return f->period_n ? f->period_sum / (double)f->period_n : 0;
}

const char *pf_fold_unit(const pf_fold *f)
{
	/* the event folded: --event's, else the first */
	const struct pf_events *evs = f->ev_src;
	const char *name = f->o.event;
	for (uint32_t i = 0; evs && i < evs->n; i++) {
		if (name ? strcmp(evs->ev[i].name, name) != 0 : i != 0)
			continue;
		const struct perf_event_attr *a = &evs->ev[i].attr;
		if (a->type == PERF_TYPE_SOFTWARE &&
		    (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK))
			return "ns";
		break;
	}
	return "events";
}
int pf_fold_event_index(const pf_fold *f, const char *name)
{
	const struct pf_events *evs = f->ev_src;
	for (uint32_t i = 0; evs && name && i < evs->n; i++)
		if (strcmp(evs->ev[i].name, name) == 0)
			return evs->ev[i].index > INT32_MAX ? -1 : (int)evs->ev[i].index;
	return -1;
}

const char *pf_fold_event_name(const pf_fold *f)
{
	const struct pf_events *evs = f->ev_src;
	if (!evs || !evs->n)
		return NULL;
	for (uint32_t i = 0; f->o.event && i < evs->n; i++)
		if (strcmp(evs->ev[i].name, f->o.event) == 0)
			return evs->ev[i].name;
	return f->o.event ? NULL : evs->ev[0].name;
}

uint64_t pf_fold_truncated(const pf_fold *f) { return f->truncated; }

const char *pf_fold_warnings(const pf_fold *f)
{
	if (!f->warn.len)
		return "";
	return (const char *)f->warn.data;
}

const char *pf_fold_damage(const pf_fold *f)
{
	if (!f || !f->damage.len)
		return "";
	return (const char *)f->damage.data;
}

const char *pf_fold_errmsg(const pf_fold *f) { return f ? f->errmsg : ""; }

const char *pf_fold_input_note(const pf_fold *f) { return f ? f->note : ""; }

struct top_ctx {
	const struct pf_prof *disp;
	const uint64_t *agg;
};

static int top_cmp(const void *a, const void *b, void *arg)
{
	const struct top_ctx *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (t->agg[x] != t->agg[y])
		return t->agg[x] > t->agg[y] ? -1 : 1;
	return strcmp(pf_prof_str_get(t->disp, x, NULL), pf_prof_str_get(t->disp, y, NULL));
}

static size_t fold_top(pf_fold *f, struct pf_fold_top *out, size_t n, int total)
{
	uint32_t *ids = NULL;
	size_t cap = 0;
	/* every display id used is already interned by pfi_fold_build_lines() */
	uint32_t nd = f->disp.n_str;
	uint64_t *agg = calloc(nd ? nd : 1, sizeof(*agg));
	uint32_t *gen = calloc(nd ? nd : 1, sizeof(*gen));
	uint32_t *order = malloc((nd ? nd : 1) * sizeof(*order));
	size_t filled = 0;
	if (!agg || !gen || !order)
		goto out;
	uint32_t g = 0;
	for (uint32_t i = 0; i < f->cap_ent; i++) {
		struct fold_ent *e = &f->ent[i];
		if (!e->used || e->node == NONE)
			continue;
		int64_t m = dnode_display(f, e->node, &ids, &cap);
		if (m <= 0)
			continue;
		if (!total) {
			if (ids[m - 1] < nd)
				agg[ids[m - 1]] = w_add(f, agg[ids[m - 1]], e->w);
			continue;
		}
		g++;
		for (int64_t j = 0; j < m; j++) {
			uint32_t d = ids[j];
			if (d < nd && gen[d] != g) {
				gen[d] = g;
				agg[d] = w_add(f, agg[d], e->w);
			}
		}
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < nd; i++)
		if (agg[i])
			order[k++] = i;
	struct top_ctx tc = { &f->disp, agg };
	qsort_r(order, k, sizeof(*order), top_cmp, &tc);
	for (uint32_t i = 0; i < k && filled < n; i++) {
		out[filled].name = pf_prof_str_get(&f->disp, order[i], NULL);
		out[filled].weight = agg[order[i]];
		filled++;
	}
out:
	free(ids);
	free(agg);
	free(gen);
	free(order);
	return filled;
}

size_t pf_fold_top_self(pf_fold *f, struct pf_fold_top *out, size_t n) { return fold_top(f, out, n, 0); }
size_t pf_fold_top_total(pf_fold *f, struct pf_fold_top *out, size_t n) { return fold_top(f, out, n, 1); }

int pf_fold_entry_next(const pf_fold *f, size_t *pos, struct pf_fold_entry *e)
{
	for (; *pos < f->cap_ent; (*pos)++) {
		const struct fold_ent *x = &f->ent[*pos];
		if (!x->used)
			continue;
		(*pos)++;
		const char *c = x->comm != NONE ? pf_prof_str_get(&f->prof, x->comm, NULL) : NULL;
		const char *ev = f->o.event ? f->o.event : "";
		const struct pf_events *evs = f->ev_src;
		if (evs)
			for (uint32_t i = 0; i < evs->n; i++)
				if ((f->o.flags & PF_FOLD_ALL_EVENTS)
					    ? evs->ev[i].index == x->event
					    : (f->ev_keep[evs->ev[i].index >> 3] >> (evs->ev[i].index & 7)) & 1) {
					ev = evs->ev[i].name;
					break;
				}
		*e = (struct pf_fold_entry){ x->node, x->pid, x->tid, x->cpu, c ? c : "", ev, x->w };
		return 1;
	}
	return 0;
}

int pf_fold_node(const pf_fold *f, uint32_t node, struct pf_fold_node *n)
{
	if (node >= f->n_dn)
		return -EINVAL;
	const struct dnode *d = &f->dn[node];
	n->parent = d->parent;
	n->name = pf_prof_str_get(&f->disp, d->disp, NULL);
	n->dso = d->dso != NONE ? pf_prof_str_get(&f->disp, d->dso, NULL) : "";
	return 0;
}

uint32_t pf_fold_runs(const pf_fold *f)
{
	return f->n_rec_runs ? f->n_rec_runs : 1;
}

void pf_fold_close(pf_fold *f)
{
	if (!f)
		return;
	if (f->have_sym_re)
		regfree(&f->sym_re);
	pf_prof_builder_free(f->b);
	pf_events_free(&f->evs);
	pf_prof_free(&f->prof);
	pf_prof_free(&f->disp);
	free(f->ent);
	free(f->run_starts);
	free(f->comm_keep);
	free(f->frame_disp);
	free(f->line_w);
	free(f->stack_dn);
	free(f->dn);
	free(f->dn_hash);
	free(f->dn_path);
	pf_buf_free(&f->text);
	free(f->lines);
	free(f->warn.data);
	free(f->damage.data);
	free(f->deferred.data);
	free(f->timed.data);
	free(f->runs);
	pfi_fold_spool_drop(f, 0, NULL);
	free(f->fill_pending.data);
	if (f->own_fd)
		close(f->in_fd);
	free(f);
}
