/*
 * pfflame - draw folded stacks as a self-contained interactive SVG flame
 * graph (or icicle graph; differential when lines carry two counts).
 *
 * Stacks are merged into a tree: node ids index one array, and a single
 * open-addressing hash table maps (parent node, interned frame name) to the
 * child. Children are drawn sorted by name, so the output depends only on
 * the multiset of input stacks: the same input gives the same bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <pfile/pfile.h>

#include "cli.h"
#include "folded.h"
#include "grow.h"
#include "pfflame.h"
#include "text.h"

#define XPAD 10.0
#define FONT 12.0
#define CHARW (FONT * 0.59) /* average glyph width estimate, pixels */
#define ROOT_NAME "all"
/* the lost samples' line of pffold and pfdiff --folded */
#define LOST_NAME "[lost]"

enum palette { PAL_HOT, PAL_MEM, PAL_IO, PAL_MODULE };

struct node {
	uint32_t parent, name;
	uint32_t first_child, next_sibling; /* UINT32_MAX = none */
	uint64_t c[2];                      /* BASE/NEW counts (c[0] only when not diff) */
};

struct nloc {
	uint32_t node, loc;
	uint64_t c[2];
};

#define MAX_LOCS 8 /* source lines listed in a tooltip */

struct flame {
	/* options */
	const char *title, *countname;
	char note[600];   /* "# pffold-input": the .pf folded was not whole */
	double width, fheight, minwidth;
	int minwidth_pct;
	enum palette pal;
	int inverted, reverse, negate;
	/* data */
	struct pf_strtab names;
	struct node *nodes;
	size_t nnodes, cap;
	uint32_t *slots; /* node id + 1 */
	size_t nslots;
	int ncounts;     /* 0 until the first line, then 1 or 2 */
	const char **fr;
	size_t *frl;
	size_t frcap;
	const char *path;
	int failed;
	char *shown;     /* display_name()'s buffer */
	size_t shown_cap;
	/* source lines (" [FILE:LINE]" of pffold --srcline): frames that differ
	 * only by it are one node; each node's counts per line are kept here */
	struct pf_strtab locs;  /* "FILE:LINE" as written */
	struct nloc *nl;        /* (node, loc) entries */
	size_t n_nl, nl_cap;
	uint32_t *nl_slots;     /* entry index + 1 */
	size_t nl_nslots;
	char *strip;            /* a frame without its source line */
	size_t strip_cap;
	size_t max_depth;   /* frames drawn per stack, 0 = all */
	uint64_t n_capped;  /* stacks deeper than that */
	size_t deepest;     /* frames of the deepest stack */
};

#define DEFAULT_MAX_DEPTH 1024
#define CAPPED_NAME "[deeper frames not drawn]"
#define EMPTY_NAME "[empty]" /* an empty frame name ("a;;b") as shown */

static void usage(FILE *f)
{
	fputs("Usage: pfflame [OPTIONS] [FOLDED|-] > out.svg\n"
	      "Draw folded stacks ('frame;frame;... COUNT') as an interactive SVG flame graph.\n"
	      "Lines with two counts ('stack BASE NEW', from pfdiff --folded; the first line\n"
	      "decides for all) give a differential graph: widths from NEW, red where a frame\n"
	      "grew, blue where it shrank. Names show pffold's escapes \\x3b and \\x5c as ';'\n"
	      "and '\\'; other backslashes as written. A frame's source line ' [FILE:LINE]'\n"
	      "(pffold --srcline) is not part of its name: its box lists the lines.\n"
	      "\n"
	      "Options:\n"
	      "  -t, --title=TEXT       title (default \"Flame Graph\")\n"
	      "  -w, --width=PX         image width in pixels (default 1200)\n"
	      "  -H, --height=PX        frame height in pixels (default 16)\n"
	      "  -m, --minwidth=PX|P%   omit frames narrower than PX pixels or P% of the\n"
	      "                         total (default 0.1)\n"
	      "  -c, --colors=PALETTE   hot (default), mem, io, or module\n"
	      "  -i, --inverted         icicle graph: root at the top, growing down\n"
	      "  -r, --reverse          reverse every stack (leaf first) before merging\n"
	      "  -n, --countname=WORD   what a count is (default \"samples\")\n"
	      "  -d, --max-depth=N      draw at most N frames of a stack (default 1024; 0: all);\n"
	      "                         deeper frames merge into one '[deeper frames not\n"
	      "                         drawn]' frame, and a warning counts such stacks\n"
	      "      --negate           differential: widths from BASE instead of NEW\n"
	      "  -o, --output=FILE      write to FILE instead of standard output\n"
	      "  -h, --help             show this help and exit\n"
	      "  -V, --version          show the version and exit\n",
	      f);
}

/* ------------------------------------------------------------ the tree */

/* The tree's two indexes, open-addressed: the nodes by (parent, name) and the
 * source-line entries by (node, loc), each pair one 64-bit key; a slot holds
 * an entry's index + 1, 0 when empty. */
static uint64_t pair_key(uint32_t a, uint32_t b)
{
	return ((uint64_t)a << 32) | b;
}

static uint64_t key_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	k *= UINT64_C(0xc4ceb9fe1a85ec53);
	k ^= k >> 33;
	return k;
}

