/*
 * import.c - perf.data to .pf (pf_import(), perfdata.h).
 *
 * Reads the items of a pf_perfdata reader and writes them through libpfile's
 * writer: META from the features, one EVENT per attr, the kernel records
 * byte for byte, BUILDID from perf's build-id table, END with the totals.
 * What perf's own records become is listed in pfimport(1), RECORDS.
 */
#include "perfdata.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildid.h"
#include "grow.h"
#include "ksnap.h"
#include "proof.h"
#include "untrusted.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PENDING_MAX (16u << 20) /* records held back until the events are known */
#define BUILDID_FLUSH (1u << 20)
#define DWARF_FRAME_BYTES (8u << 20)
#define MAX_EVENTS 4096u

struct imp_event {
	uint8_t *attr;          /* attr_size bytes, then n_ids * 8 bytes of ids, file order */
	uint32_t attr_size;
	uint32_t n_ids;
	uint64_t offset;
	char name[128];
	int name_rank;          /* where the name came from: 0 none, 1 EVENT_DESC, 2 EVENT_UPDATE */
	int written;
};

struct ed_name {
	char name[128];
	uint64_t id0;
	int has_id;
};

struct tp_name {
	uint64_t id;
	char name[65];
};

struct imp {
	pf_perfdata *pd;
	struct pf_import_opts o;
	struct pf_import_stats *st;
	int swap;
	int out_fd;
	pf_writer *w;
	int started;
	int stop;               /* a write failed */
	struct imp_event *ev;
	uint32_t n_ev;
	size_t cap_ev;
	struct pf_events *hev;  /* the events in host order, for the totals */
	/* features */
	char *feat_str[PF_PD_FEAT_KNOWN];
	struct pf_buf cmdline;  /* perf's arguments, joined by spaces */
	char *cmd_after;        /* the arguments after "--" */
	uint32_t nr_avail, nr_online;
	int has_nrcpus;
	uint64_t mem_kb;
	int has_mem;
	int has_clock;
	uint32_t clockid;
	uint64_t tod_ns, clockid_ns;
	struct ed_name *ed;
	uint32_t n_ed;
	struct tp_name *tp;
	uint32_t n_tp;
	/* build-ids waiting to be written */
	struct pf_buf bid;
	uint32_t n_bid;
	uint64_t guest_bids;
	struct pf_buf images[3]; /* DSO_IMAGE payloads of the vDSOs, until the start */
	int n_images;
	/* records before the start */
	struct pf_buf pending;
	uint64_t pending_off;      /* input offset of pending's first record */
	/* what start() learnt from the records before it: the kernel's _text
	 * (the pgoff of perf's kernel MMAP "[kernel.kallsyms]_text"), and
	 * whether this is the machine and boot that recorded (boot_why: why
	 * not) */
	uint64_t ktext;
	int same_boot;
	char boot_why[300];
	uint64_t real_minus_mono;   /* CLOCK_REALTIME - the records' clock now (same boot),
				       mod 2^64 */
	char **pbid;                /* paths of perf's build-id table */
	uint32_t n_pbid;
	size_t cap_pbid;
	struct cand {
		char *path;
		uint32_t maj, min;
		uint64_t ino, t;    /* t: its first MMAP2's time, 0 if none */
		enum { CAND_WAIT, CAND_CONFLICT, CAND_DONE } state;
		char *why;          /* not proven: why (said at the end, unless
				       perf's table names the file by then) */
	} *cand;                    /* files without a build-id, to prove by inode */
	uint32_t n_cand;
	size_t cap_cand;
	struct pf_buf ibid;         /* BUILDID entries (flag INODE) to write */
	uint8_t kbid[64];           /* the kernel's build-id in perf's table, or the
				       running kernel's when proven the same boot */
	uint8_t kbid_size;
	struct pf_buf ksyms;        /* the KSYMS payload to write, or empty */
	struct proc_life {
		uint32_t pid;       /* 0: an empty slot */
		int started;        /* its exec (COMM_EXEC) or fork was recorded */
		int sampled;        /* it has a sample */
		uint64_t first, last; /* its first and last record's time */
	} *procs;                   /* open addressing, by pid, for the JIT maps */
	size_t n_procs, cap_procs;
	struct pf_buf scratch;
	struct pf_buf known;    /* a run of records without those of unknown types */
	uint8_t told_kernel[64]; /* unknown kernel record types told */
	struct pf_buf kept;     /* a run less the records left out */
	uint64_t counter_lost;  /* perf's lost-sample counter records, left out */
	uint64_t records_lost;  /* sum of the LOST records' counts */
	uint64_t tmin, tmax;
	uint64_t throttles;
	uint8_t told[256];      /* notices given, by record type - 64 or a key */
	/* damage found in perf's own data (the first by offset) */
	struct pf_pd_damage dmg;
};

/* ------------------------------------------------------------------------ */

int pf_arch_machine(const char *arch, uint16_t *e_machine, uint8_t *word_size)
{
	static const struct {
		const char *name;
		uint16_t em;
		uint8_t ws;
		uint8_t prefix; /* match the name's start */
	} tab[] = {
		{ "x86_64", 62, 8, 0 },   { "amd64", 62, 8, 0 },      { "i386", 3, 4, 0 },      { "i486", 3, 4, 0 },
		{ "i586", 3, 4, 0 },      { "i686", 3, 4, 0 },        { "x86", 3, 4, 0 },       { "aarch64", 183, 8, 1 },
		{ "arm64", 183, 8, 0 },   { "arm", 40, 4, 1 },        { "riscv64", 243, 8, 0 }, { "riscv32", 243, 4, 0 },
		{ "ppc64", 21, 8, 1 },    { "ppc", 20, 4, 1 },        { "s390x", 22, 8, 0 },    { "s390", 22, 4, 0 },
		{ "mips64", 8, 8, 1 },    { "mips", 8, 4, 1 },        { "loongarch64", 258, 8, 0 },
		{ "sparc64", 43, 8, 0 },  { "sparc", 2, 4, 0 },
	};
	if (!arch)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		size_t n = strlen(tab[i].name);
		if (tab[i].prefix ? strncmp(arch, tab[i].name, n) == 0 : strcmp(arch, tab[i].name) == 0) {
			if (e_machine)
				*e_machine = tab[i].em;
			if (word_size)
				*word_size = tab[i].ws;
			return 0;
		}
	}
	return -ENOENT;
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

static const char *in_name(const struct imp *m)
{
	const char *n = pf_perfdata_name(m->pd);
	return strcmp(n, "-") == 0 ? "<stdin>" : n;
}

__attribute__((format(printf, 2, 3))) static void say(struct imp *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pf_notice_vline(m->o.notice, m->o.notice_arg, in_name(m), fmt, ap);
	va_end(ap);
}

/* Damage in a feature or one of perf's records that the reader handed out
 * intact (its own framing was right): the first by offset is reported. */
__attribute__((format(printf, 3, 4))) static void damage(struct imp *m, uint64_t off, const char *fmt, ...)
{
	if (m->dmg.rc && off >= m->dmg.off)
		return;
	va_list ap;
	va_start(ap, fmt);
	pf_pd_damage_vnote(&m->dmg, in_name(m), off, fmt, ap);
	va_end(ap);
}

