/*
 * libpfsym/rewrite.c - a recording -> a resolved recording (pfsym's
 * pipeline), and the public handle of include/pfile/sym.h.
 *
 * Reads a .pf file, copies every section through (dropping an older resolved
 * profile), and appends STRINGS/FRAMES/STACKS/SAMPLES/SYMINFO sections
 * (format/profile.md) in bounded chunks, so that it streams. The input is
 * read once, in order, whether it is a file or a pipe: the output is a
 * function of its bytes alone. pfrec writes what a sample needs (EVENT,
 * DSO_IMAGE, BUILDID, MAPS) before the RECORDS section after the one holding
 * the sample, and the builder turns a section's samples only after the next
 * section's state is applied.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/pfsym.h"

/* samples per SAMPLES section: 160 KiB, which the next stage of a pipeline
 * folds while this one goes on */
#define CHUNK_SAMPLES 4096
#define CHUNK_NS 1000000000ull /* 1 s of sample time */
#define TABLE_CHUNK_BYTES (4u << 20)
/* Resolved samples held for a KSYMS section still to come (40 bytes each:
 * 6.7 million samples), unless PFSYM_KSYMS_HOLD_MB says otherwise. pfrec
 * now writes KSYMS before any RECORDS; earlier builds wrote it after
 * seconds of them on a loaded machine. */
#define HOLD_MAX_MB 256u

/* PFSYM_KSYMS_HOLD_MB (a decimal number of MiB; anything else: the
 * default), in bytes. */
static size_t hold_max(void)
{
	const char *v = getenv("PFSYM_KSYMS_HOLD_MB");
	char *end;
	errno = 0;
	unsigned long long mb = v && *v && v[0] != '-' ? strtoull(v, &end, 10) : HOLD_MAX_MB;
	if (v && *v && (errno || *end || v[0] == '-' || mb > (SIZE_MAX >> 20)))
		mb = HOLD_MAX_MB;
	return (size_t)mb << 20;
}

/* One pass of pf_sym_rewrite(). */
struct pass {
	pf_sym *sym;
	struct pf_sym_rewrite_opts o; /* the caller's, completed */
	pf_reader *r;
	pf_writer *w;          /* NULL: nothing written (out_fd -1) */
	struct pf_prof prof;
	struct pf_buf samples, bs, bf, bk;
	uint32_t n_pending;
	uint64_t chunk_t0;     /* time of the chunk's first sample */
	pf_prof_builder *b;
	struct unwinder *unw;
	struct pfsi_jit *jit;  /* JIT maps (PERFMAP sections) */
	int swap;              /* the reader converts the byte order */
	uint8_t transform;     /* the writer's (wo.transform) */
	struct ahead ah;
	struct spares spare;
	int ended;             /* END read and handled */
	int syminfo_written;
	int recoded;           /* the last RECORDS section went through pf_writer_records() */
	int damaged;
	int complete;          /* the closing SYMINFO is written: a summary */
	/* META "ksyms" 1 (a KSYMS section will follow, perhaps after some
	 * RECORDS): until it comes (or END, or hold_max bytes), the samples
	 * are turned as they come but held here, resolved (struct
	 * pf_prof_sample each), and the tables are not written: the kernel
	 * frames made meanwhile are named when it arrives (ksyms_release()) */
	int ksyms_wait;
	int ksyms_seen;        /* a KSYMS section came (the first is used) */
	struct pf_buf held;
	size_t hold_max;       /* bytes of `held` at most (hold_max()) */
	char *errmsg;
	size_t errmsg_size;
};

static void pass_free(struct pass *ps)
{
	if (!ps)
		return;
	pf_buf_free(&ps->held);
	pf_prof_builder_free(ps->b);
	pfsi_unw_free(ps->unw);
	pfsi_jit_free(ps->jit);
	pf_prof_free(&ps->prof);
	pf_buf_free(&ps->samples);
	pf_buf_free(&ps->bs);
	pf_buf_free(&ps->bf);
	pf_buf_free(&ps->bk);
	free(ps);
}

/* An input fault that does not stop the pass. */
/* A bound of the JIT maps reached (not damage: the input may be sound):
 * told once per bound. */
static void tell_jit_cap(struct pass *ps)
{
	char m[512], line[1024];
	while (pfsi_jit_cap_message(ps->jit, m, sizeof(m)))
		if (ps->o.message) {
			snprintf(line, sizeof(line), "%s: %s", ps->o.input_name, m);
			ps->o.message(ps->o.message_arg, line);
		}
}