/* The key of entry i of an index. */
typedef uint64_t key_fn(const struct flame *fl, size_t i);

static uint64_t node_key(const struct flame *fl, size_t i)
{
	return pair_key(fl->nodes[i].parent, fl->nodes[i].name);
}

static uint64_t nl_key(const struct flame *fl, size_t i)
{
	return pair_key(fl->nl[i].node, fl->nl[i].loc);
}

/* The slot of key k in the index slots[nslots]: the one that holds the
 * entry of that key, else the empty one where it goes. */
static size_t find_slot(const struct flame *fl, const uint32_t *slots, size_t nslots, uint64_t k, key_fn *key)
{
	size_t mask = nslots - 1, h = key_hash(k) & mask;
	while (slots[h] && key(fl, slots[h] - 1) != k)
		h = (h + 1) & mask;
	return h;
}

/* Doubles the index *slots of *nslots slots (`first` when none yet) and
 * puts entries [from, to) back in. */
static int rehash(const struct flame *fl, uint32_t **slots, size_t *nslots, size_t first, size_t from, size_t to,
		  key_fn *key)
{
	size_t n = *nslots ? *nslots * 2 : first;
	uint32_t *s = calloc(n, sizeof *s);
	if (!s)
		return -ENOMEM;
	for (size_t i = from; i < to; i++)
		s[find_slot(fl, s, n, key(fl, i), key)] = (uint32_t)i + 1;
	free(*slots);
	*slots = s;
	*nslots = n;
	return 0;
}

static int new_node(struct flame *fl, uint32_t parent, uint32_t name, uint32_t *id)
{
	int rc = pft_grow_max((void **)&fl->nodes, &fl->cap, fl->nnodes + 1, sizeof *fl->nodes, 4096, UINT32_MAX - 1);
	if (rc < 0)
		return rc;
	struct node *n = &fl->nodes[fl->nnodes];
	n->parent = parent;
	n->name = name;
	n->first_child = UINT32_MAX;
	n->next_sibling = UINT32_MAX;
	n->c[0] = n->c[1] = 0;
	if (parent != UINT32_MAX) {
		n->next_sibling = fl->nodes[parent].first_child;
		fl->nodes[parent].first_child = (uint32_t)fl->nnodes;
	}
	*id = (uint32_t)fl->nnodes++;
	return 0;
}

static int grow_slots(struct flame *fl)
{
	/* node 0, the root, is not hashed */
	return rehash(fl, &fl->slots, &fl->nslots, 65536, 1, fl->nnodes, node_key);
}

static int child(struct flame *fl, uint32_t parent, uint32_t name, uint32_t *id)
{
	if (fl->nnodes * 2 >= fl->nslots && grow_slots(fl) < 0)
		return -ENOMEM;
	size_t h = find_slot(fl, fl->slots, fl->nslots, pair_key(parent, name), node_key);
	if (fl->slots[h]) {
		*id = fl->slots[h] - 1;
		return 0;
	}
	int rc = new_node(fl, parent, name, id);
	if (rc < 0)
		return rc;
	fl->slots[h] = *id + 1;
	return 0;
}

/* Adds counts to the source line loc of node. */
static int nl_add(struct flame *fl, uint32_t node, uint32_t loc, const uint64_t c[2])
{
	if ((fl->n_nl + 1) * 2 >= fl->nl_nslots &&
	    rehash(fl, &fl->nl_slots, &fl->nl_nslots, 4096, 0, fl->n_nl, nl_key) < 0)
		return -ENOMEM;
	size_t h = find_slot(fl, fl->nl_slots, fl->nl_nslots, pair_key(node, loc), nl_key);
	if (fl->nl_slots[h]) {
		struct nloc *e = &fl->nl[fl->nl_slots[h] - 1];
		e->c[0] += c[0];
		e->c[1] += c[1];
		return 0;
	}
	int rc = pft_grow_max((void **)&fl->nl, &fl->nl_cap, fl->n_nl + 1, sizeof *fl->nl, 1024, UINT32_MAX - 1);
	if (rc < 0)
		return rc;
	fl->nl[fl->n_nl] = (struct nloc){ node, loc, { c[0], c[1] } };
	fl->nl_slots[h] = (uint32_t)++fl->n_nl;
	return 0;
}

/* The name of frame f[0..n) that frames merge by: without its source line
 * (*loc and *loc_len get "FILE:LINE", or NULL). */
static const char *merge_name(struct flame *fl, const char *f, size_t n, size_t *out_len,
			      const char **loc, size_t *loc_len)
{
	size_t at, end, file_len;
	const char *file;
	uint32_t line;
	*loc = NULL;
	*loc_len = 0;
	*out_len = n;
	if (!memchr(f, '[', n) || !pf_frame_srcline(f, n, &at, &end, &file, &file_len, &line))
		return f;
	if (n > fl->strip_cap) {
		char *b = realloc(fl->strip, n);
		if (!b)
			return NULL;
		fl->strip = b;
		fl->strip_cap = n;
	}
	memcpy(fl->strip, f, at);
	memcpy(fl->strip + at, f + end, n - end);
	*out_len = at + (n - end);
	*loc = f + at + 2;
	*loc_len = end - 1 - (at + 2);
	return fl->strip;
}

