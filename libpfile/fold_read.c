/*
 * fold_read.c - the folding engine's input (fold.h): the sections of a file
 * or pipe, the spool that keeps a pipe's raw sections, and completing a
 * resolved profile that lacks samples from the raw records.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/bytes.h"
#include "internal/fold.h"

/* In a resolved profile the raw recording's payloads are not needed. The
 * kallsyms snapshot (KSYMS: megabytes of text, which pfsym alone reads to
 * name kernel frames) is never: its stored bytes are checked, not inflated. */
static int fold_want(void *arg, uint16_t type)
{
	const pf_fold *f = arg;
	if (type == PF_SEC_KSYMS)
		return 0;
	if (f->mode != 1)
		return 1;
	return !(type == PF_SEC_RECORDS || type == PF_SEC_MAPS || type == PF_SEC_THREADS ||
		 type == PF_SEC_BUILDID || type == PF_SEC_DSO_IMAGE);
}

/* ---- what the resolved profile lacks, folded from the raw records ---- */

/* The raw sections the builder reads. */
static int fill_type(uint16_t type)
{
	return type == PF_SEC_EVENT || type == PF_SEC_MAPS || type == PF_SEC_BUILDID || type == PF_SEC_THREADS ||
	       type == PF_SEC_RECORDS;
}

static int fill_want(void *arg, uint16_t type)
{
	(void)arg;
	return fill_type(type);
}

/* The raw sections of a pipe are kept up to this many bytes (stored, as
 * read: about 4 bytes a sample with -g, 18 with --call-graph dwarf). */
#define FOLD_SPOOL_MAX ((uint64_t)64 << 20)

void pfi_fold_spool_drop(pf_fold *f, int state, const char *why)
{
	pf_writer_close(f->spool);
	f->spool = NULL;
	if (f->spool_fd >= 0)
		close(f->spool_fd);
	f->spool_fd = -1;
	f->spool_state = state;
	f->spool_why = why;
	free(f->spool_idx);
	f->spool_idx = NULL;
	f->n_spool_idx = f->cap_spool_idx = 0;
}

/* Keeps a raw section of an input that cannot be read twice (a pipe), as
 * it was stored, for fold_fill(): the spool is a .pf file of its own, in
 * memory (memfd). */
static void spool_section(pf_fold *f, pf_reader *r, const struct pf_section *s)
{
	if (f->spool_state < 0)
		return;
	if (f->spool_state == 0) {
		const struct pf_file_header *fh = pf_reader_header(r);
		struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
		wo.zstd_level = -1; /* sections are copied as stored */
		wo.endian = fh->endian;
		wo.word_size = fh->word_size;
		wo.e_machine = fh->e_machine;
		int fd = memfd_create("pffold-raw", MFD_CLOEXEC);
		if (fd < 0) {
			pfi_fold_spool_drop(f, -1, "no memory file to keep them in");
			return;
		}
		f->spool_fd = fd;
		if (pf_writer_open_fd(&f->spool, fd, &wo) < 0) {
			pfi_fold_spool_drop(f, -1, "no memory file to keep them in");
			return;
		}
		f->spool_state = 1;
	}
	uint64_t add = PF_SECTION_HEADER_SIZE + (uint64_t)s->stored_size;
	if (f->spool_bytes + add > FOLD_SPOOL_MAX) {
		pfi_fold_spool_drop(f, -1, "more than 64 MiB of them");
		return;
	}
	if (f->n_spool_idx + 2 > f->cap_spool_idx) {
		size_t cap = f->cap_spool_idx ? f->cap_spool_idx * 2 : 256;
		uint64_t *n = realloc(f->spool_idx, cap * sizeof(*n));
		if (!n) {
			pfi_fold_spool_drop(f, -1, "out of memory");
			return;
		}
		f->spool_idx = n;
		f->cap_spool_idx = cap;
	}
	if (pf_writer_section_stored(f->spool, s, pf_reader_stored(r)) < 0) {
		pfi_fold_spool_drop(f, -1, "no room to keep them");
		return;
	}
	f->spool_idx[f->n_spool_idx++] = s->index;
	f->spool_idx[f->n_spool_idx++] = s->offset;
	f->spool_bytes += add;
}

