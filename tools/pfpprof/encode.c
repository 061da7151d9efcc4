/*
 * pfpprof: the tables read from a .pf as pprof's Profile message (the
 * messages of profile.proto, encoded by protobuf-c), gzip-compressed with
 * zlib.
 *
 * Ids: a Location per frame of the resolved profile that a kept stack uses;
 * a Function per (display name, source file); a Mapping per range of a
 * mapped file that holds a used frame. A Location is an address: its Lines
 * are the functions inlined there, innermost first, then the real function
 * (profile.proto: "the last entry is the caller"), each with its own line
 * (format/profile.md 3.3: the innermost frame's line is the address's, every
 * other frame's the call site of the frame one depth deeper). With
 * --no-inline (pp_write's `inline_lines` 0) the Lines are the real
 * function's alone, as format 1.1 has it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof.h"
#include "cli.h"
#include "profile.pb-c.h"
#include "text.h"

#define NONE PF_PROF_NONE

typedef Perftools__Profiles__Profile PB_Profile;
typedef Perftools__Profiles__ValueType PB_ValueType;
typedef Perftools__Profiles__Sample PB_Sample;
typedef Perftools__Profiles__Label PB_Label;
typedef Perftools__Profiles__Mapping PB_Mapping;
typedef Perftools__Profiles__Location PB_Location;
typedef Perftools__Profiles__Line PB_Line;
typedef Perftools__Profiles__Function PB_Function;

struct enc {
	const struct pp_input *in;
	PB_Profile pb;
	struct pf_prof *strs;    /* the string table: output index = id (id 0 is "") */
	struct pf_prof *fn_keys; /* (name index, file index) pairs: Function id = id + 1 */
	uint64_t *loc_of_frame;  /* frame id -> Location id, 0 = none yet */
	uint32_t **map_ids;      /* per file: per range (+1 slot for "no range") -> Mapping id */
	uint64_t *map_key;       /* per Mapping (id - 1): file index << 32 | range index */
	uint64_t lost_loc;       /* Location id of [lost], 0 = none yet */
	int inline_lines;        /* a Line per inlined function (not --no-inline) */
	int err;
};

/* Index of `s` in the string table (interned). A proto3 `string` must be
 * UTF-8 (protobuf's language guide, "Scalar Value Types"; Go's decoder
 * refuses a profile that breaks it): a name in another encoding (a Latin-1
 * file name, a thread named with raw bytes) gets U+FFFD for each byte of
 * no well-formed sequence. */
static int64_t S(struct enc *e, const char *s)
{
	size_t n = strlen(s);
	int64_t id;
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l;
	while (i < n && (l = pf_utf8_len(p + i, n - i)) != 0)
		i += l;
	if (i == n) {
		id = pf_prof_str(e->strs, s, n);
	} else {
		size_t fl;
		char *fixed = pf_utf8_fix(s, n, &fl);
		id = fixed ? pf_prof_str(e->strs, fixed, fl) : -ENOMEM;
		free(fixed);
	}
	if (id < 0)
		e->err = -ENOMEM;
	return id < 0 ? 0 : id;
}

/* One zeroed message of `size` bytes, or NULL with e->err set. */
static void *enc_calloc(struct enc *e, size_t size)
{
	void *p = calloc(1, size);
	if (!p)
		e->err = -ENOMEM;
	return p;
}

/* Appends one element to a protobuf-c repeated field of pointers. */
#define PUSH(e, arr, n, elem)                                                       \
	do {                                                                        \
		if (((n) & ((n) - 1)) == 0 || (n) == 0) {                           \
			void *np = realloc((arr), ((n) ? (n) * 2 : 1) * sizeof(*(arr))); \
			if (!np) {                                                  \
				(e)->err = -ENOMEM;                                 \
				break;                                              \
			}                                                           \
			(arr) = np;                                                 \
		}                                                                   \
		(arr)[(n)++] = (elem);                                              \
	} while (0)

static uint64_t function_id(struct enc *e, const char *name, const char *file)
{
	int64_t key[2] = { S(e, name), file ? S(e, file) : 0 };
	uint32_t before = pf_prof_n_strings(e->fn_keys);
	int64_t id = pf_prof_str(e->fn_keys, (const char *)key, sizeof key);
	if (id < 0) {
		e->err = -ENOMEM;
		return 0;
	}
	if (pf_prof_n_strings(e->fn_keys) > before) {
		PB_Function *f = enc_calloc(e, sizeof *f);
		if (!f)
			return 0;
		perftools__profiles__function__init(f);
		f->id = (uint64_t)id + 1;
		f->name = key[0];
		/* pftools keeps one name, as pfsym wrote it (demangled) */
		f->system_name = key[0];
		f->filename = key[1];
		PUSH(e, e->pb.function, e->pb.n_function, f);
	}
	return (uint64_t)id + 1;
}