static int add_line(void *arg, const struct pf_folded_line *l, uint64_t lineno)
{
	struct flame *fl = arg;
	(void)lineno;
	if (fl->ncounts == 0) /* pf_folded_read() keeps every line to the first's kind */
		fl->ncounts = l->ncounts;
	size_t n = 0, pos = 0, flen;
	const char *f;
	while (pf_folded_next_frame(l->stack, l->stack_len, &pos, &f, &flen)) {
		size_t frcap = fl->frcap; /* fr and frl: one capacity */
		if (pft_grow((void **)&fl->fr, &frcap, n + 1, sizeof *fl->fr, 256) < 0 ||
		    pft_grow((void **)&fl->frl, &fl->frcap, n + 1, sizeof *fl->frl, 256) < 0)
			goto oom;
		fl->fr[n] = f;
		fl->frl[n] = flen;
		n++;
	}
	uint32_t cur = 0;
	fl->nodes[0].c[0] += l->counts[0];
	fl->nodes[0].c[1] += l->counts[1];
	/* a stack deeper than --max-depth: its first max_depth - 1 frames
	 * (from the root, or from the leaf with --reverse), then one frame
	 * for the rest, so that its count stays in the graph */
	size_t draw_n = n;
	if (n > fl->deepest)
		fl->deepest = n;
	if (fl->max_depth && n > fl->max_depth) {
		draw_n = fl->max_depth;
		fl->n_capped++;
	}
	for (size_t i = 0; i < draw_n; i++) {
		size_t k = fl->reverse ? n - 1 - i : i;
		int capped = draw_n < n && i == draw_n - 1;
		const char *loc = NULL, *mn;
		size_t loc_len = 0, mlen;
		int64_t name;
		if (capped) {
			name = pf_strtab_intern(&fl->names, CAPPED_NAME, sizeof(CAPPED_NAME) - 1, NULL);
		} else {
			mn = merge_name(fl, fl->fr[k], fl->frl[k], &mlen, &loc, &loc_len);
			name = mn ? pf_strtab_intern(&fl->names, mn, mlen, NULL) : -ENOMEM;
		}
		if (name < 0)
			goto oom;
		if (child(fl, cur, (uint32_t)name, &cur) < 0)
			goto oom;
		fl->nodes[cur].c[0] += l->counts[0];
		fl->nodes[cur].c[1] += l->counts[1];
		if (loc) {
			int64_t li = pf_strtab_intern(&fl->locs, loc, loc_len, NULL);
			if (li < 0 || nl_add(fl, cur, (uint32_t)li, l->counts) < 0)
				goto oom;
		}
	}
	return 0;
oom:
	fprintf(stderr, "pfflame: %s: %s\n", fl->path, strerror(ENOMEM));
	return 1;
}

/* ------------------------------------------------------------ drawing */

static uint32_t *name_rank;

static const struct pf_strtab *rank_names;

static int cmp_name_ids(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const char *s = pf_strtab_str(rank_names, x), *t = pf_strtab_str(rank_names, y);
	return strcmp(s, t);
}

static const struct node *sort_nodes;

static int cmp_children(const void *a, const void *b)
{
	uint32_t x = sort_nodes[*(const uint32_t *)a].name, y = sort_nodes[*(const uint32_t *)b].name;
	return name_rank[x] < name_rank[y] ? -1 : name_rank[x] > name_rank[y];
}

/* Number of UTF-8 characters in s[0..n); *cut receives the byte length of
 * the first `keep` characters. */
static size_t utf8_chars(const char *s, size_t n, size_t keep, size_t *cut)
{
	size_t chars = 0;
	*cut = n;
	for (size_t i = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (chars == keep)
				*cut = i;
			chars++;
		}
	}
	return chars;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A frame name as shown: the escapes \x3b and \x5c that pffold writes for ';'
 * and '\' (folded text has no other way to hold a ';' in a name) become the
 * character, in one pass from the left, so "\x5cx3b" is the four characters
 * "\x3b". Every other byte is kept as it is: the escapes of control
 * characters (\x0a, pffold writes them for bytes that no label can show) and
 * any other backslash, such as one in a name from a tool that escapes
 * nothing (flamegraph.pl's stackcollapse scripts): such names show as
 * flamegraph.pl shows them. Only what is shown changes: frames merge and
 * sort by their text as read. */
static const char *display_text(struct flame *fl, const char *s, size_t n, size_t *out_len, int brackets);

static const char *display_name(struct flame *fl, const char *s, size_t n, size_t *out_len)
{
	return display_text(fl, s, n, out_len, 0);
}

/* As display_name(), and with brackets also \x5b and \x5d as '[' and ']'
 * (the file of a source line, where pffold escapes them). */
static const char *display_text(struct flame *fl, const char *s, size_t n, size_t *out_len, int brackets)
{
	if (n == 0) { /* a frame with no name is drawn, and says so */
		*out_len = sizeof(EMPTY_NAME) - 1;
		return EMPTY_NAME;
	}
	if (!memchr(s, '\\', n)) {
		*out_len = n;
		return s;
	}
	if (n > fl->shown_cap) {
		char *b = realloc(fl->shown, n);
		if (!b) { /* shown as read rather than not at all */
			*out_len = n;
			return s;
		}
		fl->shown = b;
		fl->shown_cap = n;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && hexval(s[i + 2]) >= 0 && hexval(s[i + 3]) >= 0) {
			int c = hexval(s[i + 2]) * 16 + hexval(s[i + 3]);
			if (c == ';' || c == '\\' || (brackets && (c == '[' || c == ']'))) {
				fl->shown[k++] = (char)c;
				i += 3;
				continue;
			}
		}
		fl->shown[k++] = s[i];
	}
	*out_len = k;
	return fl->shown;
}