/* The same sample or LOST record, as the builder turns it (the stack and
 * the name aside: a resolved stack differs from a raw one). */
static int same_entry(const struct pf_prof_sample *a, const struct pf_prof_sample *b)
{
	return a->time == b->time && a->period == b->period && a->pid == b->pid && a->tid == b->tid &&
	       a->cpu == b->cpu && a->event == b->event && a->flags == b->flags;
}

static int fill_fold(pf_fold *f, const struct pf_prof_sample *s)
{
	if (s->flags & PF_SAMPLE_LOST)
		f->filled_lost += s->period;
	else
		f->filled++;
	return pfi_fold_sample(f, s);
}

/* Folds the raw entries held since the last run: they came after it and
 * before the next, so the resolved profile has none of them. */
static int fill_flush(pf_fold *f)
{
	size_t pos = 0;
	struct pf_prof_sample ps;
	int rc = 0;
	while (rc == 0 && pf_prof_samples_next(f->fill_pending.data, f->fill_pending.len, &pos, &ps) > 0)
		rc = fill_fold(f, &ps);
	f->fill_pending.len = 0;
	return rc;
}

/* fold_fill()'s builder callback: every raw sample and LOST record, in the
 * order pfsym turned them. An entry between the first and the last of a
 * run is in the resolved profile; one outside every run is not and is
 * folded. Entries after the last run are folded at once; those before a
 * run are held until that run's first entry shows, which proves where
 * they lie. A run whose last entry is not where its count puts it means
 * the raw records differ from those pfsym read (damaged since): nothing
 * more is folded, rather than count a sample twice. */
static int fill_sample(void *ctx, const struct pf_prof_sample *s)
{
	pf_fold *f = ctx;
	if (f->fill_stopped) {
		f->unplaced += !(s->flags & PF_SAMPLE_LOST);
		return 0;
	}
	if (f->fill_left) {
		if (--f->fill_left == 0) {
			const struct fold_run *run = &f->runs[f->fill_run++];
			if (!same_entry(s, &run->last)) {
				f->fill_stopped = 1;
				f->unplaced += !(s->flags & PF_SAMPLE_LOST);
			}
		}
		return 0;
	}
	if (f->fill_run < f->n_runs && same_entry(s, &f->runs[f->fill_run].first)) {
		int rc = fill_flush(f);
		if (rc < 0)
			return rc;
		f->fill_left = f->runs[f->fill_run].n - 1;
		if (!f->fill_left)
			f->fill_run++;
		return 0;
	}
	if (f->fill_run == f->n_runs)
		return fill_fold(f, s);
	if (!f->fill_pending.len && pf_prof_samples_begin(&f->fill_pending))
		return -ENOMEM;
	return pf_prof_samples_add(&f->fill_pending, s) ? -ENOMEM : 0;
}

static void prof_drop_hashes(struct pf_prof *p)
{
	free(p->str_hash);
	free(p->frame_hash);
	free(p->stack_hash);
	p->str_hash = p->frame_hash = p->stack_hash = NULL;
	p->str_hash_cap = p->frame_hash_cap = p->stack_hash_cap = 0;
}

/* A resolved profile that lacks samples (pfsym's output cut short, or a
 * SAMPLES section damaged): reads the raw sections again, from the file or
 * from the spool of a pipe, turns them as pffold does an unsymbolized
 * recording, and folds the samples that no intact SAMPLES section holds.
 * @return 0 or -ENOMEM; other problems are damage lines. */
