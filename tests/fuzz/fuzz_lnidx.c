/*
 * fuzz_lnidx.c - pfsym's line index files (libpfsym/lnidx.c): the loader's
 * checks, and a store of what it accepted.
 *
 * The input is an index file. The target sets its magic, byte order,
 * payload size and hash to what the loader wants (lnidx.c's header: magic
 * at 0, order at 8, n_cus at 12, key at 16, n_ar at 32, strs_size at 40,
 * payload_size at 48, hash at 56; the hash is pfsi_dwc_hash2() of the first
 * 56 bytes and the payload), so that mutations reach the checks past the
 * checksum: those of forged files. A file the loader accepts must then hold
 * only what pfsym may use: every unit read back, each string ending inside
 * the file, each node's chain of parents ending, each segment naming a node.
 * Stored again (pfsi_lnidx_store) and loaded, it must give the same units.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>

#include "fuzz.h"
#include "internal/lines.h"

#define HDR 64

static char dirs[2][PATH_MAX];

/* Removes the two folders and the files in them (at exit). */
static void remove_dirs(void)
{
	for (int i = 0; i < 2; i++)
		fuzz_remove_dir(dirs[i]);
}

static int make_dirs(void)
{
	if (dirs[0][0])
		return 0;
	const char *t = getenv("TMPDIR");
	for (int i = 0; i < 2; i++) {
		snprintf(dirs[i], sizeof(dirs[i]), "%s/fuzz-lnidx-%d-XXXXXX", t && *t ? t : "/tmp", i);
		if (!mkdtemp(dirs[i])) {
			dirs[i][0] = 0;
			remove_dirs();
			return -1;
		}
	}
	atexit(remove_dirs);
	return 0;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Writes [b, b+n) as the index file of key in dir. @return 0 or -1. */
static int put_file(const char *dir, const uint64_t key[2], const uint8_t *b, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%016llx%016llx.lnidx", dir, (unsigned long long)key[1],
		 (unsigned long long)key[0]);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(b, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void touch_str(const char *s)
{
	if (s)
		fuzz_touch(s, strlen(s) + 1);
}

/* Checks unit c as pfsym uses it. */
static void check_cu(const struct ln_cu *c)
{
	touch_str(c->comp_dir);
	for (uint32_t k = 0; k < c->n_nodes; k++) {
		const struct ln_node *n = &c->nodes[k];
		touch_str(n->name);
		touch_str(n->linkage);
		touch_str(n->call_file);
		uint32_t steps = 0;
		for (uint32_t p = k; p != LN_NONE; p = c->nodes[p].parent) {
			FUZZ_ASSERT(p < c->n_nodes && steps <= c->n_nodes);
			steps++;
		}
	}
	for (size_t k = 0; k < c->n_segs; k++)
		FUZZ_ASSERT(c->segs[k].node < c->n_nodes && c->segs[k].lo < c->segs[k].hi);
	for (size_t k = 0; k < c->n_rows; k++)
		touch_str(c->rows[k].file);
}

static void same_cu(const struct ln_cu *a, const struct ln_cu *b)
{
	FUZZ_ASSERT(a->off == b->off && a->n_nodes == b->n_nodes && a->n_segs == b->n_segs &&
		    a->n_rows == b->n_rows && same_str(a->comp_dir, b->comp_dir));
	for (uint32_t k = 0; k < a->n_nodes; k++) {
		const struct ln_node *x = &a->nodes[k], *y = &b->nodes[k];
		FUZZ_ASSERT(same_str(x->name, y->name) && same_str(x->linkage, y->linkage) &&
			    same_str(x->call_file, y->call_file) && x->call_line == y->call_line &&
			    x->parent == y->parent);
	}
	for (size_t k = 0; k < a->n_segs; k++)
		FUZZ_ASSERT(a->segs[k].lo == b->segs[k].lo && a->segs[k].hi == b->segs[k].hi &&
			    a->segs[k].node == b->segs[k].node);
	for (size_t k = 0; k < a->n_rows; k++)
		FUZZ_ASSERT(a->rows[k].addr == b->rows[k].addr && same_str(a->rows[k].file, b->rows[k].file) &&
			    a->rows[k].line == b->rows[k].line && a->rows[k].end == b->rows[k].end);
}

static void cu_release(struct ln_cu *c)
{
	free(c->nodes);
	free(c->segs);
	free(c->rows);
	free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR || size > (1u << 20) || make_dirs() < 0)
		return 0;
	uint8_t *b = malloc(size);
	if (!b)
		return 0;
	memcpy(b, data, size);
	memcpy(b, "PFLNIDX1", 8);
	uint32_t order = 0x01020304u;
	memcpy(b + 8, &order, 4);
	put64(b + 48, size - HDR);
	put64(b + 56, pfsi_dwc_hash2(b, 56, b + HDR, size - HDR));
	uint64_t key[2] = { get64(b + 16), get64(b + 24) };
	int wrote = put_file(dirs[0], key, b, size);
	free(b);
	if (wrote < 0)
		return 0;
	struct pfsi_lnidx *x = pfsi_lnidx_load(dirs[0], key);
	if (!x)
		return 0;
	size_t n_ar, n_cus = pfsi_lnidx_n_cus(x);
	const struct ln_ar *ar = pfsi_lnidx_aranges(x, &n_ar);
	if (n_ar)
		fuzz_touch(ar, n_ar * sizeof(*ar));
	struct ln_cu **cus = calloc(n_cus ? n_cus : 1, sizeof(*cus));
	size_t got = 0;
	for (; cus && got < n_cus; got++) {
		FUZZ_ASSERT(!got || pfsi_lnidx_cu_off(x, got) > pfsi_lnidx_cu_off(x, got - 1));
		if (!(cus[got] = calloc(1, sizeof(**cus))) || pfsi_lnidx_cu(x, got, cus[got]) < 0) {
			free(cus[got]);
			break;
		}
		check_cu(cus[got]);
	}
	/* what was accepted, stored again and loaded: the same units */
	if (cus && got == n_cus && pfsi_lnidx_store(dirs[1], key, ar, n_ar, cus, n_cus) == 0) {
		struct pfsi_lnidx *y = pfsi_lnidx_load(dirs[1], key);
		FUZZ_ASSERT(y && pfsi_lnidx_n_cus(y) == n_cus);
		size_t n_ar2;
		const struct ln_ar *ar2 = pfsi_lnidx_aranges(y, &n_ar2);
		FUZZ_ASSERT(n_ar2 == n_ar && (!n_ar || memcmp(ar, ar2, n_ar * sizeof(*ar)) == 0));
		for (size_t i = 0; i < n_cus; i++) {
			struct ln_cu c2;
			if (pfsi_lnidx_cu(y, i, &c2) < 0)
				break;
			same_cu(cus[i], &c2);
			free(c2.nodes);
			free(c2.segs);
			free(c2.rows);
		}
		pfsi_lnidx_free(y);
	}
	for (size_t i = 0; cus && i < got; i++)
		cu_release(cus[i]);
	free(cus);
	pfsi_lnidx_free(x);
	return 0;
}