/* Appends frame `fr` as one Line of `loc` (its function and its line). */
static void frame_line(struct enc *e, PB_Location *loc, const struct pf_prof_frame *fr)
{
	char buf[512];
	const struct pf_prof *p = e->in->prof;
	const char *name = pp_frame_name(p, fr, buf, sizeof buf);
	const char *file = fr->src_file != NONE ? pf_prof_str_get(p, fr->src_file, NULL) : NULL;
	PB_Line *l = enc_calloc(e, sizeof *l);
	if (!l)
		return;
	perftools__profiles__line__init(l);
	l->function_id = function_id(e, name, file);
	l->line = fr->line;
	PUSH(e, loc->line, loc->n_line, l);
}

/* The Mapping of a frame of file `f` (index fi) at file offset `off`, and the
 * frame's address in it (0 when no range of the file holds it). `named`: the
 * frame has a function name. A Mapping with one named frame has_functions:
 * pfsym symbolized its file, and pprof re-symbolizes (from the files of the
 * machine it runs on) only a Mapping that has neither functions, file names
 * nor lines, as its own symbolizer marks them (internal/symbolizer). A
 * frame pfsym left unnamed (an address no symbol covers) stays unnamed. */
static uint64_t mapping_id(struct enc *e, uint32_t fi, uint64_t off, uint64_t *addr, int named)
{
	const struct pp_file *f = &e->in->files[fi];
	uint32_t r;
	for (r = 0; r < f->n_ranges; r++)
		if (off >= f->ranges[r].pgoff && off - f->ranges[r].pgoff < f->ranges[r].end - f->ranges[r].start)
			break;
	*addr = r < f->n_ranges ? f->ranges[r].start + (off - f->ranges[r].pgoff) : 0;
	if (!e->map_ids[fi] && !(e->map_ids[fi] = calloc(f->n_ranges + 1, sizeof(uint32_t)))) {
		e->err = -ENOMEM;
		return 0;
	}
	if (e->map_ids[fi][r]) {
		PB_Mapping *m = e->pb.mapping[e->map_ids[fi][r] - 1];
		m->has_functions = m->has_functions || named;
		return e->map_ids[fi][r];
	}
	PB_Mapping *m = enc_calloc(e, sizeof *m);
	if (!m)
		return 0;
	perftools__profiles__mapping__init(m);
	m->id = e->pb.n_mapping + 1;
	if (r < f->n_ranges) {
		m->memory_start = f->ranges[r].start;
		m->memory_limit = f->ranges[r].end;
		m->file_offset = f->ranges[r].pgoff;
	}
	m->filename = S(e, f->path);
	if (f->build_id_size) {
		char hex[129];
		for (unsigned i = 0; i < f->build_id_size; i++)
			snprintf(hex + 2 * i, 3, "%02x", f->build_id[i]);
		m->build_id = S(e, hex);
	}
	m->has_functions = named;
	size_t n = e->pb.n_mapping;
	PUSH(e, e->map_key, n, (uint64_t)fi << 32 | r);
	PUSH(e, e->pb.mapping, e->pb.n_mapping, m);
	e->map_ids[fi][r] = (uint32_t)m->id;
	return m->id;
}

/* The Location of real (depth 0) frame `frame`; `chain[0..n_chain)` are the
 * frames inlined at its address, innermost first (the stack nodes from the
 * leaf side up to it). A frame's chain is the same at each of its uses
 * (frames are interned per address and depth, format/profile.md 3.3), so the
 * Location is made at the first. */
