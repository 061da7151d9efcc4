/*
 * fuzz_profile - the profile builder and folding (libpfile/profile.c, maps.c):
 * raw records -> pf_prof samples (mapping timeline, callchain context
 * markers, the callchain cache, an unwinder's frames, a symbolizer's names)
 * -> the resolved-profile sections -> fold, and pf_fold_open() on the file
 * itself (raw, or resolved when it holds STRINGS/SAMPLES/SYMINFO).
 *
 * Input: one option byte, then a .pf file. Option bits: 0 recompute the
 * checksums; 1 weight by period; 2-4 fold flags (PID, TID, NO_COMM); 5
 * keep only the event "cpu-clock"; 6 a fake unwinder (frames read from the
 * sample's stack copy); 7 a time window.
 * Invariants: the tables the builder interns encode into sections that load
 * back into the same number of strings, frames and stacks; every sample's
 * stack and name ids are defined; every stack's parent is a smaller id; the
 * folded lines' weights add up to the fold's total.
 */
#include <errno.h>
#include <fcntl.h>

#include "fuzz.h"
#include "testutil.h"
#include "build.h"
#include "fold.h"

struct run {
	struct pf_prof *p;
	struct pf_buf samples;
	uint64_t n;
};

/* A symbolizer: names some frames after their offset. */
static int resolve(void *ctx, struct pf_prof *p, struct pf_dso *dso, struct pf_prof_frame *f)
{
	(void)ctx;
	fuzz_touch(dso->path, dso->path_len + 1);
	if (f->file_off % 3 == 0)
		return 0;
	char name[32];
	int len = snprintf(name, sizeof(name), "fn_%llx", (unsigned long long)(f->file_off & 0xfff));
	int64_t id = pf_prof_str(p, name, (size_t)len);
	if (id < 0)
		return (int)id;
	f->name = (uint32_t)id;
	f->flags &= ~PF_FRAME_UNRESOLVED;
	return 0;
}

/* An unwinder: the words of the stack copy as return addresses. */
static int unwind(void *ctx, struct pf_maps *maps, const struct pf_sample *s, uint64_t *addrs, uint32_t max)
{
	(void)ctx;
	(void)maps;
	uint32_t n = 0;
	size_t words = (size_t)(s->user_stack_dyn_size < s->user_stack_size ? s->user_stack_dyn_size
									     : s->user_stack_size) / 8;
	if (s->ip && n < max)
		addrs[n++] = s->ip;
	for (size_t i = 0; i < words && n < max; i++) {
		uint64_t w;
		memcpy(&w, s->user_stack + 8 * i, 8);
		if (w)
			addrs[n++] = w - 1;
	}
	return (int)n;
}

static int on_sample(void *ctx, const struct pf_prof_sample *s)
{
	struct run *r = ctx;
	FUZZ_ASSERT(s->stack == PF_PROF_NONE || s->stack < r->p->n_stacks);
	FUZZ_ASSERT(s->comm == PF_PROF_NONE || s->comm < r->p->n_str);
	r->n++;
	return pf_prof_samples_add(&r->samples, s);
}