static int write_failed(struct imp *m, int rc, char *msg, size_t msg_size)
{
	if (m->st)
		m->st->output_error = -rc;
	m->stop = 1;
	if (msg && msg_size)
		snprintf(msg, msg_size, "write: %s", strerror(-rc));
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

static const char *const hw_names[] = { "cycles", "instructions", "cache-references", "cache-misses",
					"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
					"stalled-cycles-backend", "ref-cycles" };
static const char *const sw_names[] = { "cpu-clock", "task-clock", "page-faults", "context-switches",
					"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
					"emulation-faults", "dummy", "bpf-output", "cgroup-switches" };

/* Bit `k` of the attr's flag bit-fields (the u64 at byte 40): a big-endian
 * compiler allocates bit-fields from the most significant bit. */
static int attr_flag(const struct imp *m, const struct imp_event *e, unsigned k)
{
	if (e->attr_size < 48)
		return 0;
	uint64_t f = pf_pd_load64(m->pd, e->attr + 40);
	if (pf_perfdata_info(m->pd)->endian == PF_BIG_ENDIAN)
		k = 63 - k;
	return (int)((f >> k) & 1);
}

/* The modifiers perf appends to a name it makes from the attr
 * (evsel__add_modifiers() in tools/perf/util/evsel.c): ":" then k, u, h for
 * the contexts not excluded when one is; p per precise_ip level; H and G for
 * host and guest where exclude_guest differs from its default (set with a
 * context excluded or precise_ip). perf names a pipe-mode event so, where the
 * stream carries no name: `cycles:ppH`. */
static void add_modifiers(const struct imp *m, const struct imp_event *e, char *out, size_t n)
{
	enum { EXCL_USER = 4, EXCL_KERNEL = 5, EXCL_HV = 6, PRECISE0 = 15, PRECISE1 = 16, EXCL_HOST = 19,
	       EXCL_GUEST = 20 };
	char mod[16];
	size_t k = 0;
	int guest_default = 0;
	if (attr_flag(m, e, EXCL_KERNEL) || attr_flag(m, e, EXCL_USER) || attr_flag(m, e, EXCL_HV)) {
		if (!attr_flag(m, e, EXCL_KERNEL))
			mod[k++] = 'k';
		if (!attr_flag(m, e, EXCL_USER))
			mod[k++] = 'u';
		if (!attr_flag(m, e, EXCL_HV))
			mod[k++] = 'h';
		guest_default = 1;
	}
	unsigned precise = (unsigned)attr_flag(m, e, PRECISE0) | (unsigned)attr_flag(m, e, PRECISE1) << 1;
	for (unsigned i = 0; i < precise; i++)
		mod[k++] = 'p';
	if (precise)
		guest_default = 1;
	if (attr_flag(m, e, EXCL_HOST) || attr_flag(m, e, EXCL_GUEST) == guest_default) {
		if (!attr_flag(m, e, EXCL_HOST))
			mod[k++] = 'H';
		if (!attr_flag(m, e, EXCL_GUEST))
			mod[k++] = 'G';
	}
	mod[k] = 0;
	size_t len = strlen(out);
	if (k && len + 1 < n)
		snprintf(out + len, n - len, ":%s", mod);
}

/* The event's name from its type and config (no modifiers). */
static void attr_base_name(const struct imp *m, uint32_t type, uint64_t config, char *out, size_t n)
{
	if (type == PERF_TYPE_HARDWARE && config < sizeof(hw_names) / sizeof(hw_names[0]))
		snprintf(out, n, "%s", hw_names[config]);
	else if (type == PERF_TYPE_SOFTWARE && config < sizeof(sw_names) / sizeof(sw_names[0]))
		snprintf(out, n, "%s", sw_names[config]);
	else if (type == PERF_TYPE_TRACEPOINT) {
		for (uint32_t i = 0; i < m->n_tp; i++)
			if (m->tp[i].id == config) {
				snprintf(out, n, "%s", m->tp[i].name);
				return;
			}
		snprintf(out, n, "tracepoint %llu", (unsigned long long)config);
	} else if (type == PERF_TYPE_RAW)
		snprintf(out, n, "raw 0x%llx", (unsigned long long)config);
	else if (type == PERF_TYPE_HW_CACHE)
		snprintf(out, n, "hw-cache 0x%llx", (unsigned long long)config);
	else if (type == PERF_TYPE_BREAKPOINT)
		snprintf(out, n, "breakpoint");
	else
		snprintf(out, n, "type %u config 0x%llx", type, (unsigned long long)config);
}

/* A name from the attr alone, as perf names the generic events: those with
 * a fixed name or a number (hardware, software, raw, cache) with their
 * modifiers (add_modifiers()). */
static void attr_name(const struct imp *m, const struct imp_event *e, char *out, size_t n)
{
	uint32_t type = pf_pd_load32(m->pd, e->attr);
	uint64_t config = pf_pd_load64(m->pd, e->attr + 8);
	attr_base_name(m, type, config, out, n);
	if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_SOFTWARE || type == PERF_TYPE_RAW ||
	    type == PERF_TYPE_HW_CACHE)
		add_modifiers(m, e, out, n);
}

static int has_id(const struct imp *m, const struct imp_event *e, uint64_t id)
{
	for (uint32_t i = 0; i < e->n_ids; i++)
		if (pf_pd_load64(m->pd, e->attr + e->attr_size + 8 * (size_t)i) == id)
			return 1;
	return 0;
}

static void copy_name(char *dst, size_t n, const char *s, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(dst, s, len);
	dst[len] = 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)dst[i] < 0x20)
			dst[i] = '?';
}

static int add_event(struct imp *m, const struct pf_pd_item *it)
{
	if (m->n_ev >= MAX_EVENTS) {
		damage(m, it->offset, "more than %u attrs: the rest left out", MAX_EVENTS);
		return 0;
	}
	if (pft_grow((void **)&m->ev, &m->cap_ev, (size_t)m->n_ev + 1, sizeof(*m->ev), 8) < 0)
		return -ENOMEM;
	struct imp_event *e = &m->ev[m->n_ev];
	memset(e, 0, sizeof(*e));
	e->attr = malloc(it->size + (size_t)it->n_ids * 8);
	if (!e->attr)
		return -ENOMEM;
	memcpy(e->attr, it->data, it->size);
	if (it->n_ids)
		memcpy(e->attr + it->size, it->ids, (size_t)it->n_ids * 8);
	e->attr_size = (uint32_t)it->size;
	e->n_ids = it->n_ids;
	e->offset = it->offset;
	m->n_ev++;
	return 0;
}

/* The name an event gets when its EVENT section is written. */
static void resolve_name(struct imp *m, uint32_t i)
{
	struct imp_event *e = &m->ev[i];
	if (e->name_rank >= 1)
		return;
	for (uint32_t k = 0; k < m->n_ed; k++) {
		if (m->ed[k].has_id && has_id(m, e, m->ed[k].id0)) {
			snprintf(e->name, sizeof(e->name), "%s", m->ed[k].name);
			e->name_rank = 1;
			return;
		}
	}
	if (m->n_ed == m->n_ev && i < m->n_ed && !m->ed[i].has_id) {
		snprintf(e->name, sizeof(e->name), "%s", m->ed[i].name);
		e->name_rank = 1;
		return;
	}
	attr_name(m, e, e->name, sizeof(e->name));
}