static int fold_fill(pf_fold *f)
{
	pf_reader *r = NULL;
	int rc, from_spool = 0;
	if (f->seekable) {
		if (lseek(f->in_fd, f->in_off0, SEEK_SET) < 0) {
			pfi_fold_damagef(f, "%s: the resolved profile lacks samples, and the raw records cannot be read again: %s",
				f->path, strerror(errno));
			return 0;
		}
	} else if (f->spool_state == 1) {
		rc = pf_writer_close(f->spool);
		f->spool = NULL;
		if (rc < 0 || lseek(f->spool_fd, 0, SEEK_SET) < 0) {
			pfi_fold_damagef(f, "%s: the resolved profile lacks samples, and the raw records cannot be read again",
				f->path);
			return 0;
		}
		from_spool = 1;
	} else {
		pfi_fold_damagef(f,
			"%s: the resolved profile lacks samples, and the raw records cannot be read again from a pipe "
			"(%s): not folded; give pffold the file",
			f->path, f->spool_why ? f->spool_why : "none kept");
		return 0;
	}
	rc = pf_reader_open_fd(&r, from_spool ? f->spool_fd : f->in_fd, f->path);
	if (rc < 0) {
		if (rc != -ENOMEM)
			pfi_fold_damagef(f, "%s", r ? pf_reader_errmsg(r) : strerror(-rc));
		pf_reader_close(r);
		return rc == -ENOMEM ? rc : 0;
	}
	pf_reader_set_stop_at_end(r, 1);
	pf_reader_set_want(r, fill_want, NULL);
	/* the builder interns into the loaded tables: hashes over all of them */
	prof_drop_hashes(&f->prof);
	pf_prof_builder_free(f->b);
	f->b = NULL;
	struct pf_prof_builder_opts bo = { sizeof(bo), NULL, NULL, fill_sample, f, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	if ((rc = pf_prof_builder_new(&f->b, &f->prof, &bo)) < 0) {
		pf_reader_close(r);
		return rc;
	}
	struct pf_section s;
	size_t k = 0; /* sections of the spool met */
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			if (rc == -ENOMEM)
				break;
			if (!from_spool) /* the same line as the first reading's, told once */
				pfi_fold_damagef(f, "%s", pf_reader_errmsg(r));
			else if (k * 2 + 1 < f->n_spool_idx)
				pfi_fold_damagef(f, "%s: section %llu at offset %llu: its raw records do not decode: left out",
					f->path, (unsigned long long)f->spool_idx[k * 2],
					(unsigned long long)f->spool_idx[k * 2 + 1]);
			k++;
			rc = 0;
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (from_spool && k * 2 + 1 < f->n_spool_idx) {
			/* messages name the input's section, not the spool's */
			s.index = f->spool_idx[k * 2];
			s.offset = f->spool_idx[k * 2 + 1];
		}
		k++;
		if (s.type == PF_SEC_END)
			break;
		if (!fill_type(s.type))
			continue;
		rc = pf_prof_builder_section(f->b, &s);
		if (rc == -ENOMEM)
			break;
		if (rc < 0)
			pfi_fold_damagef(f, "%s: %s", f->path, pf_prof_builder_errmsg(f->b));
		rc = 0;
	}
	pf_reader_close(r);
	if (rc != -ENOMEM)
		rc = pf_prof_builder_finish(f->b);
	if (rc == -ENOMEM)
		return rc;
	/* held entries whose next run never showed: where they lie is unknown */
	size_t pos = 0;
	struct pf_prof_sample ps;
	while (pf_prof_samples_next(f->fill_pending.data, f->fill_pending.len, &pos, &ps) > 0)
		f->unplaced += !(ps.flags & PF_SAMPLE_LOST);
	f->fill_pending.len = 0;
	uint64_t raw = pf_prof_builder_stats(f->b)->samples;
	if (f->filled)
		pfi_fold_warnf(f,
		      "warning: the resolved profile lacks %llu of the %llu samples of the raw records (cut short or "
		      "damaged): they are folded from the raw records, without symbols",
		      (unsigned long long)f->filled, (unsigned long long)raw);
	if (f->unplaced)
		pfi_fold_damagef(f,
			"%s: %llu samples of the raw records do not line up with the resolved profile (damaged raw "
			"records?): not folded",
			f->path, (unsigned long long)f->unplaced);
	return 0;
}

/* Opens `path` ("-": standard input) for reading; a regular file is noted
 * as one that can be read a second time (fold_fill()). @return 0, or a
 * negative errno with f->errmsg set. */
static int fold_open(pf_fold *f, const char *path, pf_reader **r)
{
	int rc;
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = pf_reader_open(r, path); /* fails the same way, with its message */
	} else {
		struct stat st;
		f->in_fd = fd;
		f->own_fd = fd != STDIN_FILENO;
		f->in_off0 = lseek(fd, 0, SEEK_CUR);
		f->seekable = f->in_off0 >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		rc = pf_reader_open_fd(r, fd, path);
	}
	if (rc < 0) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s", *r ? pf_reader_errmsg(*r) : strerror(-rc));
		if (!f->errmsg[0])
			snprintf(f->errmsg, sizeof(f->errmsg), "%s: %s", path, strerror(-rc));
		pf_reader_close(*r);
	} else {
		/* a file ends with END: another appended is not read */
		pf_reader_set_stop_at_end(*r, 1);
	}
	return rc;
}

