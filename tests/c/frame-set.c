/*
 * frame-set - pf_prof_frame_set() keeps the frame table's interning hash
 * right (profile.h): N frames interned (kernel addresses, as pfsym makes
 * them before a late KSYMS section), a pseudo-random half of them renamed
 * in place, then every frame looked up again by its content. A renamed
 * frame must be found under its new content with its own id, its old
 * content must be new (a new id); an unchanged one must be found as it
 * was. The hash starts at 1024 slots and is probed linearly, so with N
 * above a few hundred the renames remove entries from the middle of runs
 * of collisions. Also: a frame already encoded is refused (-EBUSY), an id
 * out of range too (-EINVAL). Usage: frame-set [N] (default 3000).
 * Prints "frame-set: N checks, M failures"; exit 1 on a failure. Issue 37.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "advanced.h"
#include "profile.h"
#include "testutil.h"

static int checks, fails;
#define CHECK(c)                                                                          \
	do {                                                                              \
		checks++;                                                                 \
		if (!(c)) {                                                               \
			fprintf(stderr, "frame-set: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			fails++;                                                          \
		}                                                                         \
	} while (0)

static struct pf_prof_frame kframe(uint64_t addr, uint32_t name)
{
	struct pf_prof_frame f = { name, PF_PROF_NONE, addr, addr, PF_FRAME_KERNEL | PF_FRAME_HAS_ADDR,
				   PF_PROF_NONE, 0, 0 };
	return f;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 3000;
	struct pf_prof p;
	pf_prof_init(&p);
	int64_t name = pf_prof_str(&p, "renamed", 7);
	CHECK(name >= 0);
	uint64_t rng = 20261207;
	uint8_t *renamed = calloc(n, 1);
	if (!renamed)
		tu_die("out of memory");
	for (uint32_t i = 0; i < n; i++) {
		struct pf_prof_frame f = kframe(0xffffffff81000000ull + 16 * (uint64_t)i, PF_PROF_NONE);
		CHECK(pf_prof_frame(&p, &f) == (int64_t)i);
	}
	/* in a random order, so that the removals hit runs everywhere */
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (uint32_t)(tu_xorshift(&rng) % n);
		if (renamed[i] || tu_xorshift(&rng) % 2)
			continue;
		struct pf_prof_frame f = kframe(0xffffffff81000000ull + 16 * (uint64_t)i, (uint32_t)name);
		f.sym_off = i;
		f.flags |= PF_FRAME_HAS_SYMOFF;
		CHECK(pf_prof_frame_set(&p, i, &f) == 0);
		renamed[i] = 1;
	}
	uint32_t count = pf_prof_n_frames(&p);
	CHECK(count == n);
	for (uint32_t i = 0; i < n; i++) {
		struct pf_prof_frame old = kframe(0xffffffff81000000ull + 16 * (uint64_t)i, PF_PROF_NONE);
		struct pf_prof_frame now = old;
		if (renamed[i]) {
			now.name = (uint32_t)name;
			now.sym_off = i;
			now.flags |= PF_FRAME_HAS_SYMOFF;
		}
		const struct pf_prof_frame *g = pf_prof_frame_get(&p, i);
		CHECK(g && g->name == now.name && g->sym_off == now.sym_off);
		CHECK(pf_prof_frame(&p, &now) == (int64_t)i);
		if (renamed[i]) /* the old content is gone: interned anew */
			CHECK(pf_prof_frame(&p, &old) == (int64_t)count++);
	}
	CHECK(pf_prof_n_frames(&p) == count);
	/* encoded frames are written once */
	struct pf_buf s = { 0 }, f = { 0 }, k = { 0 };
	while (pf_prof_encode_tables(&p, &s, &f, &k, 1u << 20) > 0)
		;
	struct pf_prof_frame x = kframe(1, PF_PROF_NONE);
	CHECK(pf_prof_frame_set(&p, 0, &x) == -EBUSY);
	CHECK(pf_prof_frame_set(&p, count, &x) == -EINVAL);
	pf_buf_free(&s);
	pf_buf_free(&f);
	pf_buf_free(&k);
	pf_prof_free(&p);
	free(renamed);
	printf("frame-set: %d checks, %d failures\n", checks, fails);
	return fails ? 1 : 0;
}