/* EVENT payload (format/pfile.md 4.2): the attr and ids as perf wrote them. */
static int write_event(struct imp *m, uint32_t i)
{
	struct imp_event *e = &m->ev[i];
	resolve_name(m, i);
	size_t nl = strlen(e->name);
	struct pf_buf b = { 0 };
	int rc = 0;
	if (pf_buf_put_le32(&b, e->attr_size) < 0 || pf_buf_put_le32(&b, e->n_ids) < 0 ||
	    pf_buf_put_le16(&b, (uint16_t)nl) < 0 || pf_buf_put_le16(&b, 0) < 0 ||
	    pf_buf_put(&b, e->attr, e->attr_size + (size_t)e->n_ids * 8) < 0 || pf_buf_put(&b, e->name, nl) < 0) {
		pf_buf_free(&b);
		return -ENOMEM;
	}
	rc = pf_writer_section(m->w, PF_SEC_EVENT, 0, b.data, b.len);
	if (rc == 0) {
		/* the host-order copy for the totals (time, lost counts) */
		if (m->swap)
			(void)pf_event_payload_swap(b.data, b.len);
		struct pf_section s = { .type = PF_SEC_EVENT, .data = b.data, .size = b.len };
		int arc = pf_events_add(m->hev, &s);
		if (arc == -ENOMEM)
			rc = -ENOMEM;
		else if (arc < 0)
			say(m, "attr at offset %llu (%s): not decodable by libpfile (%s): its records are kept, "
			    "their times not counted", (unsigned long long)e->offset, e->name, strerror(-arc));
		e->written = 1;
		if (m->st)
			m->st->events++;
	}
	pf_buf_free(&b);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Features                                                                  */
/* ------------------------------------------------------------------------ */

static int feature(struct imp *m, const struct pf_pd_item *it);

static int set_str(struct imp *m, uint32_t f, const struct pf_pd_item *it)
{
	size_t pos = 0, len;
	const char *s;
	/* a feature of 0 bytes holds no string: absent, not damaged (perf
	 * 3.14 on armv7 wrote CPUDESC so, and perf reads such a file) */
	if (it->size == 0)
		return 0;
	if (pf_pd_string_next(m->pd, it->data, it->size, &pos, &s, &len) != 1) {
		damage(m, it->offset, "feature %s: a string runs past its %zu bytes: damaged", pf_pd_feature_name(f),
		       it->size);
		return 0;
	}
	char *c = malloc(len + 1);
	if (!c)
		return -ENOMEM;
	copy_name(c, len + 1, s, len);
	free(m->feat_str[f]);
	m->feat_str[f] = c;
	return 0;
}

/* 1 (the damage noted: "WHAT of N bytes") if the feature or record `it` is
 * shorter than `need` bytes. */
static int too_short(struct imp *m, const struct pf_pd_item *it, size_t need, const char *what)
{
	if (it->size >= need)
		return 0;
	damage(m, it->offset, "%s of %zu bytes: damaged", what, it->size);
	return 1;
}

static int feat_cmdline(struct imp *m, const struct pf_pd_item *it)
{
	if (too_short(m, it, 4, "feature CMDLINE"))
		return 0;
	uint32_t nr = pf_pd_load32(m->pd, it->data);
	size_t pos = 4;
	m->cmdline.len = 0;
	struct pf_buf after = { 0 };
	int dashdash = 0;
	for (uint32_t i = 0; i < nr; i++) {
		const char *s;
		size_t len;
		if (pf_pd_string_next(m->pd, it->data, it->size, &pos, &s, &len) != 1) {
			damage(m, it->offset, "feature CMDLINE: argument %u runs past its %zu bytes: damaged", i, it->size);
			break;
		}
		if ((m->cmdline.len && pf_buf_put(&m->cmdline, " ", 1) < 0) || pf_buf_put(&m->cmdline, s, len) < 0)
			goto nomem;
		if (dashdash) {
			if ((after.len && pf_buf_put(&after, " ", 1) < 0) || pf_buf_put(&after, s, len) < 0)
				goto nomem;
		} else if (len == 2 && memcmp(s, "--", 2) == 0 && i > 0) {
			dashdash = 1;
		}
	}
	if (pf_buf_put(&m->cmdline, "", 1) < 0)
		goto nomem;
	free(m->cmd_after);
	m->cmd_after = NULL;
	if (after.len) {
		if (pf_buf_put(&after, "", 1) < 0)
			goto nomem;
		m->cmd_after = (char *)after.data;
	} else {
		pf_buf_free(&after);
	}
	return 0;
nomem:
	pf_buf_free(&after);
	return -ENOMEM;
}

static int feat_event_desc(struct imp *m, const struct pf_pd_item *it)
{
	size_t pos = 0;
	struct pf_pd_event_desc d;
	int rc;
	free(m->ed);
	m->ed = NULL;
	m->n_ed = 0;
	uint32_t cap = 0;
	while ((rc = pf_pd_event_desc_next(m->pd, it->data, it->size, &pos, &d)) == 1) {
		if (m->n_ed == cap) {
			cap = cap ? cap * 2 : 8;
			if (cap > MAX_EVENTS)
				break;
			struct ed_name *n = realloc(m->ed, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			m->ed = n;
		}
		struct ed_name *e = &m->ed[m->n_ed++];
		copy_name(e->name, sizeof(e->name), d.name, d.name_len);
		e->has_id = d.n_ids > 0;
		e->id0 = d.n_ids ? pf_pd_load64(m->pd, d.ids) : 0;
	}
	if (rc < 0)
		damage(m, it->offset, "feature EVENT_DESC: an event runs past its %zu bytes: damaged", it->size);
	return 0;
}

/* The vDSO image of BUILD_ID entry b from perf's build-id cache, kept for
 * flush_build_ids(): for a perf.data file, start() writes it before the
 * first RECORDS, so pfsym has it before the first sample, as from pfrec. */
static int add_vdso(struct imp *m, const struct pf_pd_build_id *b)
{
	struct pf_buf img = { 0 };
	char why[600];
	int rc = pf_import_vdso(m->o.buildid_dir, b->filename, b->filename_len, b->build_id, b->build_id_size, &img,
				why, sizeof why);
	if (rc == 0)
		say(m, "%.*s: no image in perf's build-id cache (%s): its frames stay unnamed", (int)b->filename_len,
		    b->filename, why);
	if (rc <= 0 || m->n_images == (int)(sizeof(m->images) / sizeof(m->images[0]))) {
		pf_buf_free(&img);
		return rc < 0 ? rc : 0;
	}
	m->images[m->n_images++] = img;
	return 0;
}

static int add_build_id(struct imp *m, const struct pf_pd_build_id *b, uint64_t off)
{
	unsigned mode = b->misc & 7u;
	if (mode == PERF_RECORD_MISC_GUEST_KERNEL || mode == PERF_RECORD_MISC_GUEST_USER) {
		m->guest_bids++;
		return 0;
	}
	if (b->filename_len == 0 || b->filename_len > 0xffff) {
		damage(m, off, "a build-id entry without a file name: damaged");
		return 0;
	}
	struct pf_buildid e;
	memset(&e, 0, sizeof(e));
	memcpy(e.build_id, b->build_id, b->build_id_size);
	e.build_id_size = b->build_id_size;
	e.path = b->filename;
	e.path_len = b->filename_len;
	if (pf_buildid_encode(&m->bid, &e) < 0)
		return -ENOMEM;
	m->n_bid++;
	if (b->filename_len == 17 && memcmp(b->filename, "[kernel.kallsyms]", 17) == 0 && !m->kbid_size &&
	    b->build_id_size && b->build_id_size <= sizeof(m->kbid)) {
		memcpy(m->kbid, b->build_id, b->build_id_size);
		m->kbid_size = b->build_id_size;
	}
	if (m->n_pbid == m->cap_pbid) {
		size_t nc = m->cap_pbid ? m->cap_pbid * 2 : 16;
		char **v = realloc(m->pbid, nc * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->pbid = v;
		m->cap_pbid = nc;
	}
	if (!(m->pbid[m->n_pbid] = strndup(b->filename, b->filename_len)))
		return -ENOMEM;
	m->n_pbid++;
	if (m->o.buildid_dir && pf_import_is_vdso(b->filename, b->filename_len))
		return add_vdso(m, b);
	return 0;
}

static int feat_build_ids(struct imp *m, const struct pf_pd_item *it)
{
	size_t pos = 0;
	struct pf_pd_build_id b;
	int rc;
	while ((rc = pf_pd_build_id_next(m->pd, it->data, it->size, &pos, &b)) == 1)
		if (add_build_id(m, &b, it->offset + pos) < 0)
			return -ENOMEM;
	if (rc < 0)
		damage(m, it->offset + pos, "feature BUILD_ID: an entry runs past its %zu bytes: damaged", it->size);
	return 0;
}

static int feature(struct imp *m, const struct pf_pd_item *it)
{
	uint32_t f = it->type;
	if (f == PF_PD_FEAT_BUILD_ID)
		return feat_build_ids(m, it);
	if (m->started) {
		if (!m->told[128 + (f & 127)]) {
			m->told[128 + (f & 127)] = 1;
			say(m, "offset %llu: feature %s came after the records had started: not in META",
			    (unsigned long long)it->offset, pf_pd_feature_name(f));
		}
		return 0;
	}
	switch (f) {
	case PF_PD_FEAT_HOSTNAME:
	case PF_PD_FEAT_OSRELEASE:
	case PF_PD_FEAT_VERSION:
	case PF_PD_FEAT_ARCH:
	case PF_PD_FEAT_CPUDESC:
	case PF_PD_FEAT_CPUID:
		return set_str(m, f, it);
	case PF_PD_FEAT_CMDLINE:
		return feat_cmdline(m, it);
	case PF_PD_FEAT_EVENT_DESC:
		return feat_event_desc(m, it);
	case PF_PD_FEAT_NRCPUS:
		if (too_short(m, it, 8, "feature NRCPUS"))
			return 0;
		/* perf writes the CPUs present (its "avail") first, then online */
		m->nr_avail = pf_pd_load32(m->pd, it->data);
		m->nr_online = pf_pd_load32(m->pd, it->data + 4);
		m->has_nrcpus = 1;
		return 0;
	case PF_PD_FEAT_TOTAL_MEM:
		if (too_short(m, it, 8, "feature TOTAL_MEM"))
			return 0;
		m->mem_kb = pf_pd_load64(m->pd, it->data);
		m->has_mem = 1;
		return 0;
	case PF_PD_FEAT_CLOCK_DATA:
		if (too_short(m, it, 24, "feature CLOCK_DATA"))
			return 0;
		if (pf_pd_load32(m->pd, it->data) != 1) {
			say(m, "feature CLOCK_DATA of version %u (1 known): skipped", pf_pd_load32(m->pd, it->data));
			return 0;
		}
		m->clockid = pf_pd_load32(m->pd, it->data + 4);
		m->tod_ns = pf_pd_load64(m->pd, it->data + 8);
		m->clockid_ns = pf_pd_load64(m->pd, it->data + 16);
		m->has_clock = 1;
		return 0;
	case PF_PD_FEAT_COMPRESSED:
		if (it->size >= 8 && pf_pd_load32(m->pd, it->data + 4) != 1)
			say(m, "feature COMPRESSED names compression type %u, not zstd (1): compressed records will not "
			    "decode", pf_pd_load32(m->pd, it->data + 4));
		return 0;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------------ */
/* META, the start, records                                                  */
/* ------------------------------------------------------------------------ */

static int build_meta(struct imp *m, struct pf_buf *b, uint16_t em)
{
	int rc = 0;
	const char *arch = m->feat_str[PF_PD_FEAT_ARCH];
	if (arch)
		rc |= pf_kv_add(b, "arch", arch);
	if (em)
		rc |= pf_kv_add_u64(b, "e_machine", em);
	if (m->feat_str[PF_PD_FEAT_OSRELEASE])
		rc |= pf_kv_add(b, "kernel_release", m->feat_str[PF_PD_FEAT_OSRELEASE]);
	if (m->feat_str[PF_PD_FEAT_HOSTNAME])
		rc |= pf_kv_add(b, "hostname", m->feat_str[PF_PD_FEAT_HOSTNAME]);
	if (m->has_nrcpus) {
		rc |= pf_kv_add_u64(b, "nr_cpus_online", m->nr_online);
		rc |= pf_kv_add_u64(b, "nr_cpus_available", m->nr_avail);
	}
	if (m->feat_str[PF_PD_FEAT_CPUDESC])
		rc |= pf_kv_add(b, "cpu_model", m->feat_str[PF_PD_FEAT_CPUDESC]);
	if (m->feat_str[PF_PD_FEAT_CPUID])
		rc |= pf_kv_add(b, "cpuid", m->feat_str[PF_PD_FEAT_CPUID]);
	if (m->has_mem)
		rc |= pf_kv_add_u64(b, "mem_total_kb", m->mem_kb);
	/* the clock of PERF_SAMPLE_TIME: the events' clockid, when they set one */
	int64_t clk = -1;
	uint32_t nev = pf_events_count(m->hev);
	int excl = nev > 0, chain = 0, dwarf = 0;
	uint32_t max_stack = 0;
	for (uint32_t i = 0; i < nev; i++) {
		const struct perf_event_attr *a = &pf_events_get(m->hev, i)->attr;
		if (a->use_clockid && clk < 0)
			clk = a->clockid;
		if (!a->exclude_kernel)
			excl = 0;
		if (a->sample_type & PERF_SAMPLE_CALLCHAIN) {
			chain = 1;
			if ((a->sample_type & PERF_SAMPLE_REGS_USER) && (a->sample_type & PERF_SAMPLE_STACK_USER))
				dwarf = 1;
			if (a->sample_max_stack > max_stack)
				max_stack = a->sample_max_stack;
		}
	}
	if (clk < 0 && m->has_clock)
		clk = m->clockid;
	if (clk >= 0)
		rc |= pf_kv_add_u64(b, "clock_id", (uint64_t)clk);
	if (m->has_clock && m->clockid == 1 /* CLOCK_MONOTONIC */) {
		rc |= pf_kv_add_u64(b, "clock_anchor_monotonic_ns", m->clockid_ns);
		rc |= pf_kv_add_u64(b, "clock_anchor_realtime_ns", m->tod_ns);
	}
	if (m->cmd_after)
		rc |= pf_kv_add(b, "cmdline", m->cmd_after);
	if (m->cmdline.len)
		rc |= pf_kv_add(b, "perf_cmdline", (const char *)m->cmdline.data);
	if (m->feat_str[PF_PD_FEAT_VERSION])
		rc |= pf_kv_add(b, "perf_version", m->feat_str[PF_PD_FEAT_VERSION]);
	rc |= pf_kv_add(b, "imported_from",
			pf_perfdata_info(m->pd)->pipe ? "perf.data (pipe mode)" : "perf.data");
	if (m->o.cmdline)
		rc |= pf_kv_add(b, "pfimport_cmdline", m->o.cmdline);
	char tv[64];
	snprintf(tv, sizeof tv, "pfimport (pftools) %s", pf_version());
	rc |= pf_kv_add(b, "tool_version", m->o.tool_version ? m->o.tool_version : tv);
	rc |= pf_kv_add_u64(b, "exclude_kernel", excl ? 1 : 0);
	if (chain)
		rc |= pf_kv_add(b, "callchain_mode", dwarf ? "dwarf" : "fp");
	if (chain && max_stack)
		rc |= pf_kv_add_u64(b, "perf_event_max_stack", max_stack);
	if (m->ktext)
		rc |= pf_kv_add_u64(b, "kernel_text", m->ktext);
	if (m->kbid_size) {
		char hex[129];
		for (size_t i = 0; i < m->kbid_size; i++)
			snprintf(hex + 2 * i, 3, "%02x", m->kbid[i]);
		rc |= pf_kv_add(b, "kernel_build_id", hex);
	}
	if (m->ksyms.len)
		rc |= pf_kv_add(b, "ksyms", "1");
	return rc ? -ENOMEM : 0;
}

/* Host-order attrs before the writer exists (META needs them). */
static int host_events(struct imp *m, struct pf_events *out)
{
	for (uint32_t i = 0; i < m->n_ev; i++) {
		struct imp_event *e = &m->ev[i];
		struct pf_buf b = { 0 };
		if (pf_buf_put_le32(&b, e->attr_size) < 0 || pf_buf_put_le32(&b, 0) < 0 || pf_buf_put_le16(&b, 0) < 0 ||
		    pf_buf_put_le16(&b, 0) < 0 || pf_buf_put(&b, e->attr, e->attr_size) < 0) {
			pf_buf_free(&b);
			return -ENOMEM;
		}
		if (m->swap)
			(void)pf_event_payload_swap(b.data, b.len);
		struct pf_section s = { .type = PF_SEC_EVENT, .data = b.data, .size = b.len };
		int rc = pf_events_add(out, &s);
		pf_buf_free(&b);
		if (rc == -ENOMEM)
			return rc;
	}
	return 0;
}

static int flush_build_ids(struct imp *m)
{
	int rc = 0;
	for (int i = 0; i < m->n_images && rc == 0; i++) {
		rc = pf_writer_section(m->w, PF_SEC_DSO_IMAGE, 0, m->images[i].data, m->images[i].len);
		m->st->dso_images += rc == 0;
		pf_buf_free(&m->images[i]);
	}
	m->n_images = 0;
	if (!m->bid.len || rc < 0)
		return rc;
	rc = pf_writer_section(m->w, PF_SEC_BUILDID, 0, m->bid.data, m->bid.len);
	if (rc == 0 && m->st)
		m->st->build_ids += m->n_bid;
	m->bid.len = 0;
	m->n_bid = 0;
	return rc;
}

static int put_records(struct imp *m, const uint8_t *data, size_t size, uint64_t off);

/* The kernel's _text in a run of records (file order and byte order),
 * before the start: evs are the events in host order. */
static int scan_early(struct imp *m, struct pf_events *evs, const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	const uint8_t *h = data;
	struct pf_buf tmp = { 0 };
	if (m->swap) {
		if (pf_buf_put(&tmp, data, size) < 0)
			return -ENOMEM;
		(void)pf_records_swap(evs, tmp.data, size);
		h = tmp.data;
	}
	struct pf_rec_iter it;
	const struct perf_event_header *r;
	pf_rec_iter_init(&it, h, size);
	while (pf_rec_iter_next(&it, &r) > 0) {
		const struct pf_event *ev = pf_events_find(evs, r);
		if ((r->type == PERF_RECORD_MMAP || r->type == PERF_RECORD_MMAP2) && !m->ktext) {
			struct pf_mmap mm;
			if (pf_mmap_decode(ev, r, &mm) == 0 && mm.pid == UINT32_MAX && mm.filename_len >= 17 &&
			    memcmp(mm.filename, "[kernel.kallsyms]", 17) == 0 && mm.pgoff)
				m->ktext = mm.pgoff; /* perf: the address of its reference symbol, _text */
		}
	}
	pf_buf_free(&tmp);
	return 0;
}

/* ---- JIT maps (/tmp/perf-PID.map) ---- */

/* The slot of pid (an empty one when it is not there). */
static struct proc_life *proc_slot(struct imp *m, uint32_t pid)
{
	size_t mask = m->cap_procs - 1, h = (size_t)(pid * 0x9e3779b1u) & mask;
	while (m->procs[h].pid && m->procs[h].pid != pid)
		h = (h + 1) & mask;
	return &m->procs[h];
}

/* Notes a record of process pid at time t (0: unknown). @return 0, -ENOMEM. */
static int proc_note(struct imp *m, uint32_t pid, uint64_t t, int started, int sampled)
{
	if (!pid || pid == UINT32_MAX)
		return 0;
	if ((m->n_procs + 1) * 2 > m->cap_procs) {
		size_t ocap = m->cap_procs, ncap = ocap ? 2 * ocap : 64;
		struct proc_life *old = m->procs, *n = calloc(ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->procs = n;
		m->cap_procs = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].pid)
				*proc_slot(m, old[i].pid) = old[i];
		free(old);
	}
	struct proc_life *p = proc_slot(m, pid);
	if (!p->pid) {
		p->pid = pid;
		m->n_procs++;
	}
	if (t && (!p->first || t < p->first))
		p->first = t;
	if (t > p->last)
		p->last = t;
	p->started |= started;
	p->sampled |= sampled;
	return 0;
}

static int proc_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct proc_life *)a)->pid, y = ((const struct proc_life *)b)->pid;
	return x < y ? -1 : x > y;
}

/* Copies /tmp/perf-PID.map of each sampled process into a PERFMAP section
 * (format/pfile.md 4.12), as pfrec does, when it is proven to be the map
 * that process wrote: the recording was made on this machine and boot, the
 * file is opened by tools/common/untrusted.h's rule (no symbolic link, a
 * regular file of one name, owned by root or by the user importing or the
 * owner of the input file), and it was last written while the process
 * lived: not after its last record, nor before its first one when its
 * start (exec or fork) was recorded (PFIMPORT_JIT_SLACK_NS either way, for
 * the clocks). Each map refused is told with the reason. */
#define PFIMPORT_JIT_SLACK_NS 500000000ull
#define PFIMPORT_JIT_MAX_BYTES (64u << 20)
static int import_perfmaps(struct imp *m)
{
	if (m->o.no_perf_maps || !m->n_procs)
		return 0;
	/* in pid order: the same file for the same input */
	struct proc_life *v = malloc(m->n_procs * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < m->cap_procs; i++)
		if (m->procs[i].pid && m->procs[i].sampled)
			v[n++] = m->procs[i];
	qsort(v, n, sizeof(*v), proc_cmp);
	int rc = 0;
	uid_t owners[2];
	size_t n_owners = 0;
	owners[n_owners++] = getuid();
	if (m->o.input_owner >= 0 && (uid_t)m->o.input_owner != owners[0])
		owners[n_owners++] = (uid_t)m->o.input_owner;
	for (size_t i = 0; i < n && !rc; i++) {
		char path[48];
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", v[i].pid);
		struct stat st;
		const char *why;
		int fd = pf_open_untrusted(AT_FDCWD, path, PF_UNTRUSTED_ONE_LINK | PF_UNTRUSTED_TRUNCATE, owners,
					   n_owners, PFIMPORT_JIT_MAX_BYTES, &st, &why);
		if (fd == -ENOENT)
			continue;
		if (!m->same_boot) {
			if (fd >= 0)
				close(fd);
			say(m, "%s: not imported: not the recording's machine and boot (%s)", path, m->boot_why);
			continue;
		}
		if (fd < 0) {
			if (fd == -EPERM)
				say(m, "%s: not imported: owned by uid %u, not by root, the importing user or the input's "
				    "owner", path, (unsigned)st.st_uid);
			else
				say(m, "%s: not imported: %s", path, why);
			continue;
		}
		uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
		uint64_t first = v[i].first + m->real_minus_mono, last = v[i].last + m->real_minus_mono;
		if (mtime > last + PFIMPORT_JIT_SLACK_NS || (v[i].started && mtime + PFIMPORT_JIT_SLACK_NS < first)) {
			close(fd);
			double d = mtime > last ? (double)(mtime - last) / 1e9 : (double)(first - mtime) / 1e9;
			say(m, "%s: not imported: last written %.3f s %s the process's %s record: it may not be the "
			    "map of the code that ran", path, d, mtime > last ? "after" : "before",
			    mtime > last ? "last" : "first");
			continue;
		}
		char *text = NULL;
		size_t len = 0;
		size_t cap = (size_t)st.st_size < PFIMPORT_JIT_MAX_BYTES ? (size_t)st.st_size : PFIMPORT_JIT_MAX_BYTES;
		if (cap && !(text = malloc(cap))) {
			close(fd);
			rc = -ENOMEM;
			break;
		}
		while (len < cap) {
			ssize_t r = read(fd, text + len, cap - len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			len += (size_t)r;
		}
		close(fd);
		if ((uint64_t)st.st_size > PFIMPORT_JIT_MAX_BYTES) {
			while (len && text[len - 1] != '\n')
				len--;
			say(m, "%s: over %u MiB: only its first %zu bytes are imported", path, PFIMPORT_JIT_MAX_BYTES >> 20,
			    len);
		}
		if (len) {
			struct pf_buf b = { 0 };
			rc = pf_maps_encode(&b, v[i].pid, v[i].last, text, len);
			if (!rc)
				rc = pf_writer_section(m->w, PF_SEC_PERFMAP, 0, b.data, b.len);
			pf_buf_free(&b);
			if (!rc)
				m->st->perf_maps++;
		}
		free(text);
	}
	free(v);
	return rc;
}

/* Whether this is the recording's machine and boot (proof.h), and then
 * the offset from perf's clock to the wall clock: perf's clock is the
 * kernel's local clock, which counts as CLOCK_MONOTONIC does within one
 * boot. */
static void find_boot(struct imp *m, struct pf_events *evs)
{
	/* the clock of the record times: the events' clockid when they set
	 * one (perf record -k), else perf's, counted as CLOCK_MONOTONIC */
	clockid_t clk = CLOCK_MONOTONIC;
	for (uint32_t i = 0; i < pf_events_count(evs); i++) {
		const struct perf_event_attr *a = &pf_events_get(evs, i)->attr;
		if (a->use_clockid) {
			clk = (clockid_t)a->clockid;
			break;
		}
	}
	m->same_boot = pf_proof_same_boot(m->feat_str[PF_PD_FEAT_HOSTNAME], m->feat_str[PF_PD_FEAT_OSRELEASE], m->ktext,
					  m->boot_why, sizeof(m->boot_why));
	if (!m->same_boot)
		return;
	struct timespec mo, re;
	if (clock_gettime(clk, &mo) < 0 || clock_gettime(CLOCK_REALTIME, &re) < 0) {
		m->same_boot = 0;
		snprintf(m->boot_why, sizeof(m->boot_why), "the clocks cannot be read");
		return;
	}
	uint64_t mono = (uint64_t)mo.tv_sec * 1000000000u + (uint64_t)mo.tv_nsec;
	uint64_t real = (uint64_t)re.tv_sec * 1000000000u + (uint64_t)re.tv_nsec;
	m->real_minus_mono = real - mono;
}

/* The KSYMS section of an import: this machine's kernel symbols, when the
 * running kernel is the one recorded: perf's table gives its build-id and
 * it is the running kernel's (then, after a reboot, the symbols are shifted
 * by the recorded _text minus the running one), or none was recorded and
 * this is the recording's boot. kernel: whether some event samples the
 * kernel. @return 0 or -ENOMEM. */
static int kernel_snapshot(struct imp *m, int kernel)
{
	if (!kernel || m->o.no_kallsyms)
		return 0;
	uint8_t run[64];
	size_t rn = pf_proof_note_build_id("/sys/kernel/notes", run);
	uint64_t now = 0, shift = 0;
	(void)pf_proof_running_text(&now);
	const char *how;
	char hex[129] = "";
	for (size_t i = 0; i < rn; i++)
		snprintf(hex + 2 * i, 3, "%02x", run[i]);
	if (m->kbid_size) {
		if (!rn || rn != m->kbid_size || memcmp(run, m->kbid, rn) != 0) {
			say(m, "kernel symbols: not stored: the recorded kernel (build-id in perf's table) is not the running "
			    "one (%s); pfsym --kallsyms FILE or --vmlinux FILE of the recorded kernel names its frames",
			    rn ? hex : "build-id unknown");
			return 0;
		}
		if (!m->ktext || !now) {
			say(m, "kernel symbols: not stored: the recorded kernel is the running one (build-id %s) but %s has "
			    "no _text to place its symbols", hex, !m->ktext ? "the recording" : "/proc/kallsyms");
			return 0;
		}
		shift = m->ktext - now;
		how = "build-id";
	} else if (m->same_boot) {
		how = "boot";
		if (rn) {
			memcpy(m->kbid, run, rn);
			m->kbid_size = (uint8_t)rn;
		}
	} else {
		say(m, "kernel symbols: not stored: no kernel build-id recorded and %s", m->boot_why);
		return 0;
	}
	struct pf_ksyms k = { 0 };
	char err[256];
	int rc = pf_ksnap_read(&k, shift, err, sizeof(err));
	if (rc == -ENOMEM) {
		pf_ksyms_free(&k);
		return rc;
	}
	if (rc < 0 || k.hidden || !k.n_syms) {
		say(m, "kernel symbols: not stored: /proc/kallsyms: %s", rc == -EBADMSG ? err : rc < 0 ? strerror(-rc)
			: "every address is 0 (kernel.kptr_restrict)");
		pf_ksyms_free(&k);
		return 0;
	}
	rc = pf_ksyms_encode(&k, &m->ksyms);
	if (rc == 0) {
		if (!strcmp(how, "boot"))
			say(m, "kernel symbols: /proc/kallsyms stored (%u text symbols, %u modules): proof: this is the "
			    "recording's machine and boot", k.n_syms, k.n_mods);
		else
			say(m, "kernel symbols: /proc/kallsyms stored (%u text symbols, %u modules): proof: build-id %s, the "
			    "recorded kernel's%s", k.n_syms, k.n_mods, hex, shift ? "; rebooted since: shifted by the recorded "
			    "_text minus the running one, modules left out" : "");
	}
	pf_ksyms_free(&k);
	return rc;
}

/* ---- the inode proof of files recorded without a build-id (proof.h) ---- */

/* Whether perf's build-id table named `path` (len bytes). */
static int perf_has_bid(const struct imp *m, const char *path, size_t len)
{
	for (uint32_t i = 0; i < m->n_pbid; i++)
		if (strlen(m->pbid[i]) == len && memcmp(m->pbid[i], path, len) == 0)
			return 1;
	return 0;
}

static struct cand *cand_find(struct imp *m, const char *path, size_t len)
{
	for (uint32_t i = 0; i < m->n_cand; i++)
		if (strlen(m->cand[i].path) == len && memcmp(m->cand[i].path, path, len) == 0)
			return &m->cand[i];
	return NULL;
}

/* Notes an executable MMAP2 without a build-id (host order) as a file to
 * prove. @return 0 or -ENOMEM. */
static int cand_note(struct imp *m, const struct pf_mmap *mm, uint64_t t)
{
	size_t n = mm->filename_len;
	if (!n || mm->filename[0] != '/' || (n > 10 && memcmp(mm->filename + n - 10, " (deleted)", 10) == 0) ||
	    strncmp(mm->filename, "//anon", 6) == 0 || strncmp(mm->filename, "/memfd:", 7) == 0 ||
	    perf_has_bid(m, mm->filename, n))
		return 0;
	struct cand *c = cand_find(m, mm->filename, n);
	if (c) {
		if (c->state == CAND_WAIT && (c->maj != mm->maj || c->min != mm->min || c->ino != mm->ino))
			c->state = CAND_CONFLICT;
		return 0;
	}
	if (m->n_cand == m->cap_cand) {
		size_t nc = m->cap_cand ? m->cap_cand * 2 : 16;
		struct cand *v = realloc(m->cand, nc * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->cand = v;
		m->cap_cand = nc;
	}
	c = &m->cand[m->n_cand];
	memset(c, 0, sizeof(*c));
	if (!(c->path = strndup(mm->filename, n)))
		return -ENOMEM;
	c->maj = mm->maj;
	c->min = mm->min;
	c->ino = mm->ino;
	c->t = t;
	m->n_cand++;
	return 0;
}

/* Proves the files noted whose time is known (their MMAP2's, else the
 * earliest record time seen: a mapping perf synthesized when it started),
 * adding a BUILDID entry (flag INODE) for each proven one. */
static int cand_prove(struct imp *m)
{
	for (uint32_t i = 0; i < m->n_cand; i++) {
		struct cand *c = &m->cand[i];
		uint64_t t = c->t ? c->t : m->tmin;
		if (c->state == CAND_DONE || !t)
			continue;
		if (c->state == CAND_CONFLICT) {
			c->state = CAND_DONE;
			if (!(c->why = strdup("its mappings name different files (device, inode)")))
				return -ENOMEM;
			continue;
		}
		c->state = CAND_DONE;
		char why[400] = "";
		uint8_t bid[64];
		int n = 0, ok = 0;
		if (!m->same_boot) {
			snprintf(why, sizeof(why), "not this machine and boot: %s", m->boot_why);
		} else {
			int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd < 0) {
				snprintf(why, sizeof(why), "%s", strerror(errno));
			} else {
				ok = pf_proof_file(fd, c->maj, c->min, c->ino, t + m->real_minus_mono, why, sizeof(why));
				if (ok) {
					struct stat st;
					ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
					n = ok ? pf_build_id_fd(fd, bid) : 0;
					if (!ok)
						snprintf(why, sizeof(why), "not a regular file");
					else if (n <= 0)
						snprintf(why, sizeof(why), "the file has no build-id to record");
					ok = ok && n > 0;
				}
				close(fd);
			}
		}
		if (!ok) {
			if (!(c->why = strdup(why)))
				return -ENOMEM;
			continue;
		}
		struct pf_buildid e;
		memset(&e, 0, sizeof(e));
		memcpy(e.build_id, bid, (size_t)n);
		e.build_id_size = (uint8_t)n;
		e.flags = PF_BUILDID_INODE;
		e.path = c->path;
		e.path_len = strlen(c->path);
		if (pf_buildid_encode(&m->ibid, &e) < 0)
			return -ENOMEM;
		m->st->inode_proofs++;
		char hex[129];
		for (int k = 0; k < n; k++)
			snprintf(hex + 2 * k, 3, "%02x", bid[k]);
		say(m, "%s: proof: inode (device %x:%x, inode %llu, unchanged since before it was mapped, in the "
		    "recording's boot): build-id %s recorded", c->path, c->maj, c->min, (unsigned long long)c->ino, hex);
	}
	if (!m->ibid.len)
		return 0;
	int rc = pf_writer_section(m->w, PF_SEC_BUILDID, 0, m->ibid.data, m->ibid.len);
	m->ibid.len = 0;
	return rc;
}

/* At the end: the files no proof vouches for, and why (a stream may name
 * a file's build-id after its records: then it is not one of them). */
static void cand_report(struct imp *m)
{
	for (uint32_t i = 0; i < m->n_cand; i++) {
		const struct cand *c = &m->cand[i];
		if (!c->why || perf_has_bid(m, c->path, strlen(c->path)))
			continue;
		m->st->inode_unproven++;
		say(m, "%s: proof: none (no build-id recorded; inode proof: %s): its frames stay unnamed (pfsym --force "
		    "uses it)", c->path, c->why);
	}
}

static int start_with(struct imp *m, const uint8_t *first, size_t first_size, char *msg, size_t msg_size);

static int start(struct imp *m, char *msg, size_t msg_size)
{
	return start_with(m, NULL, 0, msg, msg_size);
}

/* The start; first: the run of records that made it (it follows the
 * pending ones), or NULL. */
static int start_with(struct imp *m, const uint8_t *first, size_t first_size, char *msg, size_t msg_size)
{
	if (m->started)
		return 0;
	m->started = 1;
	const struct pf_perfdata_info *info = pf_perfdata_info(m->pd);
	uint16_t em = 0;
	uint8_t ws = 0;
	const char *arch = m->feat_str[PF_PD_FEAT_ARCH];
	if (!arch)
		say(m, "no ARCH feature: the ELF machine and word size of this machine assumed");
	else if (pf_arch_machine(arch, &em, &ws) < 0)
		say(m, "architecture '%s' unknown: the ELF machine and word size of this machine assumed", arch);
	int rc;
	struct pf_events *tmp;
	if ((rc = pf_events_new(&tmp)) < 0)
		return rc;
	if ((rc = host_events(m, tmp)) < 0) {
		pf_events_delete(tmp);
		return rc;
	}
	if ((rc = scan_early(m, tmp, m->pending.data, m->pending.len)) < 0 ||
	    (rc = scan_early(m, tmp, first, first_size)) < 0) {
		pf_events_delete(tmp);
		return rc;
	}
	find_boot(m, tmp);
	int kernel = 0;
	for (uint32_t i = 0; i < pf_events_count(tmp); i++)
		kernel |= !pf_events_get(tmp, i)->attr.exclude_kernel;
	if ((rc = kernel_snapshot(m, kernel)) < 0) {
		pf_events_delete(tmp);
		return rc;
	}
	struct pf_events *saved = m->hev;
	m->hev = tmp;
	int dwarf = 0;
	for (uint32_t i = 0; i < pf_events_count(tmp); i++) {
		const struct perf_event_attr *a = &pf_events_get(tmp, i)->attr;
		if ((a->sample_type & PERF_SAMPLE_STACK_USER) && a->sample_stack_user)
			dwarf = 1;
	}
	struct pf_buf meta = { 0 };
	rc = build_meta(m, &meta, em ? em : pf_host_e_machine());
	m->hev = saved;
	pf_events_delete(tmp);
	if (rc < 0) {
		pf_buf_free(&meta);
		return rc;
	}
	struct pf_writer_opts wo = PF_WRITER_OPTS_INIT;
	wo.zstd_level = m->o.zstd_level;
	wo.endian = info->endian;
	wo.word_size = ws;
	wo.e_machine = em;
	wo.transform = m->o.transform;
	wo.records_frame_bytes = m->o.records_frame_bytes ? m->o.records_frame_bytes
				 : dwarf && m->o.transform ? DWARF_FRAME_BYTES : 0;
	rc = pf_writer_open_fd(&m->w, m->out_fd, &wo);
	if (rc == 0)
		rc = pf_writer_section(m->w, PF_SEC_META, 0, meta.data, meta.len);
	pf_buf_free(&meta);
	if (rc < 0)
		return rc == -ENOMEM ? rc : write_failed(m, rc, msg, msg_size);
	if (m->n_ev == 0)
		say(m, "no attrs: the records are kept, but no event describes them");
	for (uint32_t i = 0; i < m->n_ev; i++)
		if ((rc = write_event(m, i)) < 0)
			return rc == -ENOMEM ? rc : write_failed(m, rc, msg, msg_size);
	if (m->ksyms.len) {
		rc = pf_writer_section(m->w, PF_SEC_KSYMS, 0, m->ksyms.data, m->ksyms.len);
		pf_buf_free(&m->ksyms);
		if (rc < 0)
			return rc == -ENOMEM ? rc : write_failed(m, rc, msg, msg_size);
	}
	if ((rc = flush_build_ids(m)) < 0)
		return rc == -ENOMEM ? rc : write_failed(m, rc, msg, msg_size);
	if (m->pending.len) {
		rc = put_records(m, m->pending.data, m->pending.len, m->pending_off);
		pf_buf_free(&m->pending);
		if (rc < 0)
			return rc == -ENOMEM ? rc : write_failed(m, rc, msg, msg_size);
	}
	return 0;
}

/* Whether a host-order LOST_SAMPLES record is one that perf record wrote
 * itself at the end, from an event's lost-sample counter (read_format
 * PERF_FORMAT_LOST): no BPF-filter flag (misc bit 15) and a sample_id of
 * time 0, where the kernel's own carry the time they were written. The
 * counter counts the samples a full ring buffer dropped, which the kernel's
 * LOST records count already. */
static int perf_lost_counter(const struct pf_event *ev, const struct perf_event_header *r)
{
	return r->type == PERF_RECORD_LOST_SAMPLES && ev && !(r->misc & 0x8000) &&
	       (ev->attr.read_format & PERF_FORMAT_LOST) && ev->attr.sample_id_all &&
	       (ev->attr.sample_type & PERF_SAMPLE_TIME) && pf_record_time(ev, r) == 0;
}

/* The totals of whole kernel records (file order) and the writer. A SAMPLE
 * whose fields run past its size (its framing intact, its content not) is
 * left out and is damage, as perf report refuses such a file: a reader
 * would drop it anyway. `off` is the input offset of data[0] (its records'
 * offsets are told from it; inside COMPRESSED records, that of the
 * decompressed stream's run). */
static int put_records(struct imp *m, const uint8_t *data, size_t size, uint64_t off)
{
	const uint8_t *h = data;
	if (m->swap) {
		m->scratch.len = 0;
		if (pf_buf_put(&m->scratch, data, size) < 0)
			return -ENOMEM;
		(void)pf_records_swap(m->hev, m->scratch.data, size);
		h = m->scratch.data;
	}
	struct pf_import_stats *st = m->st;
	struct pf_rec_iter it;
	const struct perf_event_header *r;
	size_t kept_to = 0; /* data[0..kept_to) is in m->kept when a record was left out */
	int left_out = 0;
	pf_rec_iter_init(&it, h, size);
	while (pf_rec_iter_next(&it, &r) > 0) {
		const struct pf_event *ev = pf_events_find(m->hev, r);
		size_t at = it.offset - r->size;
		int bad = 0, have_smp = 0;
		struct pf_sample smp;
		if (r->type == PERF_RECORD_SAMPLE && ev) {
			have_smp = pf_sample_decode(ev, r, &smp) == 0;
			if (!have_smp) {
				bad = 1;
				st->bad_samples++;
				damage(m, off + at,
				       "a SAMPLE record of %u bytes whose fields run past it (its event's sample_type "
				       "asks for more): left out, damaged",
				       (unsigned)r->size);
			}
		}
		if (bad || perf_lost_counter(ev, r)) {
			if (!bad) {
				uint64_t v = 0;
				if (r->size >= 16)
					memcpy(&v, (const uint8_t *)r + 8, 8);
				m->counter_lost += v;
				st->lost_counters++;
			}
			if (!left_out) {
				m->kept.len = 0;
				left_out = 1;
			}
			if (pf_buf_put(&m->kept, data + kept_to, at - kept_to) < 0)
				return -ENOMEM;
			kept_to = it.offset;
			continue;
		}
		st->records++;
		if (r->type < 32)
			st->records_by_type[r->type]++;
		uint64_t v;
		switch (r->type) {
		case PERF_RECORD_SAMPLE:
			st->samples++;
			break;
		case PERF_RECORD_LOST:
			if (r->size >= 24) {
				memcpy(&v, (const uint8_t *)r + 16, 8);
				st->lost_samples += v;
				m->records_lost += v;
			}
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (r->size >= 16) {
				memcpy(&v, (const uint8_t *)r + 8, 8);
				st->lost_samples += v;
			}
			break;
		case PERF_RECORD_THROTTLE:
			m->throttles++;
			break;
		case PERF_RECORD_MMAP2:
			if (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				st->mmap_build_ids++;
			} else {
				struct pf_mmap mm;
				if (pf_mmap_decode(ev, r, &mm) == 0 && mm.pid != UINT32_MAX && (mm.prot & PROT_EXEC) &&
				    cand_note(m, &mm, ev ? pf_record_time(ev, r) : 0) < 0)
					return -ENOMEM;
			}
			break;
		}
		uint64_t t = ev ? pf_record_time(ev, r) : 0;
		if (t) {
			if (!m->tmin || t < m->tmin)
				m->tmin = t;
			if (t > m->tmax)
				m->tmax = t;
		}
		if (have_smp) {
			if ((smp.present & PERF_SAMPLE_TID) && proc_note(m, smp.pid, t, 0, 1) < 0)
				return -ENOMEM;
		} else if (ev && r->type != PERF_RECORD_SAMPLE) {
			/* the process's start: its exec, or its fork (the child's pid
			 * first in the FORK record) */
			uint32_t pid = 0;
			int started = 0;
			struct pf_sample_id sid;
			if (r->type == PERF_RECORD_FORK && r->size >= 16) {
				memcpy(&pid, (const uint8_t *)r + 8, 4);
				started = 1;
			} else if (pf_sample_id_decode(ev, r, &sid) == 0 && (sid.present & PERF_SAMPLE_TID)) {
				pid = sid.pid;
				started = r->type == PERF_RECORD_COMM && (r->misc & PERF_RECORD_MISC_COMM_EXEC);
			}
			if (pid && proc_note(m, pid, t, started, 0) < 0)
				return -ENOMEM;
		}
	}
	/* the build-ids of files proven by inode go before the records
	 * that map them: a reader binds a mapping to its file at its first
	 * sample */
	int prc = cand_prove(m);
	if (prc < 0)
		return prc;
	if (!left_out)
		return pf_writer_records(m->w, data, size);
	if (pf_buf_put(&m->kept, data + kept_to, size - kept_to) < 0)
		return -ENOMEM;
	return m->kept.len ? pf_writer_records(m->w, m->kept.data, m->kept.len) : 0;
}

/* Whether a run of records (file order) holds a sample. */
static int has_sample(const struct imp *m, const uint8_t *p, size_t size)
{
	for (size_t off = 0; off + 8 <= size;) {
		if (pf_pd_load32(m->pd, p + off) == PERF_RECORD_SAMPLE)
			return 1;
		off += pf_pd_load16(m->pd, p + off + 6);
	}
	return 0;
}

/* The records of a run whose types libpfile knows (pf_record_type_name()):
 * those of other types (a kernel newer than libpfile) are left out with a
 * notice, as a reader could not tell their fields from their trailer.
 * @return 0 with *data and *size set (the run itself, or a copy), -ENOMEM. */
static int known_records(struct imp *m, const uint8_t **data, size_t *size, uint64_t off)
{
	const uint8_t *p = *data;
	size_t n = *size, o = 0;
	int all = 1;
	while (o + 8 <= n) {
		uint32_t t = pf_pd_load32(m->pd, p + o);
		if (!pf_record_type_name(t)) {
			all = 0;
			if (t < 64 && !m->told_kernel[t]) {
				m->told_kernel[t] = 1;
				say(m, "offset %llu: kernel record type %u unknown to pfimport: skipped",
				    (unsigned long long)off, t);
			}
		}
		o += pf_pd_load16(m->pd, p + o + 6);
	}
	if (all)
		return 0;
	m->known.len = 0;
	for (o = 0; o + 8 <= n;) {
		uint32_t t = pf_pd_load32(m->pd, p + o);
		uint16_t sz = pf_pd_load16(m->pd, p + o + 6);
		if (pf_record_type_name(t) && pf_buf_put(&m->known, p + o, sz) < 0)
			return -ENOMEM;
		o += sz;
	}
	*data = m->known.data;
	*size = m->known.len;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* perf's own records                                                        */
/* ------------------------------------------------------------------------ */

static void tell_once(struct imp *m, uint32_t type, const char *what)
{
	uint32_t k = type - 64;
	if (k < 128 && m->told[k])
		return;
	if (k < 128)
		m->told[k] = 1;
	say(m, "%s", what);
}

static int user_record(struct imp *m, const struct pf_pd_item *it, char *msg, size_t msg_size)
{
	uint32_t type = it->type;
	if (type - 64 < 32)
		m->st->perf_records[type - 64]++;
	else
		m->st->perf_records_other++;
	const uint8_t *p = it->data;
	switch (type) {
	case PF_PD_HEADER_BUILD_ID: {
		size_t pos = 0;
		struct pf_pd_build_id b;
		if (pf_pd_build_id_next(m->pd, p, it->size, &pos, &b) != 1) {
			damage(m, it->offset, "a HEADER_BUILD_ID record of %zu bytes: damaged", it->size);
			return 0;
		}
		if (add_build_id(m, &b, it->offset) < 0)
			return -ENOMEM;
		if (m->started && (m->bid.len >= BUILDID_FLUSH || m->n_images)) {
			int rc = flush_build_ids(m);
			if (rc < 0)
				return write_failed(m, rc, msg, msg_size);
		}
		return 0;
	}
	case PF_PD_EVENT_UPDATE: {
		if (too_short(m, it, 24, "an EVENT_UPDATE record"))
			return 0;
		if (pf_pd_load64(m->pd, p + 8) != 2 /* PERF_EVENT_UPDATE__NAME */)
			return 0;
		uint64_t id = pf_pd_load64(m->pd, p + 16);
		const char *s = (const char *)p + 24;
		const char *z = memchr(s, 0, it->size - 24);
		size_t len = z ? (size_t)(z - s) : it->size - 24;
		for (uint32_t i = 0; i < m->n_ev; i++) {
			struct imp_event *e = &m->ev[i];
			if (!has_id(m, e, id))
				continue;
			if (e->written) {
				say(m, "offset %llu: the name '%.*s' of event '%s' came after its EVENT section: not used",
				    (unsigned long long)it->offset, (int)(len > 100 ? 100 : len), s, e->name);
			} else {
				copy_name(e->name, sizeof(e->name), s, len);
				e->name_rank = 2;
			}
			break;
		}
		return 0;
	}
	case PF_PD_HEADER_EVENT_TYPE: {
		if (too_short(m, it, 16 + 1, "a HEADER_EVENT_TYPE record"))
			return 0;
		if (m->n_tp < 1024) {
			struct tp_name *n = realloc(m->tp, (m->n_tp + 1) * sizeof(*n));
			if (!n)
				return -ENOMEM;
			m->tp = n;
			n[m->n_tp].id = pf_pd_load64(m->pd, p + 8);
			size_t l = it->size - 16 < 64 ? it->size - 16 : 64;
			const char *s = (const char *)p + 16;
			const char *z = memchr(s, 0, l);
			copy_name(n[m->n_tp].name, sizeof(n[m->n_tp].name), s, z ? (size_t)(z - s) : l);
			m->n_tp++;
		}
		return 0;
	}
	case PF_PD_FINISHED_INIT:
		return start(m, msg, msg_size);
	case PF_PD_HEADER_TRACING_DATA:
	case PF_PD_FINISHED_ROUND:
	case PF_PD_ID_INDEX:
	case PF_PD_THREAD_MAP:
	case PF_PD_CPU_MAP:
	case PF_PD_TIME_CONV:
		return 0;
	case PF_PD_AUXTRACE_INFO:
	case PF_PD_AUXTRACE:
	case PF_PD_AUXTRACE_ERROR:
		tell_once(m, PF_PD_AUXTRACE, "AUX area trace data (AUXTRACE records): not imported");
		return 0;
	case PF_PD_STAT_CONFIG:
	case PF_PD_STAT:
	case PF_PD_STAT_ROUND:
		tell_once(m, PF_PD_STAT, "perf stat record data (STAT records): not imported");
		return 0;
	default: {
		char line[128];
		snprintf(line, sizeof(line), "offset %llu: record type %u unknown to pfimport: skipped (%zu bytes)",
			 (unsigned long long)it->offset, type, it->size);
		tell_once(m, type, line);
		return 0;
	}
	}
}

/* ------------------------------------------------------------------------ */

static void imp_free(struct imp *m)
{
	for (uint32_t i = 0; i < m->n_ev; i++)
		free(m->ev[i].attr);
	free(m->ev);
	pf_events_delete(m->hev);
	for (int f = 0; f < PF_PD_FEAT_KNOWN; f++)
		free(m->feat_str[f]);
	pf_buf_free(&m->cmdline);
	free(m->cmd_after);
	free(m->ed);
	free(m->tp);
	pf_buf_free(&m->bid);
	for (int i = 0; i < m->n_images; i++)
		pf_buf_free(&m->images[i]);
	pf_buf_free(&m->pending);
	pf_buf_free(&m->scratch);
	pf_buf_free(&m->known);
	pf_buf_free(&m->kept);
	for (uint32_t i = 0; i < m->n_pbid; i++)
		free(m->pbid[i]);
	free(m->pbid);
	for (uint32_t i = 0; i < m->n_cand; i++) {
		free(m->cand[i].path);
		free(m->cand[i].why);
	}
	free(m->cand);
	free(m->procs);
	pf_buf_free(&m->ibid);
	pf_buf_free(&m->ksyms);
}

static int finish(struct imp *m, int in_rc, char *msg, size_t msg_size)
{
	int rc = start(m, msg, msg_size);
	if (rc == 0)
		rc = flush_build_ids(m);
	if (rc == 0 && m->counter_lost > m->records_lost)
		say(m, "perf's lost-sample counters count %llu lost samples, its LOST records %llu: the difference "
		    "is not in the import", (unsigned long long)m->counter_lost, (unsigned long long)m->records_lost);
	if (rc == 0)
		cand_report(m);
	if (rc == 0)
		rc = import_perfmaps(m);
	if (rc == 0 && m->guest_bids)
		say(m, "%llu build-ids of guest machines: not imported", (unsigned long long)m->guest_bids);
	int damaged = in_rc < 0 || m->dmg.rc;
	if (rc == 0 && !damaged) {
		struct pf_end e;
		memset(&e, 0, sizeof(e));
		e.start_time = m->tmin;
		e.stop_time = m->tmax;
		e.duration_ns = m->tmax > m->tmin ? m->tmax - m->tmin : 0;
		e.samples = m->st->samples;
		e.lost_samples = m->st->lost_samples;
		e.throttle_events = m->throttles;
		e.records = m->st->records;
		memcpy(e.records_by_type, m->st->records_by_type, sizeof(e.records_by_type));
		struct pf_buf b = { 0 };
		rc = pf_end_encode(&b, &e);
		if (rc == 0)
			rc = pf_writer_section(m->w, PF_SEC_END, 0, b.data, b.len);
		pf_buf_free(&b);
		if (rc == 0)
			m->st->complete = 1;
	}
	int crc = 0;
	if (m->w) {
		int frc = pf_writer_flush(m->w);
		m->st->bytes_out = pf_writer_bytes(m->w);
		crc = pf_writer_close(m->w);
		if (!crc)
			crc = frc;
	}
	m->w = NULL;
	if (rc == 0)
		rc = crc;
	if (rc < 0 && rc != -ENOMEM && !m->st->output_error)
		write_failed(m, rc, msg, msg_size);
	if (rc == -ENOMEM && msg && msg_size)
		snprintf(msg, msg_size, "%s: out of memory", in_name(m));
	if (rc < 0)
		return rc;
	if (damaged) {
		/* the first damage by offset: the reader's or the converter's */
		uint64_t roff = pf_perfdata_bad_offset(m->pd);
		if (in_rc < 0 && (!m->dmg.rc || roff <= m->dmg.off)) {
			if (msg && msg_size)
				snprintf(msg, msg_size, "%s", pf_perfdata_errmsg(m->pd));
			return in_rc;
		}
		if (msg && msg_size)
			snprintf(msg, msg_size, "%s", m->dmg.msg);
		return m->dmg.rc;
	}
	return 0;
}

int pf_import(pf_perfdata *pd, int out_fd, const struct pf_import_opts *o, struct pf_import_stats *st, char *msg,
	      size_t msg_size)
{
	struct pf_import_stats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (msg && msg_size)
		msg[0] = 0;
	if (!pd || out_fd < 0)
		return -EINVAL;
	struct imp m;
	memset(&m, 0, sizeof(m));
	m.pd = pd;
	m.st = st;
	m.out_fd = out_fd;
	m.o = (struct pf_import_opts)PF_IMPORT_OPTS_INIT;
	if (o) {
		size_t n = o->sz < sizeof(m.o) ? o->sz : sizeof(m.o);
		memcpy(&m.o, o, n);
	}
	m.swap = pf_perfdata_info(pd)->endian != pf_host_endian();
	struct pf_pd_item it;
	int rc = pf_events_new(&m.hev), in_rc;
	if (rc < 0)
		return rc;
	while ((in_rc = pf_perfdata_next(pd, &it)) > 0) {
		switch (it.kind) {
		case PF_PD_ITEM_ATTR:
			if ((rc = add_event(&m, &it)) < 0)
				break;
			if (m.started && m.n_ev && !m.ev[m.n_ev - 1].written) {
				say(&m, "offset %llu: an attr after the records had started: its EVENT section follows them",
				    (unsigned long long)it.offset);
				rc = write_event(&m, m.n_ev - 1);
				if (rc < 0 && rc != -ENOMEM)
					rc = write_failed(&m, rc, msg, msg_size);
			}
			break;
		case PF_PD_ITEM_FEATURE:
			rc = feature(&m, &it);
			break;
		case PF_PD_ITEM_USER:
			rc = user_record(&m, &it, msg, msg_size);
			break;
		case PF_PD_ITEM_RECORDS:
			if ((rc = known_records(&m, &it.data, &it.size, it.offset)) < 0 || !it.size)
				break;
			if (!m.started) {
				if (has_sample(&m, it.data, it.size) || m.pending.len + it.size > PENDING_MAX) {
					if ((rc = start_with(&m, it.data, it.size, msg, msg_size)) < 0)
						break;
				} else {
					if (!m.pending.len)
						m.pending_off = it.offset;
					rc = pf_buf_put(&m.pending, it.data, it.size);
					break;
				}
			}
			rc = put_records(&m, it.data, it.size, it.offset);
			if (rc < 0 && rc != -ENOMEM)
				rc = write_failed(&m, rc, msg, msg_size);
			break;
		}
		if (rc < 0 || m.stop)
			break;
	}
	st->compressed = pf_perfdata_compressed_records(pd);
	if (rc < 0 || m.stop) {
		if (rc == -ENOMEM && msg && msg_size)
			snprintf(msg, msg_size, "%s: out of memory", in_name(&m));
		if (m.w) {
			st->bytes_out = pf_writer_bytes(m.w);
			pf_writer_close(m.w);
		}
		st->bytes_in = pf_perfdata_bytes_read(pd);
		imp_free(&m);
		return rc < 0 ? rc : -EIO;
	}
	rc = finish(&m, in_rc, msg, msg_size);
	st->bytes_in = pf_perfdata_bytes_read(pd);
	imp_free(&m);
	return rc;
}