static void tell(struct pass *ps, const char *fmt, ...)
{
	ps->damaged = 1;
	if (!ps->o.message)
		return;
	char m[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	ps->o.message(ps->o.message_arg, m);
}

/* errmsg for error `rc` (< 0) of writing the output. @return rc. */
static int out_error(struct pass *ps, int rc)
{
	const char *name = ps->o.output_name && strcmp(ps->o.output_name, "-") ? ps->o.output_name : "<stdout>";
	if (ps->errmsg_size)
		snprintf(ps->errmsg, ps->errmsg_size, "%s: %s%s", name, strerror(-rc),
			 rc == -EPIPE ? " (the reader closed the pipe before the end of the output)" : "");
	return rc;
}

static int set_error(struct pass *ps, int rc, const char *msg)
{
	if (ps->errmsg_size)
		snprintf(ps->errmsg, ps->errmsg_size, "%s", msg);
	return rc;
}

/* ---- the resolved profile's sections --------------------------------- */

static int flush_chunk(struct pass *ps)
{
	int rc, more;
	if (!ps->w) {
		ps->n_pending = 0;
		return 0;
	}
	/* the table chunks go out with the SAMPLES section, in one write */
	pf_writer_hold(ps->w, 1);
	do {
		more = pf_prof_encode_tables(&ps->prof, &ps->bs, &ps->bf, &ps->bk, TABLE_CHUNK_BYTES);
		if (more < 0)
			return more;
		if (ps->bs.len && (rc = pf_writer_section(ps->w, PF_SEC_STRINGS, 0, ps->bs.data, ps->bs.len)))
			return rc;
		if (ps->bf.len && (rc = pf_writer_section(ps->w, PF_SEC_FRAMES, 0, ps->bf.data, ps->bf.len)))
			return rc;
		if (ps->bk.len && (rc = pf_writer_section(ps->w, PF_SEC_STACKS, 0, ps->bk.data, ps->bk.len)))
			return rc;
	} while (more);
	pf_writer_hold(ps->w, 0);
	if (ps->n_pending) {
		if ((rc = pf_writer_section(ps->w, PF_SEC_SAMPLES, 0, ps->samples.data, ps->samples.len)))
			return rc;
		ps->n_pending = 0;
		if (pf_prof_samples_begin(&ps->samples))
			return -ENOMEM;
	}
	return 0;
}

static int sample_out(struct pass *ps, const struct pf_prof_sample *s);
static int ksyms_release(pf_sym *s, struct pass *ps, struct pf_ksyms *t);

static int on_sample(void *ctx, const struct pf_prof_sample *s)
{
	struct pass *ps = ctx;
	if (ps->ksyms_wait && ps->held.len < ps->hold_max) /* until KSYMS names its kernel frames */
		return pf_buf_put(&ps->held, s, sizeof(*s)) < 0 ? -ENOMEM : 0;
	if (ps->ksyms_wait) {
		/* a bound on the memory: on without it */
		if (ps->o.message) {
			char m[512];
			snprintf(m, sizeof(m), "%s: no KSYMS section after %zu samples (%zu MiB held: "
				 "PFSYM_KSYMS_HOLD_MB), though META's ksyms key says one follows: the kernel "
				 "addresses met until it comes stay [kernel]", pf_reader_name(ps->r),
				 ps->held.len / sizeof(*s), ps->hold_max >> 20);
			ps->o.message(ps->o.message_arg, m);
		}
		int rc = ksyms_release(ps->sym, ps, NULL);
		if (rc < 0)
			return rc;
	}
	return sample_out(ps, s);
}

static int sample_out(struct pass *ps, const struct pf_prof_sample *s)
{
	if (ps->o.sample) {
		int rc = ps->o.sample(ps->o.sample_arg, &ps->prof, s);
		if (rc < 0)
			return rc;
	}
	if (!ps->w)
		return 0;
	if (pf_prof_samples_add(&ps->samples, s))
		return -ENOMEM;
	if (!ps->n_pending++)
		ps->chunk_t0 = s->time;
	/* a chunk also ends after CHUNK_NS of the samples' own time, so that
	 * a reader of a slow stream (pffold --every) sees the samples resolved
	 * within about that; from the samples alone, never from how the input
	 * arrived: the same output from a file and a pipe */
	if (ps->n_pending >= CHUNK_SAMPLES || (s->time > ps->chunk_t0 && s->time - ps->chunk_t0 >= CHUNK_NS))
		return flush_chunk(ps);
	return 0;
}

static int write_syminfo_start(struct pass *ps, const struct pfsym_opts *so)
{
	if (!ps->w)
		return 0;
	struct pf_buf b = { 0 };
	int rc = pf_kv_add(&b, "pfsym.version", pf_version());
	rc |= pf_kv_add(&b, "input", ps->o.input_name);
	if (so->symfs) {
		rc |= pf_kv_add(&b, "symfs", so->symfs);
		rc |= pf_kv_add(&b, "host_fallback", so->host_fallback ? "1" : "0");
	}
	rc |= pf_kv_add(&b, "force", so->force ? "1" : "0");
	if (!rc)
		rc = pf_writer_section(ps->w, PF_SEC_SYMINFO, 0, b.data, b.len);
	pf_buf_free(&b);
	return rc;
}

/* c: the symbolizer's counts, taken by the caller (at END after the last
 * samples are resolved; at a cut end before, as pfsym always did) */
static int write_syminfo_end(struct pass *ps, const struct pfsi_sym_counts *cp, const struct kern *kern)
{
	if (!ps->w)
		return 0;
	const struct pf_prof_stats *st = pf_prof_builder_stats(ps->b);
	const struct pf_prof *p = &ps->prof;
	const struct pfsi_sym_counts c = *cp;
	struct pf_buf b = { 0 };
	int rc = pf_kv_add_u64(&b, "samples", st->samples);
	rc |= pf_kv_add_u64(&b, "lost", st->lost);
	rc |= pf_kv_add_u64(&b, "bad_samples", st->bad_samples);
	rc |= pf_kv_add_u64(&b, "unique_addresses", st->unique_addrs);
	rc |= pf_kv_add_u64(&b, "user_frames", st->frames);
	rc |= pf_kv_add_u64(&b, "user_frames_resolved", st->frames_resolved);
	rc |= pf_kv_add_u64(&b, "kernel_frames", st->frames_kernel);
	rc |= pf_kv_add_u64(&b, "truncated_samples", st->truncated);
	rc |= pf_kv_add_u64(&b, "strings", p->n_str);
	rc |= pf_kv_add_u64(&b, "frames", p->n_frames);
	rc |= pf_kv_add_u64(&b, "stacks", p->n_stacks);
	rc |= pf_kv_add_u64(&b, "binaries_found", c.found);
	rc |= pf_kv_add_u64(&b, "binaries_missing", c.missing);
	rc |= pf_kv_add_u64(&b, "binaries_mismatched", c.mismatched);
	rc |= pf_kv_add_u64(&b, "binaries_unverified", c.unverified);
	rc |= pf_kv_add_u64(&b, "binaries_from_host", c.from_host);
	rc |= pfsi_unw_syminfo(ps->unw, &b);
	rc |= pfsi_kern_syminfo(kern, &b);
	if (!rc)
		rc = pf_writer_section(ps->w, PF_SEC_SYMINFO, 0, b.data, b.len);
	pf_buf_free(&b);
	return rc;
}

/* ---- samples waiting for the KSYMS section -------------------------------- */

/* The end of the wait for KSYMS (it came: `t` is its table, taken; or it
 * will not come, t NULL): the kernel frames made meanwhile, not yet
 * written, are named from it, and the samples held go out. */
static int ksyms_release(pf_sym *s, struct pass *ps, struct pf_ksyms *t)
{
	if (t)
		pfsi_kern_take(s->kern, t);
	pfsi_kern_wait(s->kern, 0);
	ps->ksyms_wait = 0;
	struct pf_prof *p = &ps->prof;
	if (t || pfsi_kern_has_file(s->kern)) {
		for (uint32_t id = p->enc_frames; id < p->n_frames; id++) {
			struct pf_prof_frame f = p->frames[id];
			if (!(f.flags & PF_FRAME_KERNEL) || (f.flags & (PF_FRAME_TRUNCATED | PF_FRAME_INLINE)) ||
			    f.name != PF_PROF_NONE)
				continue;
			int rc = pfsi_kern_rename(s->kern, p, &f);
			if (rc < 0)
				return rc;
			if (rc > 0 && (rc = pf_prof_frame_set(p, id, &f)) < 0)
				return rc;
		}
	}
	const struct pf_prof_sample *h = (const struct pf_prof_sample *)ps->held.data;
	size_t n = ps->held.len / sizeof(*h);
	for (size_t i = 0; i < n; i++) {
		int rc = sample_out(ps, &h[i]);
		if (rc < 0)
			return rc;
	}
	pf_buf_free(&ps->held);
	return 0;
}

/* The input ends (END, or cut) while waiting for KSYMS: said once. */
static int ksyms_missing(pf_sym *s, struct pass *ps)
{
	if (!ps->ksyms_wait)
		return 0;
	if (ps->o.message) {
		char m[512];
		snprintf(m, sizeof(m), "%s: no KSYMS section, though META's ksyms key says one follows (the recording "
			 "was cut?): kernel frames stay [kernel] (pfsym --kallsyms FILE names them)",
			 pf_reader_name(ps->r));
		ps->o.message(ps->o.message_arg, m);
	}
	return ksyms_release(s, ps, NULL);
}

/* ---- the pass ----------------------------------------------------------- */

/* The writer (unless out_fd is -1), the unwinder, the builder. The reader
 * is the thread's from here on. @return 0 or -errno with errmsg set. */
static int pass_setup(pf_sym *s, struct pass *ps, const struct pf_file_header *fh, int out_fd)
{
	struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
	wo.word_size = fh->word_size;
	wo.e_machine = fh->e_machine;
	/* Raw sections pass through as stored; the resolved profile is written
	 * at zstd level 1 to a file, and uncompressed into a pipe or socket,
	 * where the next process (pffold) reads it at once: compressing it
	 * there would cost both sides CPU for nothing. */
	struct stat ost;
	int to_pipe = out_fd >= 0 && fstat(out_fd, &ost) == 0 && (S_ISFIFO(ost.st_mode) || S_ISSOCK(ost.st_mode));
	wo.zstd_level = to_pipe ? -1 : 1;
	/* a few SAMPLES chunks (160 KiB each) fit the pipe: writing one does
	 * not wait for the reader, the two processes overlap (best effort: the limit
	 * is /proc/sys/fs/pipe-max-size for an unprivileged user) */
	if (to_pipe && S_ISFIFO(ost.st_mode))
		(void)fcntl(out_fd, F_SETPIPE_SZ, 1 << 20);
	/* a file that may hold transformed RECORDS (format 1.1, continued ones
	 * from 1.2): so may the output, and its sections pass through as they are */
	if (fh->version_minor >= 1)
		wo.transform = fh->version_minor >= 2 ? PF_TRANSFORM_COLUMNS_NEXT : PF_TRANSFORM_COLUMNS;
	ps->transform = wo.transform;
	/* the reader hands out kernel data in host order: write it so */
	pf_prof_init(&ps->prof);
	ps->unw = pfsi_unw_new(s->sym, &s->o, fh->e_machine);
	struct pf_prof_builder_opts bo = { sizeof(bo), pfsi_sym_resolve, s->sym, on_sample, ps, pfsi_unw_unwind, ps->unw,
					   pfsi_kern_resolve, s->kern, pfsi_kern_ksymbol, s->kern,
					   s->o.no_inline ? NULL : pfsi_sym_resolve_chain, s->sym,
					   pfsi_jit_resolve, ps->jit,
					   pfsi_kern_has_vmlinux(s->kern) ? pfsi_kern_resolve_chain : NULL, s->kern };
	pfsi_kern_pass_begin(s->kern);
	/* the whole chunk at once: no realloc copies while it fills */
	ps->samples.cap = 8 + (size_t)CHUNK_SAMPLES * PF_PROF_SAMPLE_SIZE;
	ps->samples.data = malloc(ps->samples.cap);
	if (!ps->samples.data)
		ps->samples.cap = 0;
	if (!ps->unw || pf_prof_samples_begin(&ps->samples) || pf_prof_builder_new(&ps->b, &ps->prof, &bo) < 0)
		return set_error(ps, -ENOMEM, "out of memory");
	int rc;
	if (out_fd >= 0 && (rc = pf_writer_open_fd(&ps->w, out_fd, &wo)) < 0)
		return out_error(ps, rc);
	return 0;
}

/* Writes section x (as stored where it can) and hands it to the builder.
 * @return 0, or -errno (the pass stops). */
static int pass_section(pf_sym *s, struct pass *ps, struct ahead_sec *x)
{
	struct pf_section sec = x->s;
	int rc;
	/* The opening SYMINFO follows META (format/pfile.md: META comes
	 * first) and precedes every RECORDS section, which is how readers
	 * tell a symbolized file early. */
	if (!ps->syminfo_written && sec.type != PF_SEC_META) {
		if ((rc = write_syminfo_start(ps, &s->o)) < 0)
			return rc;
		ps->syminfo_written = 1;
	}
	if (sec.type == PF_SEC_END) {
		if ((rc = pf_prof_builder_finish(ps->b)) < 0 || (rc = ksyms_missing(s, ps)) < 0 ||
		    (rc = flush_chunk(ps)) < 0)
			return rc;
		/* the build-ids read from files proven by inode: recorded, with
		 * their proof, for the readers of the output */
		struct pf_buf pb = { 0 };
		rc = pfsi_sym_proven_buildids(s->sym, &pb);
		if (rc > 0 && ps->w)
			rc = pf_writer_section(ps->w, PF_SEC_BUILDID, 0, pb.data, pb.len);
		pf_buf_free(&pb);
		if (rc < 0)
			return rc;
		struct pfsi_sym_counts sc;
		pfsi_sym_counts(s->sym, &sc);
		if ((rc = write_syminfo_end(ps, &sc, s->kern)) < 0)
			return rc;
		ps->ended = 1;
	}
	/* raw sections pass through as stored (no zstd round trip), unless
	 * the reader converted their byte order or restored a transform;
	 * a RECORDS section that continues another (transform 2) only
	 * after that one passed through as stored too */
	const uint8_t *stored = ps->swap || (sec.transform && !ps->transform) || !x->has_stored ? NULL : x->stored;
	if (sec.type == PF_SEC_RECORDS && sec.transform == PF_TRANSFORM_COLUMNS_NEXT && ps->recoded)
		stored = NULL;
	if (sec.type == PF_SEC_RECORDS)
		ps->recoded = !stored;
	rc = 0;
	if (!ps->w)
		rc = 0; /* nothing written: out_fd -1 */
	else if (stored)
		rc = pf_writer_section_stored(ps->w, &sec, stored);
	else if (sec.type == PF_SEC_RECORDS)
		rc = pf_writer_records(ps->w, sec.data, sec.size);
	else
		rc = pf_writer_section(ps->w, sec.type, sec.flags, sec.data, sec.size);
	if (rc < 0)
		return rc;
	if (!ps->syminfo_written && sec.type == PF_SEC_META) {
		if ((rc = write_syminfo_start(ps, &s->o)) < 0)
			return rc;
		ps->syminfo_written = 1;
	}
	if (sec.type == PF_SEC_DSO_IMAGE) {
		struct pf_dso_image img;
		if (pf_dso_image_decode(sec.data, sec.size, &img) == 0 && (rc = pfsi_sym_add_image(s->sym, &img)) < 0)
			return rc;
	}
	if (sec.type == PF_SEC_META) {
		pfsi_unw_meta(ps->unw, sec.data, sec.size);
		pfsi_kern_meta(s->kern, sec.data, sec.size);
		if ((rc = pfsi_sym_meta(s->sym, sec.data, sec.size)) < 0)
			return rc;
		char v[8];
		/* also with --kallsyms FILE: its layout is checked against KSYMS */
		if (pf_kv_get(sec.data, sec.size, "ksyms", v, sizeof(v)) > 0 && strcmp(v, "1") == 0 &&
		    !ps->ksyms_seen) {
			ps->ksyms_wait = 1;
			pfsi_kern_wait(s->kern, 1);
		}
	}
	if (sec.type == PF_SEC_KSYMS && x->ks_decoded) { /* decoded by the read-ahead thread */
		if (x->ks_rc == -EBADMSG)
			tell(ps, "%s: section %llu at offset %llu: %s (the kallsyms snapshot is not used: kernel "
			     "frames stay [kernel])", pf_reader_name(ps->r), (unsigned long long)sec.index,
			     (unsigned long long)sec.offset, x->ks_msg);
		else if (x->ks_rc < 0)
			return x->ks_rc;
		/* the first one is used (pfsi_kern_take()) */
		if (!ps->ksyms_seen && (rc = ksyms_release(s, ps, x->ks_rc < 0 ? NULL : &x->ks)) < 0)
			return rc;
		ps->ksyms_seen = 1;
	}
	if (sec.type == PF_SEC_PERFMAP && sec.data && !pfsi_jit_prescanned(ps->jit)) {
		rc = pfsi_jit_add(ps->jit, sec.data, sec.size, pf_prof_builder_stats(ps->b)->samples);
		if (rc == -ENOMEM)
			return -ENOMEM;
		if (rc == 1)
			tell_jit_cap(ps);
		rc = 0;
	}
	if (sec.type == PF_SEC_RECORDS && sec.data) {
		/* the builder keeps this payload until the next one: hand
		 * it the slot's buffer instead of a copy; the builder's
		 * previous buffer goes back to the reader through the slot */
		rc = pf_prof_builder_records_swap(ps->b, &sec, &x->data, &x->cap);
		pfsi_spare_give(&ps->spare, &x->data, &x->cap);
		if (!x->data)
			x->data = pfsi_payload_buf(&x->cap);
	} else {
		rc = pf_prof_builder_section(ps->b, &sec);
		if (sec.type == PF_SEC_EVENT && !ps->spare.want) {
			const struct pf_events *evs = pf_prof_builder_events(ps->b);
			for (uint32_t i = 0; i < evs->n; i++)
				if (evs->ev[i].attr.sample_type & PERF_SAMPLE_STACK_USER)
					ps->spare.want = SPARE_BYTES;
		}
		/* the slot's buffer goes to the reader next */
		pfsi_spare_give(&ps->spare, &x->data, &x->cap);
	}
	if (rc == -EBADMSG) {
		tell(ps, "%s: %s", pf_reader_name(ps->r), pf_prof_builder_errmsg(ps->b));
		rc = 0;
	}
	return rc;
}

/* The sections, as the thread hands them over, to END (or the end of the
 * input, or a fault that stops the reading). @return 0 or -errno. */
static int pass_loop(pf_sym *s, struct pass *ps)
{
	struct ahead_sec *x = NULL;
	int rc;
	for (;;) {
		if (x)
			pfsi_ahead_release(&ps->ah);
		/* while the thread decodes, load the binaries of the DSOs
		 * seen so far: their first lookups would stall this loop */
		while (!pfsi_ahead_ready(&ps->ah) && pfsi_sym_preload_one(s->sym, pf_prof_builder_maps(ps->b)) > 0)
			;
		while (!pfsi_ahead_ready(&ps->ah) && pfsi_spare_step(&ps->spare))
			;
		x = pfsi_ahead_next(&ps->ah);
		if ((rc = x->rc) == 0)
			return 0;
		if (rc < 0) {
			/* the input's damage: what was read is still resolved
			 * and written below */
			tell(ps, "%s", x->msg);
			if (!x->can_continue)
				return 0;
			continue;
		}
		if (x->s.type >= 0x0100 && x->s.type <= 0x01ff)
			continue; /* an older resolved profile: replaced */
		if ((rc = pass_section(s, ps, x)) < 0)
			return rc;
	}
}

/* After the loop: the opening SYMINFO if no section came, the rest of the
 * resolved profile if END did not come, the writer closed. */
static int pass_finish(pf_sym *s, struct pass *ps)
{
	int rc;
	if (!ps->syminfo_written && (rc = write_syminfo_start(ps, &s->o)) < 0)
		return out_error(ps, rc);
	if (!ps->ended) {
		struct pfsi_sym_counts sc;
		pfsi_sym_counts(s->sym, &sc);
		if ((rc = pf_prof_builder_finish(ps->b)) < 0 || (rc = ksyms_missing(s, ps)) < 0 ||
		    (rc = flush_chunk(ps)) < 0 || (rc = write_syminfo_end(ps, &sc, s->kern)) < 0)
			return out_error(ps, rc);
	}
	ps->complete = 1;
	if (ps->w) {
		rc = pf_writer_close(ps->w);
		ps->w = NULL;
		if (rc < 0)
			return out_error(ps, rc);
	}
	return 0;
}

/* After the pass: samples the builder could not decode, and how much of an
 * input that was not whole (format/pfile.md 5.4) was used, told once. An
 * incomplete input is not damage: its note does not make the pass fail. */
static void pass_note(struct pass *ps, pf_reader *r)
{
	const struct pf_prof_stats *st = pf_prof_builder_stats(ps->b);
	const char *name = strcmp(ps->o.input_name, "-") ? ps->o.input_name : "<stdin>";
	if (st->bad_samples)
		tell(ps, "%s: %llu SAMPLE records whose fields run past their size (damaged): dropped", name,
		     (unsigned long long)st->bad_samples);
	char note[600];
	if (pf_input_note(name, pf_reader_complete(r), ps->damaged || pf_reader_errors(r) != 0, st->samples,
			  pf_reader_samples_claimed(r), note, sizeof(note)) > 0 &&
	    ps->o.message)
		ps->o.message(ps->o.message_arg, note);
}

int pf_sym_rewrite(pf_sym *s, pf_reader *r, int out_fd, const struct pf_sym_rewrite_opts *o, char *errmsg,
		   size_t errmsg_size)
{
	if (errmsg_size)
		errmsg[0] = 0;
	if (!o || o->sz < sizeof(size_t))
		return -EINVAL;
	pass_free(s->pass);
	struct pass *ps = s->pass = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	memcpy(&ps->o, o, o->sz < sizeof(ps->o) ? o->sz : sizeof(ps->o));
	if (!ps->o.input_name)
		ps->o.input_name = pf_reader_name(r);
	ps->r = r;
	ps->sym = s;
	ps->hold_max = hold_max();
	/* a file ends with END: what follows (another file appended, garbage)
	 * is not part of it, and the reader says so */
	pf_reader_set_stop_at_end(r, 1);
	ps->errmsg = errmsg;
	ps->errmsg_size = errmsg_size;
	/* JIT maps are written when a recording stops, after its samples:
	 * from a file, read them first */
	if (!(ps->jit = pfsi_jit_new(s->sym, s->o.max_jit_symbols, s->o.max_jit_map_bytes)) ||
	    pfsi_jit_prescan(ps->jit, pf_reader_name(r)) < 0)
		return set_error(ps, -ENOMEM, "out of memory");
	tell_jit_cap(ps);
	/* The read-ahead thread starts now, reading the first sections while
	 * this thread sets up the rest (a new thread waited up to 0.5 ms for a
	 * CPU when it was started last). From here on only it touches the
	 * reader, until pfsi_ahead_stop(). */
	{
		size_t cap;
		uint8_t *buf = pfsi_payload_buf(&cap);
		if (buf)
			(void)pf_reader_swap_data(r, &buf, &cap);
		free(buf); /* the reader's (none yet), or ours if that failed */
	}
	const struct pf_file_header *fh = pf_reader_header(r);
	ps->swap = pf_reader_needs_swap(r);
	if (pfsi_ahead_start(&ps->ah, r) < 0)
		return set_error(ps, -EAGAIN, "cannot start a thread");
	int rc = pass_setup(s, ps, fh, out_fd);
	if (rc >= 0) {
		rc = pass_loop(s, ps);
		pfsi_ahead_stop(&ps->ah);
		if (rc == -ENOMEM && errmsg_size)
			snprintf(errmsg, errmsg_size, "%s: %s", ps->o.input_name, strerror(ENOMEM));
		else if (rc < 0)
			out_error(ps, rc);
		else
			rc = pass_finish(s, ps);
		if (rc >= 0)
			pass_note(ps, r);
	}
	pfsi_ahead_stop(&ps->ah);
	free(ps->spare.p);
	ps->spare.p = NULL;
	if (ps->w) {
		pf_writer_close(ps->w);
		ps->w = NULL;
	}
	return rc < 0 ? rc : ps->damaged ? PF_SYM_DAMAGED : 0;
}

int pf_sym_each_sample(pf_sym *s, const char *path, pf_sym_sample_fn fn, void *arg, char *errmsg,
		       size_t errmsg_size)
{
	pf_reader *r;
	if (errmsg_size)
		errmsg[0] = 0;
	int rc = pf_reader_open(&r, path);
	if (rc < 0) {
		const char *m = r ? pf_reader_errmsg(r) : "";
		if (errmsg_size)
			snprintf(errmsg, errmsg_size, "%s", m && *m ? m : strerror(-rc));
		pf_reader_close(r);
		return rc;
	}
	struct pf_sym_rewrite_opts o = PF_SYM_REWRITE_OPTS_INIT;
	o.input_name = path;
	o.sample = fn;
	o.sample_arg = arg;
	rc = pf_sym_rewrite(s, r, -1, &o, errmsg, errmsg_size);
	pf_reader_close(r);
	return rc;
}

void pf_sym_report(pf_sym *s, FILE *out, const char *prog)
{
	struct pass *ps = s->pass;
	if (!ps || !ps->complete)
		return;
	const struct pf_prof_stats *st = pf_prof_builder_stats(ps->b);
	/* a share of no frames is no share: say why there are none */
	char res[128];
	if (st->frames)
		snprintf(res, sizeof(res), "%.1f%% of %llu user frames resolved",
			 100.0 * (double)st->frames_resolved / (double)st->frames, (unsigned long long)st->frames);
	else
		snprintf(res, sizeof(res), "no user frames to resolve%s",
			 !st->samples && st->lost ? " (every sample was lost)"
			 : !st->samples	  ? " (no samples)"
					  : "");
	pfsi_report_line(out, "%s: %llu samples, %llu lost, %llu unique addresses, %s, %llu kernel frames", prog,
		(unsigned long long)st->samples, (unsigned long long)st->lost, (unsigned long long)st->unique_addrs,
		res, (unsigned long long)st->frames_kernel);
	if (st->truncated)
		pfsi_report_line(out,
			"%s: call chains of %llu samples cut by a depth limit "
			"(kernel.perf_event_max_stack, or the unwinder's 1024 frames): their stacks start "
			"at [truncated]",
			prog, (unsigned long long)st->truncated);
	pfsi_unw_report(ps->unw, out, prog);
	pfsi_kern_report(s->kern, out, prog);
	pfsi_lines_report(s->sym, out, prog);
	pfsi_jit_report(ps->jit, out, prog);
	pfsi_debuginfod_report(s->sym, out, prog);
	pfsi_bounds_report(s->sym, out, prog);
	pfsi_sym_report(s->sym, out, prog);
}

/* ---- the handle --------------------------------------------------------- */

int pf_sym_new(pf_sym **out, const struct pf_sym_opts *o, char *errmsg, size_t errmsg_size)
{
	static const struct pf_sym_opts defaults = PF_SYM_OPTS_INIT;
	struct pf_sym_opts po = defaults;
	*out = NULL;
	if (errmsg_size)
		errmsg[0] = 0;
	if (o) {
		if (o->sz < sizeof(size_t))
			return -EINVAL;
		memcpy(&po, o, o->sz < sizeof(po) ? o->sz : sizeof(po));
	}
	if (po.n_debug_dirs > 32)
		return -EINVAL;
	if (po.max_name && (po.max_name < PFSI_MAX_NAME_MIN || po.max_name > PFSI_MAX_NAME_MAX)) {
		if (errmsg_size)
			snprintf(errmsg, errmsg_size, "max_name %u: out of %u..%u bytes", po.max_name, PFSI_MAX_NAME_MIN,
				 PFSI_MAX_NAME_MAX);
		return -EINVAL;
	}
	if (po.max_inline > PFSI_MAX_INLINE_MAX) {
		if (errmsg_size)
			snprintf(errmsg, errmsg_size, "max_inline %u: out of 1..%u frames", po.max_inline,
				 PFSI_MAX_INLINE_MAX);
		return -EINVAL;
	}
	pf_sym *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* the strings, copied into one allocation */
	size_t len = po.symfs ? strlen(po.symfs) + 1 : 0;
	len += po.dwarf_cache ? strlen(po.dwarf_cache) + 1 : 0;
	for (unsigned i = 0; i < po.n_debug_dirs; i++)
		len += strlen(po.debug_dirs[i]) + 1;
	char *p = s->strs = malloc(len ? len : 1);
	if (!p) {
		free(s);
		return -ENOMEM;
	}
	if (po.symfs) {
		s->o.symfs = strcpy(p, po.symfs);
		p += strlen(p) + 1;
	}
	for (unsigned i = 0; i < po.n_debug_dirs; i++) {
		s->ddirs[i] = strcpy(p, po.debug_dirs[i]);
		p += strlen(p) + 1;
	}
	if (po.dwarf_cache) {
		s->o.dwarf_cache = strcpy(p, po.dwarf_cache);
		p += strlen(p) + 1;
	}
	s->o.debug_dirs = s->ddirs;
	s->o.n_debug_dirs = (int)po.n_debug_dirs;
	s->o.force = po.force;
	s->o.host_fallback = po.host_fallback;
	s->o.no_demangle = po.no_demangle;
	s->o.max_name = po.max_name ? po.max_name : PFSI_MAX_NAME_DEFAULT;
	s->o.max_inline = po.max_inline ? po.max_inline : PFSI_MAX_INLINE_DEFAULT;
	s->o.dbgd_timeout_s = po.debuginfod_timeout_s == 0 ? PFSI_DBGD_TIMEOUT_DEFAULT
			      : po.debuginfod_timeout_s < 0 ? 0 : po.debuginfod_timeout_s;
	const char *warning = NULL;
	int rc = pfsi_kern_new(&s->kern, po.kallsyms, &warning,
			       errmsg, errmsg_size);
	if (rc < 0) {
		free(s->strs);
		free(s);
		return rc;
	}
	if (warning && po.message)
		po.message(po.message_arg, warning);
	pfsi_kern_set_force(s->kern, po.force);
	s->o.no_inline = po.no_inline;
	s->o.debuginfod = po.debuginfod;
	s->o.max_jit_symbols = po.max_jit_symbols;
	s->o.max_jit_map_bytes = po.max_jit_map_bytes;
	const char *bad_dir = NULL;
	rc = pfsi_sym_new(&s->o, &s->sym, &bad_dir);
	if (rc < 0) {
		if (bad_dir && errmsg_size)
			snprintf(errmsg, errmsg_size, "%s: %s", bad_dir, strerror(-rc));
		pfsi_kern_free(s->kern);
		free(s->strs);
		free(s);
		return rc;
	}
	rc = pfsi_kern_vmlinux(s->kern, s->sym, po.vmlinux, po.force, po.no_inline, errmsg, errmsg_size);
	if (rc < 0) {
		pf_sym_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void pf_sym_free(pf_sym *s)
{
	if (!s)
		return;
	pass_free(s->pass);
	pfsi_sym_free(s->sym);
	pfsi_kern_free(s->kern);
	if (s->names) {
		pf_prof_free(s->names);
		free(s->names);
	}
	free(s->strs);
	free(s);
}

int pf_sym_lookup(pf_sym *s, const char *path, uint64_t vaddr, const char **name)
{
	*name = NULL;
	if (!s->names) {
		if (!(s->names = malloc(sizeof(*s->names))))
			return -ENOMEM;
		pf_prof_init(s->names);
	}
	return pfsi_sym_lookup_file(s->sym, s->names, path, vaddr, name);
}

int pf_sym_lookup_chain(pf_sym *s, const char *path, uint64_t vaddr, struct pf_sym_frame *out, uint32_t max,
			uint32_t *n)
{
	*n = 0;
	if (!max)
		return -EINVAL;
	if (!s->names) {
		if (!(s->names = malloc(sizeof(*s->names))))
			return -ENOMEM;
		pf_prof_init(s->names);
	}
	struct pf_prof_frame f[256];
	int rc = pfsi_sym_lookup_chain(s->sym, s->names, path, vaddr, f, 256);
	if (rc < 0)
		return rc;
	/* f[0] the real function, f[1..rc) inlined, outermost first: out
	 * innermost first, as addr2line -i prints them */
	uint32_t k = (uint32_t)rc < max ? (uint32_t)rc : max;
	for (uint32_t i = 0; i < k; i++) {
		const struct pf_prof_frame *g = &f[(uint32_t)rc - 1 - i];
		out[i].name = g->name != PF_PROF_NONE ? pf_prof_str_get(s->names, g->name, NULL) : NULL;
		out[i].file = g->src_file != PF_PROF_NONE ? pf_prof_str_get(s->names, g->src_file, NULL) : NULL;
		out[i].line = g->line;
		out[i].depth = (g->flags & PF_FRAME_DEPTH_MASK) >> PF_FRAME_DEPTH_SHIFT;
	}
	*n = k;
	return (uint32_t)rc > max ? -ENOSPC : 0;
}