/* A RUN section: runs 1, 2, ... in order (format/pfile.md 4.10); a
 * sample's run is known once the RUN sections before it are read.
 * @return 0, -ENOMEM. */
static int fold_run_mark(pf_fold *f, pf_reader *r, const struct pf_section *s)
{
	struct pf_run_mark m;
	if (pf_run_mark_decode(s->data, s->size, &m) < 0 || m.run != f->n_rec_runs + 1 ||
	    (f->n_rec_runs && m.start_time < f->run_starts[f->n_rec_runs - 1])) {
		pfi_fold_damagef(f, "%s: section %llu: bad RUN payload (run %u after run %u): ignored",
			pf_reader_name(r), (unsigned long long)s->index, m.run, f->n_rec_runs);
		return 0;
	}
	if (f->n_rec_runs == f->cap_rec_runs) {
		uint32_t cap = f->cap_rec_runs ? 2 * f->cap_rec_runs : 8;
		uint64_t *n = realloc(f->run_starts, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		f->run_starts = n;
		f->cap_rec_runs = cap;
	}
	f->run_starts[f->n_rec_runs++] = m.start_time;
	return 0;
}

/* pfsym's closing SYMINFO: the totals it turned. */
static void fold_closing_totals(pf_fold *f, const struct pf_section *s)
{
	char v[32];
	if (pf_kv_get(s->data, s->size, "samples", v, sizeof(v)) < 0)
		return;
	f->res_closed = 1;
	f->closed_samples = strtoull(v, NULL, 10);
	f->closed_lost = pf_kv_get(s->data, s->size, "lost", v, sizeof(v)) >= 0 ? strtoull(v, NULL, 10) : 0;
}

/* A section of a resolved profile's tables and samples. @return 0, -ENOMEM. */
static int fold_resolved_section(pf_fold *f, pf_reader *r, const struct pf_section *s)
{
	char msg[256];
	int rc;
	if (s->type == PF_SEC_STRINGS || s->type == PF_SEC_FRAMES || s->type == PF_SEC_STACKS) {
		msg[0] = 0;
		rc = pf_prof_load_section(&f->prof, s, msg, sizeof(msg));
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0)
			pfi_fold_damagef(f, "%s: section %llu: %s", pf_reader_name(r), (unsigned long long)s->index, msg);
	} else if (s->type == PF_SEC_SAMPLES) {
		rc = pfi_fold_samples(f, s->data, s->size);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0)
			pfi_fold_damagef(f, "%s: section %llu: bad SAMPLES payload", pf_reader_name(r),
				(unsigned long long)s->index);
	}
	return 0;
}

/* One section read: noted, spooled, and loaded or fed to the builder.
 * @return 0, -ENOMEM. */
static int fold_section(pf_fold *f, pf_reader *r, const struct pf_section *s)
{
	if (s->type == PF_SEC_RECORDS)
		f->raw_records = 1;
	if (s->type == PF_SEC_RUN && s->data && fold_run_mark(f, r, s) < 0)
		return -ENOMEM;
	if (f->mode == 0)
		f->mode = pf_section_resolved_mark(s->type);
	if (s->type == PF_SEC_EVENT && pf_events_add(&f->evs, s) < 0)
		pfi_fold_damagef(f, "%s: section %llu: bad EVENT payload", pf_reader_name(r),
			(unsigned long long)s->index);
	/* a pipe's raw sections, in case the resolved profile lacks
	 * samples (fold_fill()); a file is read again instead */
	if (f->mode == -1 && f->spool_state > 0)
		pfi_fold_spool_drop(f, 0, NULL);
	else if (f->mode != -1 && !f->seekable && fill_type(s->type))
		spool_section(f, r, s);
	if (f->mode == 1 && s->type == PF_SEC_SYMINFO && s->data)
		fold_closing_totals(f, s);
	if (f->mode == 1)
		return fold_resolved_section(f, r, s);
	int rc = pf_prof_builder_section(f->b, s);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		pfi_fold_damagef(f, "%s: %s", pf_reader_name(r), pf_prof_builder_errmsg(f->b));
	return 0;
}