static void write_label(FILE *out, const char *name, size_t n, double wpx)
{
	double fit = floor((wpx - 6) / CHARW);
	if (fit < 3)
		return;
	size_t cut;
	size_t chars = utf8_chars(name, n, fit > 1e9 ? SIZE_MAX : (size_t)fit - 2, &cut);
	if ((double)chars <= fit) {
		pf_xml_write(out, name, n);
		return;
	}
	pf_xml_write(out, name, cut);
	fputs("..", out);
}

static void hash3(const char *s, size_t n, double v[3])
{
	uint64_t h = XXH3_64bits(s, n);
	for (int i = 0; i < 3; i++)
		v[i] = (double)((h >> (i * 20)) & 0xfffff) / (double)0x100000;
}

static void color(const struct flame *fl, const char *name, size_t n, int rgb[3])
{
	double v[3];
	switch (fl->pal) {
	case PAL_HOT:
		hash3(name, n, v);
		rgb[0] = 205 + (int)(50 * v[2]);
		rgb[1] = (int)(230 * v[0]);
		rgb[2] = (int)(55 * v[1]);
		return;
	case PAL_MEM:
		hash3(name, n, v);
		rgb[0] = 0;
		rgb[1] = 190 + (int)(50 * v[1]);
		rgb[2] = (int)(210 * v[0]);
		return;
	case PAL_IO:
		hash3(name, n, v);
		rgb[0] = 80 + (int)(60 * v[0]);
		rgb[1] = rgb[0];
		rgb[2] = 190 + (int)(55 * v[1]);
		return;
	case PAL_MODULE: {
		const char *func, *mod;
		size_t flen, mlen;
		pf_frame_split(name, n, &func, &flen, &mod, &mlen);
		if (!mod && n > 4 && memcmp(name + n - 4, "_[k]", 4) == 0) {
			mod = "[kernel]";
			mlen = 8;
		}
		if (!mod) {
			rgb[0] = rgb[1] = rgb[2] = 190;
			return;
		}
		hash3(mod, mlen, v);
		rgb[0] = 90 + (int)(150 * v[0]);
		rgb[1] = 90 + (int)(150 * v[1]);
		rgb[2] = 90 + (int)(150 * v[2]);
		return;
	}
	}
}

static const struct flame *sort_fl;
static int sort_wi;

/* source-line entries: by node, then count (decreasing), then text */
static int cmp_nloc(const void *a, const void *b)
{
	const struct nloc *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->c[sort_wi] != y->c[sort_wi])
		return x->c[sort_wi] > y->c[sort_wi] ? -1 : 1;
	return strcmp(pf_strtab_str(&sort_fl->locs, x->loc), pf_strtab_str(&sort_fl->locs, y->loc));
}