/* The builder over the file, then its tables through their sections. */
static void build(int fd, uint8_t opts)
{
	pf_reader *r;
	struct pf_prof p;
	pf_prof_init(&p);
	struct run run = { &p, { 0 }, 0 };
	pf_prof_builder *b = NULL;
	struct pf_prof_builder_opts o = { sizeof(o), resolve, NULL, on_sample, &run,
					  (opts & 0x40) ? unwind : NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	if (pf_prof_samples_begin(&run.samples) < 0 || pf_prof_builder_new(&b, &p, &o) < 0)
		goto out;
	if (pf_reader_open_fd(&r, fd, "fuzz") == 0) {
		struct pf_section s;
		while (tu_next_section(r, &s, 0)) {
			if (pf_prof_builder_section(b, &s) == -ENOMEM)
				break;
		}
		(void)pf_prof_builder_finish(b);
	}
	pf_reader_close(r);
	const struct pf_prof_stats *st = pf_prof_builder_stats(b);
	FUZZ_ASSERT(st->frames_resolved <= st->frames);
	for (uint32_t i = 0; i < p.n_stacks; i++)
		FUZZ_ASSERT(p.stacks[i].frame < p.n_frames &&
			    (p.stacks[i].parent == PF_PROF_NONE || p.stacks[i].parent < i));
	/* the tables in sections of at most 4 KiB, loaded back */
	struct pf_prof q;
	pf_prof_init(&q);
	struct pf_buf a = { 0 }, f = { 0 }, k = { 0 };
	int more;
	char msg[256];
	do {
		more = pf_prof_encode_tables(&p, &a, &f, &k, 4096);
		if (more < 0)
			break;
		struct pf_section s = { 0 };
		s.type = PF_SEC_STRINGS, s.data = a.data, s.size = a.len;
		if (a.len)
			FUZZ_ASSERT(pf_prof_load_section(&q, &s, msg, sizeof(msg)) == 0);
		s.type = PF_SEC_FRAMES, s.data = f.data, s.size = f.len;
		if (f.len)
			FUZZ_ASSERT(pf_prof_load_section(&q, &s, msg, sizeof(msg)) == 0);
		s.type = PF_SEC_STACKS, s.data = k.data, s.size = k.len;
		if (k.len)
			FUZZ_ASSERT(pf_prof_load_section(&q, &s, msg, sizeof(msg)) == 0);
	} while (more == 1);
	if (more == 0)
		FUZZ_ASSERT(q.n_str == p.n_str && q.n_frames == p.n_frames && q.n_stacks == p.n_stacks);
	size_t pos = 0;
	struct pf_prof_sample ps;
	uint64_t n = 0;
	while (pf_prof_samples_next(run.samples.data, run.samples.len, &pos, &ps) > 0)
		n++;
	FUZZ_ASSERT(n == run.n);
	pf_buf_free(&a);
	pf_buf_free(&f);
	pf_buf_free(&k);
	pf_prof_free(&q);
out:
	pf_prof_builder_free(b);
	pf_buf_free(&run.samples);
	pf_prof_free(&p);
}

static void fold(int fd, uint8_t opts)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct pf_fold_opts o = PF_FOLD_OPTS_INIT;
	o.weight = (opts & 2) ? PF_FOLD_PERIOD : PF_FOLD_SAMPLES;
	o.flags = ((opts & 4) ? PF_FOLD_PID : 0) | ((opts & 8) ? PF_FOLD_TID : 0) |
		  ((opts & 16) ? PF_FOLD_NO_COMM : 0) | PF_FOLD_KERNEL | PF_FOLD_DSO;
	if (opts & 32)
		o.event = "cpu-clock";
	if (opts & 128) {
		o.use_time = 1;
		o.time_start_ns = 1000;
		o.time_end_ns = 1000000000;
	}
	pf_fold *f = NULL;
	int rc = pf_fold_open(&f, path, &o);
	if (rc == 0) {
		uint64_t sum = 0, w;
		int sat = 0;
		for (size_t i = 0; i < pf_fold_count(f); i++) {
			const char *line = pf_fold_line(f, i, &w);
			fuzz_touch(line, strlen(line));
			sat |= w > UINT64_MAX / 2 || sum > UINT64_MAX / 2;
			sum += w;
		}
		if (!sat && !strstr(pf_fold_warnings(f), "capped"))
			FUZZ_ASSERT(sum == pf_fold_total(f));
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			FUZZ_ASSERT(pf_fold_write(f, null) == 0);
			close(null);
		}
		struct pf_fold_top top[8];
		size_t k = pf_fold_top_self(f, top, 8);
		for (size_t i = 0; i < k; i++)
			fuzz_touch(top[i].name, strlen(top[i].name));
		k = pf_fold_top_total(f, top, 8);
		for (size_t i = 0; i < k; i++)
			fuzz_touch(top[i].name, strlen(top[i].name));
	}
	if (f) {
		fuzz_touch(pf_fold_warnings(f), strlen(pf_fold_warnings(f)));
		fuzz_touch(pf_fold_damage(f), strlen(pf_fold_damage(f)));
		fuzz_touch(pf_fold_errmsg(f), strlen(pf_fold_errmsg(f)));
	}
	pf_fold_close(f);
}

static void build_and_fold(int fd, size_t n, uint8_t opts)
{
	(void)n;
	build(fd, opts);
	fold(fd, opts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run_image(data, size, build_and_fold);
}