/* Every section of r to f. @return 0, -ENOMEM. */
static int fold_sections(pf_fold *f, pf_reader *r)
{
	struct pf_section s;
	int rc;
	while ((rc = pf_reader_next(r, &s)) != 0) {
		if (rc < 0) {
			pfi_fold_damagef(f, "%s", pf_reader_errmsg(r));
			if (!pf_reader_can_continue(r))
				return 0;
			continue;
		}
		if (fold_section(f, r, &s) == -ENOMEM)
			return -ENOMEM;
	}
	return 0;
}

/* --event and --run name what the recording has. @return 0, or -ENOENT
 * with f->errmsg set. */
static int fold_check_selection(pf_fold *f, const char *path)
{
	if (f->o.event) {
		const struct pf_events *evs = f->ev_src;
		uint32_t i;
		for (i = 0; evs && i < evs->n; i++)
			if (strcmp(evs->ev[i].name, f->o.event) == 0)
				break;
		if (!evs || i == evs->n) {
			/* name the events the file has, as typed to the recorder
			 * (page-faults:u is not page-faults), once each */
			char names[256] = "";
			size_t len = 0;
			for (i = 0; evs && i < evs->n; i++) {
				const char *nm = evs->ev[i].name;
				uint32_t j;
				for (j = 0; j < i && strcmp(evs->ev[j].name, nm); j++)
					;
				if (j < i)
					continue;
				int k = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", nm);
				if (k < 0 || (size_t)k >= sizeof names - len) {
					snprintf(names + (sizeof names - 5), 5, ", ..");
					break;
				}
				len += (size_t)k;
			}
			snprintf(f->errmsg, sizeof(f->errmsg), "%s: no event named '%s' (its events: %s)", path,
				 f->o.event, names[0] ? names : "none");
			return -ENOENT;
		}
	}
	/* a CPU filter or key on samples that recorded none (perf record
	 * without -a or -C leaves PERF_SAMPLE_CPU out): every sample would
	 * read as CPU 0 */
	if (f->o.n_cpus || (f->o.flags & PF_FOLD_CPU)) {
		const struct pf_events *evs = f->ev_src;
		const char *want = evs && evs->n ? (f->o.event ? f->o.event : evs->ev[0].name) : "";
		for (uint32_t i = 0; evs && i < evs->n; i++)
			if (((f->o.flags & PF_FOLD_ALL_EVENTS) || strcmp(evs->ev[i].name, want) == 0) &&
			    !(evs->ev[i].attr.sample_type & PERF_SAMPLE_CPU)) {
				snprintf(f->errmsg, sizeof(f->errmsg),
					 "%s: event '%s' did not record the CPU of its samples (no PERF_SAMPLE_CPU): "
					 "no CPU to %s",
					 path, evs->ev[i].name, f->o.n_cpus ? "filter by" : "sort by");
				return -ENOENT;
			}
	}
	if (f->o.run > (f->n_rec_runs ? f->n_rec_runs : 1)) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s: no run %u (the recording has %u)", path, f->o.run,
			 f->n_rec_runs ? f->n_rec_runs : 1);
		return -ENOENT;
	}
	return 0;
}

/* The samples put off while reading (`which`: f->deferred, 1; f->timed,
 * 2), folded now. @return 0, -ENOMEM. */
static int fold_replay(pf_fold *f, int which)
{
	struct pf_buf *b = which == 1 ? &f->deferred : &f->timed;
	int rc = 0;
	size_t pos = 0;
	struct pf_prof_sample ps;
	f->replaying = which;
	while (pf_prof_samples_next(b->data, b->len, &pos, &ps) > 0)
		if ((rc = pfi_fold_sample(f, &ps)) < 0)
			break;
	pf_buf_free(b);
	f->replaying = 0;
	return rc == -ENOMEM ? rc : 0;
}