/* The index of node's first source-line entry (entries sorted), or n_nl. */
static size_t nl_first(const struct flame *fl, uint32_t node)
{
	size_t lo = 0, hi = fl->n_nl;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fl->nl[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void write_share(FILE *out, const struct flame *fl, uint64_t c, uint64_t of)
{
	fprintf(out, " (%llu ", (unsigned long long)c);
	pf_xml_write(out, fl->countname, strlen(fl->countname));
	fprintf(out, ", %.2f%%)", of ? 100.0 * (double)c / (double)of : 0.0);
}

/* The source lines of a node in its tooltip, one a line after its details:
 * "FILE:LINE (N samples, P%)" with P of the node's count, the most frequent
 * first, at most MAX_LOCS, then the rest and the count without a line. */
static void write_locs(struct flame *fl, FILE *out, uint32_t node, uint64_t w, int wi)
{
	size_t i = nl_first(fl, node), shown = 0;
	uint64_t sum = 0, rest = 0;
	size_t n_rest = 0;
	for (; i < fl->n_nl && fl->nl[i].node == node; i++) {
		uint64_t c = fl->nl[i].c[wi];
		sum += c;
		if (shown == MAX_LOCS) {
			rest += c;
			n_rest++;
			continue;
		}
		size_t dl;
		const char *d = display_text(fl, pf_strtab_str(&fl->locs, fl->nl[i].loc),
					     pf_strtab_len(&fl->locs, fl->nl[i].loc), &dl, 1);
		fputc('\n', out);
		pf_xml_write(out, d, dl);
		write_share(out, fl, c, w);
		shown++;
	}
	if (!shown)
		return;
	if (n_rest) {
		fprintf(out, "\n%zu more line%s", n_rest, n_rest > 1 ? "s" : "");
		write_share(out, fl, rest, w);
	}
	if (sum < w) {
		fputs("\nno line", out);
		write_share(out, fl, w - sum, w);
	}
}

struct item {
	uint32_t node, depth;
	uint64_t x; /* start, in counts */
};

/* What every frame of one drawing needs: the scale, the cut-off, and for
 * a differential graph the totals of both sides. */
struct geom {
	int diff, wi;          /* two counts per stack; which gives the width */
	uint64_t total;        /* the root's width count */
	double scale;          /* pixels per count */
	double mincount;       /* narrower frames are not drawn */
	double tot0, tot1;     /* the samples seen (base, new): the root's counts less [lost] */
	double lost0, lost1;   /* the [lost] line's counts */
	uint32_t lost_node;    /* its node, UINT32_MAX: none */
	double maxdelta;       /* the largest |share change| of a drawn frame */
	double height, ypad1, ypad2;
};

/* Ranks the names for sorting children by name (name_rank) and sorts the
 * source lines of the tooltips. @return 0, or -ENOMEM. */
static int rank_for_sort(struct flame *fl, int wi)
{
	uint32_t nn = fl->names.count;
	uint32_t *ids = malloc((nn ? nn : 1) * sizeof *ids);
	name_rank = malloc((nn ? nn : 1) * sizeof *name_rank);
	if (!ids || !name_rank) {
		free(ids);
		free(name_rank);
		name_rank = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nn; i++)
		ids[i] = i;
	rank_names = &fl->names;
	qsort(ids, nn, sizeof *ids, cmp_name_ids);
	for (uint32_t i = 0; i < nn; i++)
		name_rank[ids[i]] = i;
	free(ids);
	sort_nodes = fl->nodes;
	sort_fl = fl;
	sort_wi = wi;
	if (fl->n_nl)
		qsort(fl->nl, fl->n_nl, sizeof *fl->nl, cmp_nloc);
	return 0;
}

/* The shares of node `node` in a differential graph, base and new: of the
 * samples seen (the root's are those, less the [lost] line); the [lost]
 * line's, of all samples, as pfdiff's table shows it. */
static void diff_shares(const struct flame *fl, const struct geom *g, uint32_t node, double *s0, double *s1)
{
	const struct node *n = &fl->nodes[node];
	double c0 = (double)n->c[0], c1 = (double)n->c[1], t0 = g->tot0, t1 = g->tot1;
	if (node == 0) {
		c0 -= g->lost0;
		c1 -= g->lost1;
	} else if (node == g->lost_node) {
		t0 += g->lost0;
		t1 += g->lost1;
	}
	*s0 = t0 > 0 ? c0 / t0 : 0;
	*s1 = t1 > 0 ? c1 / t1 : 0;
}

/* Pass 1: sorts the children of drawn frames by name, and finds the
 * depth and g->maxdelta. stack and kids hold fl->nnodes items.
 * @return the depth of the deepest drawn frame. */
static uint32_t layout(struct flame *fl, struct geom *g, struct item *stack, uint32_t *kids)
{
	struct node *nodes = fl->nodes;
	uint32_t maxdepth = 0;
	size_t sp = 0;
	stack[sp++] = (struct item){ 0, 0, 0 };
	while (sp) {
		struct item it = stack[--sp];
		struct node *n = &nodes[it.node];
		if ((double)n->c[g->wi] < g->mincount || n->c[g->wi] == 0)
			continue;
		if (it.depth > maxdepth)
			maxdepth = it.depth;
		if (g->diff) {
			double s0, s1;
			diff_shares(fl, g, it.node, &s0, &s1);
			if (fabs(s1 - s0) > g->maxdelta)
				g->maxdelta = fabs(s1 - s0);
		}
		size_t k = 0;
		for (uint32_t c = n->first_child; c != UINT32_MAX; c = nodes[c].next_sibling)
			kids[k++] = c;
		qsort(kids, k, sizeof *kids, cmp_children);
		n->first_child = k ? kids[0] : UINT32_MAX;
		for (size_t i = 0; i < k; i++) {
			nodes[kids[i]].next_sibling = i + 1 < k ? kids[i + 1] : UINT32_MAX;
			stack[sp++] = (struct item){ kids[i], it.depth + 1, 0 };
		}
	}
	return maxdepth;
}

/* The SVG up to the first frame: the header, style, script, background,
 * title and the text fields of the script. */
static void write_head(const struct flame *fl, const struct geom *g, FILE *out)
{
	const char *title = fl->title ? fl->title :
			    g->diff ? "Differential Flame Graph" :
			    fl->inverted ? "Icicle Graph" : "Flame Graph";
	double height = g->height;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\" "
		"xmlns:fg=\"urn:pftools:flame\">\n",
		fl->width, height, fl->width, height);
	fprintf(out, "<!-- drawn by pfflame (pftools) %s -->\n", pf_version());
	fputs("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	      "</linearGradient></defs>\n", out);
	fprintf(out, "<style type=\"text/css\">\n%s</style>\n", pfflame_css);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var W = %.0f, XPAD = %.0f, CW = %.4f, INV = %s, TOTAL = %llu, CNAME = \"",
		fl->width, XPAD, CHARW, fl->inverted ? "true" : "false", (unsigned long long)g->total);
	for (const char *p = fl->countname; *p; p++) /* a JS string inside CDATA */
		if (*p != '"' && *p != '\\' && *p != ']' && (unsigned char)*p >= 0x20)
			putc(*p, out);
	fprintf(out, "\";\n%s]]></script>\n", pfflame_js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#background)\"/>\n",
		fl->width, height);
	fprintf(out, "<text id=\"title\" x=\"%.2f\" y=\"%.0f\">", fl->width / 2, FONT * 2);
	pf_xml_write(out, title, strlen(title));
	fputs("</text>\n", out);
	if (fl->note[0]) {
		/* the counts are those of part of a recording: say so where
		 * the graph is looked at */
		fprintf(out, "<text id=\"subtitle\" x=\"%.2f\" y=\"%.0f\">input not whole: ", fl->width / 2,
			FONT * 3.5);
		pf_xml_write(out, fl->note, strlen(fl->note));
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\" font-size=\"%.0f\"> </text>\n", XPAD,
		height - g->ypad2 / 2, FONT);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%.0f\" y=\"%.0f\" font-size=\"%.0f\">Reset Zoom</text>\n",
		XPAD, FONT * 2, FONT);
	fprintf(out, "<text id=\"search\" x=\"%.0f\" y=\"%.0f\" font-size=\"%.0f\" text-anchor=\"end\">Search</text>\n",
		fl->width - XPAD, FONT * 2, FONT);
	fprintf(out, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" font-size=\"%.0f\" text-anchor=\"end\"> </text>\n",
		fl->width - XPAD, g->height - g->ypad2 / 2, FONT);
}