static uint64_t location_id(struct enc *e, uint32_t frame, const uint32_t *chain, uint32_t n_chain)
{
	if (e->loc_of_frame[frame])
		return e->loc_of_frame[frame];
	const struct pf_prof *p = e->in->prof;
	const struct pf_prof_frame *fr = pf_prof_frame_get(p, frame);
	PB_Location *loc = enc_calloc(e, sizeof *loc);
	if (!loc)
		return 0;
	perftools__profiles__location__init(loc);
	loc->id = e->pb.n_location + 1;
	const char *dso = fr->dso != NONE ? pf_prof_str_get(p, fr->dso, NULL) : NULL;
	const struct pp_file *f = dso ? pp_file_find(e->in, dso) : NULL;
	if (f) {
		loc->mapping_id = mapping_id(e, (uint32_t)(f - e->in->files), fr->file_off, &loc->address,
					     fr->name != NONE);
	}
	if (!loc->address && (fr->flags & PF_FRAME_KERNEL))
		loc->address = fr->file_off; /* a kernel frame's offset is its address */
	for (uint32_t i = 0; i < n_chain && !e->err; i++)
		frame_line(e, loc, pf_prof_frame_get(p, chain[i]));
	frame_line(e, loc, fr);
	PUSH(e, e->pb.location, e->pb.n_location, loc);
	e->loc_of_frame[frame] = loc->id;
	return loc->id;
}

/* A Location of its own for the lost samples: function "[lost]", no mapping. */
static uint64_t lost_location(struct enc *e)
{
	if (e->lost_loc)
		return e->lost_loc;
	PB_Location *loc = calloc(1, sizeof *loc);
	PB_Line *l = calloc(1, sizeof *l);
	if (!loc || !l) {
		free(loc);
		free(l);
		e->err = -ENOMEM;
		return 0;
	}
	perftools__profiles__location__init(loc);
	perftools__profiles__line__init(l);
	loc->id = e->pb.n_location + 1;
	l->function_id = function_id(e, "[lost]", NULL);
	PUSH(e, loc->line, loc->n_line, l);
	PUSH(e, e->pb.location, e->pb.n_location, loc);
	return e->lost_loc = loc->id;
}

static PB_Label *label(struct enc *e, const char *key, const char *str, int64_t num, const char *unit)
{
	PB_Label *l = enc_calloc(e, sizeof *l);
	if (!l)
		return NULL;
	perftools__profiles__label__init(l);
	l->key = S(e, key);
	if (str)
		l->str = S(e, str);
	else {
		l->num = num;
		l->num_unit = S(e, unit);
	}
	return l;
}

/* A Sample with `n_values` values, all 0 but the group's pair. */
static PB_Sample *new_sample(struct enc *e, uint32_t group, uint64_t count, uint64_t weight)
{
	size_t nv = 2 * (size_t)e->in->n_groups;
	PB_Sample *s = calloc(1, sizeof *s);
	int64_t *v = calloc(nv, sizeof *v);
	if (!s || !v) {
		free(s);
		free(v);
		e->err = -ENOMEM;
		return NULL;
	}
	perftools__profiles__sample__init(s);
	s->n_value = nv;
	s->value = v;
	v[2 * group] = count > INT64_MAX ? INT64_MAX : (int64_t)count;
	v[2 * group + 1] = weight > INT64_MAX ? INT64_MAX : (int64_t)weight;
	PUSH(e, e->pb.sample, e->pb.n_sample, s);
	return s;
}

static void add_sample(struct enc *e, const struct pp_agg *a)
{
	const struct pf_prof *p = e->in->prof;
	PB_Sample *s = new_sample(e, a->group, a->count, a->weight);
	if (!s)
		return;
	/* leaf first, as the stack nodes run from the leaf to the root; the
	 * inline frames of an address precede its real frame (innermost first)
	 * and become Lines of its Location */
	uint32_t chain[PP_MAX_INLINE], n_chain = 0;
	for (uint32_t n = a->stack; n != NONE && !e->err;) {
		const struct pf_prof_stack *st = pf_prof_stack_get(p, n);
		n = st->parent;
		if (pf_prof_frame_get(p, st->frame)->flags & PF_FRAME_INLINE) {
			/* a chain holds at most 255 inline frames (DEPTH's 8 bits) */
			if (e->inline_lines && n_chain < PP_MAX_INLINE)
				chain[n_chain++] = st->frame;
			continue;
		}
		uint64_t loc = location_id(e, st->frame, chain, n_chain);
		n_chain = 0;
		PUSH(e, s->location_id, s->n_location_id, loc);
	}
	if (a->comm != NONE) {
		PB_Label *l = label(e, "comm", pf_prof_str_get(p, a->comm, NULL), 0, NULL);
		if (l)
			PUSH(e, s->label, s->n_label, l);
	}
	PB_Label *l = label(e, "pid", NULL, a->pid, "id");
	if (l)
		PUSH(e, s->label, s->n_label, l);
	if ((l = label(e, "tid", NULL, a->tid, "id")))
		PUSH(e, s->label, s->n_label, l);
}