/* The damage and loss the folded lines do not show. */
static void fold_report(pf_fold *f, const char *path)
{
	if (f->late_refs)
		pfi_fold_damagef(f,
			"%s: %llu samples come before the STACKS or STRINGS sections they refer to (out of order): "
			"folded",
			path, (unsigned long long)f->late_refs);
	if (f->bad_refs)
		pfi_fold_damagef(f,
			"%s: %llu samples refer to stacks or names that no STACKS or STRINGS section defines "
			"(missing or damaged): not folded",
			path, (unsigned long long)f->bad_refs);
	/* the share of the samples the recording should have had */
	uint64_t all = f->seen > W_MAX - f->lost ? W_MAX : f->seen + f->lost;
	double share = all ? 100.0 * (double)f->lost / (double)all : 0.0;
	if (f->truncated)
		pfi_fold_warnf(f,
		      "warning: %llu samples have call chains cut by a depth limit (kernel.perf_event_max_stack, or "
		      "an unwinder's): their stacks start at [truncated]",
		      (unsigned long long)f->truncated);
	if (f->lost && f->o.weight == PF_FOLD_PERIOD && f->group_kept)
		pfi_fold_warnf(f,
		      "warning: %llu samples were lost during recording (%.2f%% of %llu); the periods of a "
		      "leader-sampled group ({A,B}:S) count from the previous sample, so they hold what the lost "
		      "ones counted: no [lost] line",
		      (unsigned long long)f->lost, share, (unsigned long long)all);
	else if (f->lost && f->o.weight == PF_FOLD_PERIOD && !f->period_n)
		pfi_fold_warnf(f,
		      "warning: %llu samples were lost during recording (%.2f%% of %llu); their period is unknown "
		      "(no sample kept to estimate it from): no [lost] line",
		      (unsigned long long)f->lost, share, (unsigned long long)all);
	else if (f->lost)
		pfi_fold_warnf(f, "warning: %llu samples were lost during recording (%.2f%% of %llu; shown as [lost])",
		      (unsigned long long)f->lost, share, (unsigned long long)all);
}

int pfi_fold_read(pf_fold *f, const char *path)
{
	f->path = path;
	pf_reader *r;
	int rc = fold_open(f, path, &r);
	if (rc < 0)
		return rc;
	pf_reader_set_want(r, fold_want, f);
	struct pf_prof_builder_opts bo = { sizeof(bo), NULL, NULL, pfi_fold_sample, f, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	if ((rc = pf_prof_builder_new(&f->b, &f->prof, &bo)) < 0) {
		pf_reader_close(r);
		return rc;
	}
	rc = fold_sections(f, r);
	f->in_complete = pf_reader_complete(r);
	f->in_claimed = pf_reader_samples_claimed(r);
	pf_reader_close(r);
	if (rc != -ENOMEM && f->mode != 1)
		rc = pf_prof_builder_finish(f->b);
	if (rc == -ENOMEM)
		goto oom;
	if ((rc = fold_check_selection(f, path)) < 0)
		return rc;
	if (f->deferred.len && fold_replay(f, 1) == -ENOMEM)
		goto oom;
	/* a resolved profile without pfsym's closing totals (cut short), or
	 * with fewer samples than they say (a SAMPLES section lost): fold what
	 * it lacks from the raw records, if there are any */
	if (f->mode == 1 && f->raw_records &&
	    !(f->res_closed && f->res_samples == f->closed_samples && f->res_lost == f->closed_lost) &&
	    fold_fill(f) == -ENOMEM)
		goto oom;
	/* --time: every sample, now that the earliest is known */
	if (f->timed.len && fold_replay(f, 2) == -ENOMEM)
		goto oom;
	pfi_fold_spool_drop(f, 0, NULL);
	if (f->own_fd) {
		close(f->in_fd);
		f->own_fd = 0;
	}
	fold_report(f, path);
	const char *shown = path; /* as pf_fold's other lines name it */
	uint64_t bad = f->b ? pf_prof_builder_stats(f->b)->bad_samples : 0;
	if (bad)
		pfi_fold_damagef(f, "%s: %llu SAMPLE records whose fields run past their size (damaged): not folded",
				 shown, (unsigned long long)bad);
	/* said once, whatever else was: how much of the input was used */
	pf_input_note(shown, f->in_complete, f->damage.len != 0, f->read_all, f->in_claimed, f->note,
		      sizeof(f->note));
	return pfi_fold_build_lines(f);

oom:
	snprintf(f->errmsg, sizeof(f->errmsg), "%s: out of memory", path);
	return -ENOMEM;
}