/* The tooltip's counts of a differential frame (after its name), and its
 * colour: red for a share that grew, blue for one that shrank, the
 * stronger the larger the change against g->maxdelta. */
static void write_diff_counts(const struct flame *fl, const struct geom *g, uint32_t node, FILE *out, int rgb[3])
{
	uint64_t w = fl->nodes[node].c[g->wi];
	double s0, s1;
	diff_shares(fl, g, node, &s0, &s1);
	double d = s1 - s0;
	fprintf(out, " (%llu ", (unsigned long long)w);
	pf_xml_write(out, fl->countname, strlen(fl->countname));
	fprintf(out, ", %.2f%%; base %.2f%%, new %.2f%%, %+.2f pp)",
		100.0 * (double)w / (double)g->total, 100 * s0, 100 * s1, 100 * d);
	double t = g->maxdelta > 0 ? fabs(d) / g->maxdelta : 0;
	int strong = 235 + (int)lround(20 * t), weak = 235 - (int)lround(205 * t);
	if (d > 0) {
		rgb[0] = strong;
		rgb[1] = rgb[2] = weak;
	} else if (d < 0) {
		rgb[0] = rgb[1] = weak;
		rgb[2] = strong;
	} else {
		rgb[0] = rgb[1] = rgb[2] = 235;
	}
}

/* One frame: <g> with its tooltip, rectangle and label. */
static void write_frame(struct flame *fl, const struct geom *g, const struct item *it, FILE *out)
{
	const struct node *n = &fl->nodes[it->node];
	uint64_t w = n->c[g->wi];
	const char *name = it->node == 0 ? ROOT_NAME : pf_strtab_str(&fl->names, n->name);
	size_t nlen = it->node == 0 ? strlen(ROOT_NAME) : pf_strtab_len(&fl->names, n->name);
	double x = XPAD + (double)it->x * g->scale, wpx = (double)w * g->scale;
	double y = fl->inverted ? g->ypad1 + it->depth * fl->fheight :
			g->height - g->ypad2 - (it->depth + 1) * fl->fheight;
	int rgb[3] = { 190, 190, 190 };
	size_t slen;
	const char *shown = display_name(fl, name, nlen, &slen);
	fputs("<g><title>", out);
	pf_xml_write(out, shown, slen);
	if (g->diff) {
		write_diff_counts(fl, g, it->node, out, rgb);
	} else {
		fputs(" (", out);
		fprintf(out, "%llu ", (unsigned long long)w);
		pf_xml_write(out, fl->countname, strlen(fl->countname));
		fprintf(out, ", %.2f%%)", 100.0 * (double)w / (double)g->total);
		color(fl, name, nlen, rgb);
	}
	if (fl->n_nl && it->node != 0)
		write_locs(fl, out, it->node, w, g->wi);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\" fg:x=\"%llu\" fg:w=\"%llu\"/>"
		"<text x=\"%.2f\" y=\"%.1f\">",
		x, y, wpx, fl->fheight - 1, rgb[0], rgb[1], rgb[2], (unsigned long long)it->x,
		(unsigned long long)w, x + 3, y + fl->fheight / 2 + FONT * 0.35);
	write_label(out, shown, slen, wpx);
	fputs("</text></g>\n", out);
}