static double mean_period(const struct pp_group *g)
{
	return g->samples ? (double)g->period_sum / (double)g->samples : 0;
}

/* The lost samples of a group: a Sample on the "[lost]" Location with the
 * label lost=ring-buffer; its weight is the count times the mean period, 0
 * for an event that reads a group (its periods hold the lost samples'). */
static void add_lost(struct enc *e, uint32_t gi)
{
	const struct pp_group *g = &e->in->groups[gi];
	uint64_t w = g->reads_group ? 0 : (uint64_t)((double)g->lost * mean_period(g) + 0.5);
	PB_Sample *s = new_sample(e, gi, g->lost, w);
	if (!s)
		return;
	uint64_t loc = lost_location(e);
	PUSH(e, s->location_id, s->n_location_id, loc);
	PB_Label *l = label(e, "lost", "LOST records", 0, NULL);
	if (l)
		PUSH(e, s->label, s->n_label, l);
}

static PB_ValueType *value_type(struct enc *e, const char *type, const char *unit)
{
	PB_ValueType *v = enc_calloc(e, sizeof *v);
	if (!v)
		return NULL;
	perftools__profiles__value_type__init(v);
	v->type = S(e, type);
	v->unit = S(e, unit);
	return v;
}

/* Two sample types per event name: its samples and their weight. The first
 * event's are "samples/count" and "cpu/nanoseconds" (cpu-clock, task-clock)
 * or "EVENT/count"; a later event whose names are taken gets "EVENT-samples"
 * and "EVENT-cpu". */
static void sample_types(struct enc *e)
{
	for (uint32_t g = 0; g < e->in->n_groups; g++) {
		const struct pp_group *G = &e->in->groups[g];
		char cnt[160], wt[160];
		snprintf(cnt, sizeof cnt, g ? "%s-samples" : "samples", G->name);
		if (G->clock) {
			int cpu_taken = 0;
			for (uint32_t h = 0; h < g; h++)
				cpu_taken |= e->in->groups[h].clock;
			snprintf(wt, sizeof wt, cpu_taken ? "%s-cpu" : "cpu", G->name);
		} else {
			snprintf(wt, sizeof wt, "%s", G->name);
		}
		PB_ValueType *a = value_type(e, cnt, "count");
		PB_ValueType *b = value_type(e, wt, G->clock ? "nanoseconds" : "count");
		if (a)
			PUSH(e, e->pb.sample_type, e->pb.n_sample_type, a);
		if (b)
			PUSH(e, e->pb.sample_type, e->pb.n_sample_type, b);
	}
	if (!e->in->n_groups)
		return;
	const struct pp_group *G = &e->in->groups[0];
	e->pb.default_sample_type = e->pb.sample_type[0]->type;
	e->pb.period_type = value_type(e, G->clock ? "cpu" : G->name, G->clock ? "nanoseconds" : "count");
	if (G->fixed_period)
		e->pb.period = (int64_t)G->fixed_period;
	else if (G->clock && G->freq_hz)
		e->pb.period = (int64_t)((1e9 + G->freq_hz / 2) / G->freq_hz);
	else
		e->pb.period = (int64_t)(mean_period(G) + 0.5);
}

/* gzip (RFC 1952, zlib's deflate) of n bytes, written to fd. */
static int gzip_write(int fd, const uint8_t *raw, size_t n, int level)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	size_t cap = deflateBound(&z, n);
	uint8_t *out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)raw;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH) == Z_STREAM_END ? 0 : -ENOMEM;
	size_t len = cap - z.avail_out;
	deflateEnd(&z);
	if (!rc)
		rc = pf_out_write_all(fd, out, len);
	free(out);
	return rc;
}

struct map_order {
	uint64_t time, key; /* the file's map_time; map_key */
	size_t old;         /* Mapping id - 1 */
};