static int draw(struct flame *fl, FILE *out)
{
	struct geom g = { .diff = fl->ncounts == 2 };
	g.wi = g.diff && !fl->negate ? 1 : 0;
	struct node *nodes = fl->nodes;
	g.total = nodes[0].c[g.wi];
	if (g.total == 0) {
		/* a differential input whose drawn column is empty: the other
		 * one can be drawn */
		if (g.diff && nodes[0].c[!g.wi])
			fprintf(stderr, "pfflame: %s: no samples in %s, which gives the widths: %s\n", fl->path,
				g.wi ? "NEW" : "BASE",
				g.wi ? "--negate takes BASE's" : "without --negate the widths are NEW's");
		else
			fprintf(stderr, "pfflame: %s: no samples\n", fl->path);
		return -1;
	}
	g.scale = (fl->width - 2 * XPAD) / (double)g.total;
	g.mincount = fl->minwidth_pct ? fl->minwidth / 100.0 * (double)g.total : fl->minwidth / g.scale;
	/* shares are of the samples seen, as pfdiff's: a [lost] line
	 * (pffold's, pfdiff --folded's) is not in what they divide */
	g.lost_node = UINT32_MAX;
	for (uint32_t k = nodes[0].first_child; g.diff && k != UINT32_MAX; k = nodes[k].next_sibling)
		if (strcmp(pf_strtab_str(&fl->names, nodes[k].name), LOST_NAME) == 0) {
			g.lost_node = k;
			g.lost0 = (double)nodes[k].c[0];
			g.lost1 = (double)nodes[k].c[1];
		}
	g.tot0 = (double)nodes[0].c[0] - g.lost0;
	g.tot1 = (double)nodes[0].c[1] - g.lost1;

	struct item *stack = malloc(fl->nnodes * sizeof *stack);
	uint32_t *kids = malloc(fl->nnodes * sizeof *kids);
	if (!stack || !kids || rank_for_sort(fl, g.wi) < 0) {
		free(stack);
		free(kids);
		fprintf(stderr, "pfflame: %s\n", strerror(ENOMEM));
		return -1;
	}
	uint32_t maxdepth = layout(fl, &g, stack, kids);
	g.ypad1 = FONT * (fl->note[0] ? 4.5 : 3);
	g.ypad2 = FONT * 2 + 10;
	g.height = (maxdepth + 1) * fl->fheight + g.ypad1 + g.ypad2;
	write_head(fl, &g, out);

	/* pass 2: frames in pre-order, children by name */
	size_t sp = 0;
	stack[sp++] = (struct item){ 0, 0, 0 };
	while (sp && !ferror(out)) { /* a failed output (`| head`): stop drawing */
		struct item it = stack[--sp];
		const struct node *n = &nodes[it.node];
		uint64_t w = n->c[g.wi];
		if ((double)w < g.mincount || w == 0)
			continue;
		write_frame(fl, &g, &it, out);
		/* push children in reverse so that they come out in name order */
		size_t k = 0;
		uint64_t off = it.x;
		for (uint32_t c = n->first_child; c != UINT32_MAX; c = nodes[c].next_sibling)
			kids[k++] = c;
		/* offsets accumulate forward; items are stored backward */
		for (size_t i = 0; i < k; i++) {
			stack[sp + k - 1 - i] = (struct item){ kids[i], it.depth + 1, off };
			off += nodes[kids[i]].c[g.wi];
		}
		sp += k;
	}
	fputs("</svg>\n", out);
	free(stack);
	free(kids);
	free(name_rank);
	name_rank = NULL;
	return 0;
}

static int parse_pos(const char *s, double *v, int *pct)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	if (pct) {
		*pct = 0;
		if (end != s && *end == '%') {
			*pct = 1;
			end++;
		}
	}
	return errno == 0 && end != s && *end == '\0' && isfinite(*v) && *v >= 0;
}

enum { OPT_NEGATE = 256 };

/* A size option's value: pixels from lo to hi. @return 0, or
 * PF_EXIT_USAGE after "pfflame: --OPT: expected pixels between LO and HI". */
static int parse_pixels(const char *opt, const char *arg, double lo, double hi, double *v)
{
	if (parse_pos(arg, v, NULL) && *v >= lo && *v <= hi)
		return 0;
	fprintf(stderr, "pfflame: %s: expected pixels between %.0f and %.0f, not '%s'\n", opt, lo, hi, arg);
	return PF_EXIT_USAGE;
}

/* One option of getopt_long()'s c, with its value optarg, into *fl and
 * *output. @return -1 to go on, else the exit status. */
static int parse_opt(int c, struct flame *fl, const char **output)
{
	static const char *const palettes[] = { "hot", "mem", "io", "module", NULL };
	int v;
	switch (c) {
	case 't': fl->title = optarg; break;
	case 'w':
		if (parse_pixels("--width", optarg, 2 * XPAD + 1, 1e6, &fl->width))
			return PF_EXIT_USAGE;
		break;
	case 'H':
		if (parse_pixels("--height", optarg, 1, 1000, &fl->fheight))
			return PF_EXIT_USAGE;
		break;
	case 'm':
		if (!parse_pos(optarg, &fl->minwidth, &fl->minwidth_pct)) {
			fprintf(stderr, "pfflame: --minwidth: expected pixels or a percentage, not '%s'\n", optarg);
			return PF_EXIT_USAGE;
		}
		break;
	case 'c':
		/* palettes[] is in the order of enum palette */
		if ((v = pf_cli_pick("pfflame", "--colors", optarg, palettes)) < 0)
			return PF_EXIT_USAGE;
		fl->pal = (enum palette)v;
		break;
	case 'i': fl->inverted = 1; break;
	case 'r': fl->reverse = 1; break;
	case 'n': fl->countname = optarg; break;
	case 'd': {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(optarg, &end, 10);
		if (errno || end == optarg || *end || optarg[0] == '-' || n > 100000000ull) {
			fprintf(stderr, "pfflame: --max-depth: expected a number of frames (0: all), not '%s'\n", optarg);
			return PF_EXIT_USAGE;
		}
		fl->max_depth = (size_t)n;
		break;
	}
	case OPT_NEGATE: fl->negate = 1; break;
	case 'o': *output = optarg; break;
	default: return pf_cli_std_opt("pfflame", c, usage);
	}
	return -1;
}

/* A "# pffold-input" line: kept (the first) for the subtitle, and said. */
static void folded_input(void *arg, const char *text, size_t len)
{
	struct flame *fl = arg;
	pf_folded_input_keep(fl->note, sizeof fl->note, "pfflame", fl->path, text, len);
}

/* Reads the folded stacks of fl->path into the tree. @return 0, or -1
 * with a message. */
static int read_input(struct flame *fl)
{
	FILE *in = pf_cli_open_in(fl->path);
	if (!in) {
		fprintf(stderr, "pfflame: %s: %s\n", fl->path, strerror(errno));
		return -1;
	}
	int rc = -1;
	uint32_t root;
	char err[256];
	if (pf_strtab_init(&fl->names) < 0 || pf_strtab_init(&fl->locs) < 0 || grow_slots(fl) < 0 ||
	    new_node(fl, UINT32_MAX, 0, &root) < 0)
		fprintf(stderr, "pfflame: %s\n", strerror(ENOMEM));
	else if ((rc = pf_folded_read_input(in, add_line, fl, NULL, folded_input, err, sizeof err)) < 0)
		fprintf(stderr, "pfflame: %s: %s\n", fl->path, err);
	else if (rc == 0 && fl->ncounts == 0) {
		fprintf(stderr, "pfflame: %s: no stacks\n", fl->path);
		rc = -1;
	}
	if (in != stdin)
		fclose(in);
	return rc == 0 ? 0 : -1;
}

/* Draws the graph into `output` ("-": standard output). @return the exit
 * status. */
static int write_output(struct flame *fl, const char *output)
{
	FILE *out = stdout;
	if (strcmp(output, "-") != 0 && !(out = fopen(output, "w"))) {
		fprintf(stderr, "pfflame: %s: %s\n", output, strerror(errno));
		return PF_EXIT_ERROR;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	if (fl->n_capped)
		fprintf(stderr,
			"pfflame: warning: %s: %llu stacks are deeper than %zu frames (the deepest %zu): drawn to that "
			"depth, the rest as one '" CAPPED_NAME "' frame (--max-depth)\n",
			fl->path, (unsigned long long)fl->n_capped, fl->max_depth, fl->deepest);
	int status = draw(fl, out) == 0 ? PF_EXIT_OK : PF_EXIT_ERROR;
	int e = pf_out_flush(out);
	if (e) {
		pf_out_error("pfflame", output, e);
		status = PF_EXIT_ERROR;
	}
	if (out != stdout)
		fclose(out);
	return status;
}

static void flame_free(struct flame *fl)
{
	pf_strtab_free(&fl->names);
	pf_strtab_free(&fl->locs);
	free(fl->nl);
	free(fl->nl_slots);
	free(fl->strip);
	free(fl->shown);
	free(fl->nodes);
	free(fl->slots);
	free(fl->fr);
	free(fl->frl);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "title", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, 'w' },
		{ "height", required_argument, NULL, 'H' },
		{ "minwidth", required_argument, NULL, 'm' },
		{ "colors", required_argument, NULL, 'c' },
		{ "inverted", no_argument, NULL, 'i' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "countname", required_argument, NULL, 'n' },
		{ "negate", no_argument, NULL, OPT_NEGATE },
		{ "max-depth", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		PF_CLI_STD_LONGOPTS,
	};
	struct flame fl;
	memset(&fl, 0, sizeof fl);
	fl.width = 1200;
	fl.fheight = 16;
	fl.minwidth = 0.1;
	fl.countname = "samples";
	fl.max_depth = DEFAULT_MAX_DEPTH;
	fl.path = "-";
	const char *output = "-";
	int c, st;
	/* a closed output pipe is a write error (EPIPE), reported in one line */
	pf_out_ignore_sigpipe();
	while ((c = getopt_long(argc, argv, "t:w:H:m:c:irn:d:o:hV", longopts, NULL)) != -1)
		if ((st = parse_opt(c, &fl, &output)) >= 0)
			return st;
	if (pf_cli_one_input("pfflame", argc, argv, optind, &fl.path))
		return PF_EXIT_USAGE;
	int status = read_input(&fl) == 0 ? write_output(&fl, output) : PF_EXIT_ERROR;
	flame_free(&fl);
	return status;
}