static int map_order_cmp(const void *a, const void *b)
{
	const struct map_order *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* pprof takes the first Mapping for the main program: Mappings are put in the
 * order their files were first mapped, by the time of the mapping records
 * (the recorded program's executable comes first; a RECORDS section holds
 * each CPU's ring buffer in turn, so the records' order is not the time
 * order), then as first seen, and renumbered. */
static void order_mappings(struct enc *e)
{
	size_t n = e->pb.n_mapping;
	struct map_order *by = malloc((n ? n : 1) * sizeof *by);
	uint64_t *new_id = malloc((n ? n : 1) * sizeof *new_id);
	PB_Mapping **m = malloc((n ? n : 1) * sizeof *m);
	if (!by || !new_id || !m) {
		e->err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		by[i] = (struct map_order){ e->in->files[e->map_key[i] >> 32].map_time, e->map_key[i], i };
	qsort(by, n, sizeof *by, map_order_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t old = by[i].old;
		new_id[old] = i + 1;
		m[i] = e->pb.mapping[old];
		m[i]->id = i + 1;
	}
	if (n) /* no Mapping: pb.mapping is NULL */
		memcpy(e->pb.mapping, m, n * sizeof *m);
	for (size_t i = 0; i < e->pb.n_location; i++)
		if (e->pb.location[i]->mapping_id)
			e->pb.location[i]->mapping_id = new_id[e->pb.location[i]->mapping_id - 1];
out:
	free(by);
	free(new_id);
	free(m);
}

/* Builds the Profile message in e->pb. */
static void build(struct enc *e)
{
	const struct pp_input *in = e->in;
	S(e, ""); /* string 0 */
	sample_types(e);
	for (uint32_t i = 0; i < in->n_agg && !e->err; i++)
		add_sample(e, &in->agg[in->order[i]]);
	for (uint32_t g = 0; g < in->n_groups && !e->err; g++)
		if (in->groups[g].lost)
			add_lost(e, g);
	if (!e->err)
		order_mappings(e);
	if (in->have_anchor && in->have_time && in->first_time + in->anchor_real_ns >= in->anchor_mono_ns)
		e->pb.time_nanos = (int64_t)(in->first_time - in->anchor_mono_ns + in->anchor_real_ns);
	if (in->duration_ns)
		e->pb.duration_nanos = (int64_t)in->duration_ns;
	else if (in->have_time)
		e->pb.duration_nanos = (int64_t)(in->last_time - in->first_time);
}

int pp_write(const struct pp_input *in, int fd, int gzip_level, int inline_lines)
{
	struct enc e;
	memset(&e, 0, sizeof e);
	e.in = in;
	e.inline_lines = inline_lines;
	perftools__profiles__profile__init(&e.pb);
	uint32_t nf = pf_prof_n_frames(in->prof);
	e.loc_of_frame = calloc(nf ? nf : 1, sizeof *e.loc_of_frame);
	e.map_ids = calloc(in->n_files ? in->n_files : 1, sizeof *e.map_ids);
	if (!e.loc_of_frame || !e.map_ids || pf_prof_new(&e.strs) < 0 || pf_prof_new(&e.fn_keys) < 0)
		e.err = -ENOMEM;
	if (!e.err)
		build(&e);
	uint32_t ns = e.strs ? pf_prof_n_strings(e.strs) : 0;
	char **tab = calloc(ns ? ns : 1, sizeof *tab);
	if (!tab)
		e.err = -ENOMEM;
	for (uint32_t i = 0; i < ns && tab; i++)
		tab[i] = (char *)pf_prof_str_get(e.strs, i, NULL);
	e.pb.string_table = tab;
	e.pb.n_string_table = ns;
	int rc = e.err;
	if (!rc) {
		size_t n = perftools__profiles__profile__get_packed_size(&e.pb);
		uint8_t *raw = malloc(n ? n : 1);
		if (!raw)
			rc = -ENOMEM;
		else {
			perftools__profiles__profile__pack(&e.pb, raw);
			rc = gzip_write(fd, raw, n, gzip_level);
		}
		free(raw);
	}
	/* the string table points into e.strs: not protobuf-c's to free */
	e.pb.string_table = NULL;
	e.pb.n_string_table = 0;
	free(tab);
	PB_Profile *heap = malloc(sizeof *heap);
	if (heap) {
		*heap = e.pb;
		protobuf_c_message_free_unpacked(&heap->base, NULL);
	}
	for (uint32_t i = 0; i < in->n_files; i++)
		free(e.map_ids[i]);
	free(e.map_ids);
	free(e.map_key);
	free(e.loc_of_frame);
	pf_prof_delete(e.strs);
	pf_prof_delete(e.fn_keys);
	return rc;
}
