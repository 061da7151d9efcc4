/*
 * libpfsym/kernel.c - kernel frames named from the kernel's text symbols:
 * the KSYMS section pfrec stores (format/pfile.md 4.11), or a kallsyms text
 * file given with `pfsym --kallsyms FILE` (used instead of the snapshot),
 * and for the core kernel a kernel image, `pfsym --vmlinux FILE`
 * (vmlinux.c), when its build-id is the recorded kernel's: its symbols
 * shifted by KASLR (runtime _text minus the image's), inline frames and
 * source lines from its DWARF.
 * Core kernel frames are named "function", module code "function [module]".
 * kallsyms has no sizes: pf_ksyms_find() bounds a symbol by the next one and
 * by its module's end (pfile/ksyms.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "internal/kernel.h"
#include "internal/pfsym.h"
#include "proof.h"

/* A kallsyms file larger than this is not one (/proc/kallsyms: ~6 MB). */
#define KALLSYMS_MAX_BYTES (256u << 20)

/* Kernel text registered while recording (PERF_RECORD_KSYMBOL): BPF
 * programs, trampolines. Kept after unregistering (the builder turns a
 * section's samples after the next section's records are applied). */
struct dynsym {
	uint64_t addr;
	uint32_t len;
	uint16_t type;
	char *name;            /* malloc'd, with " [bpf]" for a BPF program */
};

struct kern {
	struct dynsym *dyn;    /* in the order registered */
	size_t n_dyn, cap_dyn;
	struct pf_ksyms file;  /* --kallsyms FILE */
	int have_file;
	char *file_path;
	int file_force;        /* --force: use the file whatever its layout */
	/* per pass: whether the file fits the recording, decided at the first
	 * kernel address (file_decide()) */
	enum { KF_UNDECIDED, KF_SAME, KF_SHIFTED, KF_FORCED, KF_NO_FILE_TEXT, KF_NO_REC_TEXT, KF_LAYOUT,
	       KF_NO_LAYOUT } file_state;
	const char *layout_ref; /* what the layout was checked against */
	uint64_t file_shift;   /* the file's _text - the recorded one (mod 2^64) */
	uint64_t file_text, rec_text;
	char layout_why[200];
	uint64_t mod_unshifted; /* addresses in module symbols of a shifted file: not named */
	struct pf_ksyms rec;   /* the recording's KSYMS section */
	int have_rec;
	uint64_t addrs, named; /* unique kernel addresses met, named */
	char warning[512];
	/* --vmlinux FILE */
	struct symbolizer *sym;
	struct pfsi_vml *vml;
	char *vml_path;
	int force, no_inline;
	/* per pass: META keys, and the decision taken at the first kernel address */
	uint8_t meta_bid[64];
	uint8_t meta_bid_size;
	int have_meta_text;
	uint64_t meta_text;
	enum { VML_UNDECIDED, VML_USED, VML_FORCED, VML_MISMATCH, VML_NO_BID, VML_NO_TEXT } vml_state;
	uint64_t vml_shift;        /* runtime address - ELF address */
	uint64_t vml_named;        /* unique kernel addresses named from it */
	/* the recording's KSYMS section is still to come (pfsi_kern_wait()):
	 * addresses are left unnamed for pfsi_kern_rename(), and the
	 * --vmlinux decision waits for it unless META has what it needs */
	int waiting;
};

static void dyn_free(struct kern *k);

static int read_all(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 1 << 20, n = 0;
	char *b = malloc(cap);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= KALLSYMS_MAX_BYTES) {
				free(b);
				close(fd);
				return -EFBIG;
			}
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			free(b);
			close(fd);
			return e;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = b;
	*len = n;
	return 0;
}

int pfsi_kern_new(struct kern **out, const char *kallsyms, const char **warning, char *errmsg, size_t errmsg_size)
{
	*out = NULL;
	*warning = NULL;
	struct kern *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	if (kallsyms) {
		char *text = NULL;
		size_t len = 0;
		int rc = read_all(kallsyms, &text, &len);
		if (rc < 0) {
			if (errmsg_size)
				snprintf(errmsg, errmsg_size, "%s: %s", kallsyms,
					 rc == -EFBIG ? "over 256 MiB: not a kallsyms file" : strerror(-rc));
			free(k);
			return rc;
		}
		char m[256];
		rc = pf_ksyms_parse(&k->file, text, len, m, sizeof(m));
		free(text);
		if (rc < 0) {
			if (errmsg_size)
				snprintf(errmsg, errmsg_size, "%s: %s", kallsyms, rc == -EBADMSG ? m : strerror(-rc));
			free(k);
			return rc;
		}
		if (k->file.hidden) {
			snprintf(k->warning, sizeof(k->warning),
				 "%s: every address is 0 (kptr_restrict or perf_event_paranoid hid them when it was "
				 "read): not used, kernel frames stay [kernel]", kallsyms);
			*warning = k->warning;
		} else if (!k->file.n_syms) {
			snprintf(k->warning, sizeof(k->warning), "%s: no text symbol (types t, T, w, W): not used",
				 kallsyms);
			*warning = k->warning;
		} else {
			k->have_file = 1;
			if (!(k->file_path = strdup(kallsyms))) {
				pfsi_kern_free(k);
				return -ENOMEM;
			}
		}
	}
	*out = k;
	return 0;
}

void pfsi_kern_set_force(struct kern *k, int force)
{
	k->file_force = force;
}

void pfsi_kern_free(struct kern *k)
{
	if (!k)
		return;
	pfsi_vml_free(k->vml);
	free(k->vml_path);
	free(k->file_path);
	pf_ksyms_free(&k->file);
	pf_ksyms_free(&k->rec);
	dyn_free(k);
	free(k);
}

int pfsi_kern_has_file(const struct kern *k)
{
	return k->have_file;
}

static void dyn_free(struct kern *k)
{
	for (size_t i = 0; i < k->n_dyn; i++)
		free(k->dyn[i].name);
	free(k->dyn);
	k->dyn = NULL;
	k->n_dyn = k->cap_dyn = 0;
}

int pfsi_kern_ksymbol(void *ctx, uint64_t addr, uint32_t len, uint16_t ksym_type, uint16_t flags, const char *name,
		      size_t name_len)
{
	struct kern *k = ctx;
	if ((flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) || !len || name_len > PF_KSYMS_MAX_NAME)
		return 0;
	if (k->n_dyn == k->cap_dyn && pfsi_grow((void **)&k->dyn, &k->cap_dyn, sizeof(*k->dyn), 16) < 0)
		return -ENOMEM;
	const char *suffix = ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF ? " [bpf]" : "";
	char *nm = malloc(name_len + strlen(suffix) + 1);
	if (!nm)
		return -ENOMEM;
	memcpy(nm, name, name_len);
	strcpy(nm + name_len, suffix);
	k->dyn[k->n_dyn++] = (struct dynsym){ addr, len, ksym_type, nm };
	return 0;
}

void pfsi_kern_wait(struct kern *k, int waiting)
{
	k->waiting = waiting;
}

void pfsi_kern_pass_begin(struct kern *k)
{
	k->waiting = 0;
	dyn_free(k);
	pf_ksyms_free(&k->rec);
	k->have_rec = 0;
	k->addrs = k->named = 0;
	k->meta_bid_size = 0;
	k->have_meta_text = 0;
	k->vml_state = VML_UNDECIDED;
	k->vml_shift = k->vml_named = 0;
	k->file_state = KF_UNDECIDED;
	k->file_shift = k->file_text = k->rec_text = k->mod_unshifted = 0;
	k->layout_why[0] = 0;
}

void pfsi_kern_take(struct kern *k, struct pf_ksyms *t)
{
	if (k->have_rec)
		return; /* the first snapshot is the one used */
	k->rec = *t;
	memset(t, 0, sizeof(*t));
	k->have_rec = 1;
}

static int file_usable(const struct kern *k)
{
	return k->have_file && (k->file_state == KF_SAME || k->file_state == KF_SHIFTED || k->file_state == KF_FORCED);
}

static const struct pf_ksyms *table(const struct kern *k)
{
	return file_usable(k) ? &k->file : k->have_rec ? &k->rec : NULL;
}

/* ---- --vmlinux FILE -------------------------------------------------------- */

int pfsi_kern_vmlinux(struct kern *k, struct symbolizer *s, const char *path, int force, int no_inline,
		      char *errmsg, size_t errmsg_size)
{
	if (!path)
		return 0;
	char m[512];
	int rc = pfsi_vml_open(s, path, &k->vml, m, sizeof(m));
	if (rc < 0) {
		if (errmsg_size)
			snprintf(errmsg, errmsg_size, "%s", rc == -ENOMEM ? strerror(ENOMEM) : m);
		return rc;
	}
	if (!(k->vml_path = strdup(path)))
		return -ENOMEM;
	k->sym = s;
	k->force = force;
	k->no_inline = no_inline;
	return 0;
}

int pfsi_kern_has_vmlinux(const struct kern *k)
{
	return k->vml != NULL;
}

static int unhex(const char *h, uint8_t *out, size_t max)
{
	size_t n = 0;
	for (; h[0] && h[1] && n < max; h += 2) {
		unsigned v;
		if (sscanf(h, "%2x", &v) != 1)
			return 0;
		out[n++] = (uint8_t)v;
	}
	return h[0] ? 0 : (int)n;
}

void pfsi_kern_meta(struct kern *k, const uint8_t *data, size_t size)
{
	char v[160];
	if (pf_kv_get(data, size, "kernel_build_id", v, sizeof(v)) > 0) {
		int n = unhex(v, k->meta_bid, sizeof(k->meta_bid));
		k->meta_bid_size = (uint8_t)(n > 0 ? n : 0);
	}
	if (pf_kv_get(data, size, "kernel_text", v, sizeof(v)) > 0) {
		char *end;
		errno = 0;
		unsigned long long t = strtoull(v, &end, 10);
		if (!errno && end != v && !*end && t) {
			k->meta_text = t;
			k->have_meta_text = 1;
		}
	}
}

/* The runtime address of `name` (_text or _stext) in table t. */
static int ksyms_addr(const struct pf_ksyms *t, const char *name, uint64_t *addr)
{
	struct pf_ksym s;
	for (uint32_t i = 0; i < t->n_syms && pf_ksyms_sym(t, i, &s) == 0; i++)
		if (!s.module && strcmp(s.name, name) == 0) {
			*addr = s.addr;
			return 1;
		}
	return 0;
}

/* Whether the --kallsyms file fits the recording, at the first kernel
 * address of a pass: its _text against the recorded one (the recording's
 * KSYMS, else META kernel_text): equal, the file is used as is; another
 * (another boot: KASLR), its addresses are shifted by the difference, as
 * perf shifts a kallsyms by its reference symbol; and where the recording
 * holds a KSYMS table, the layout (_stext, _etext, _sinittext from _text)
 * must be the same, else the file is of another kernel build. A file or a
 * recording without _text cannot be matched. Refused files are used only
 * with --force (KF_FORCED, no shift). */
static void file_decide(struct kern *k)
{
	if (!k->have_file || k->file_state != KF_UNDECIDED)
		return;
	int ft = ksyms_addr(&k->file, "_text", &k->file_text);
	int rt = (k->have_rec && ksyms_addr(&k->rec, "_text", &k->rec_text)) ||
		 (k->have_meta_text && (k->rec_text = k->meta_text));
	if (!ft)
		k->file_state = KF_NO_FILE_TEXT;
	else if (!rt)
		k->file_state = KF_NO_REC_TEXT;
	else
		k->file_state = k->file_text == k->rec_text ? KF_SAME : KF_SHIFTED;
	/* the layout of the recorded kernel: the recording's KSYMS, else this
	 * machine's running kernel when its build-id is the recorded one */
	static const char *const anchors[] = { "_text", "_stext", "_etext", "_sinittext" };
	enum { NA = sizeof(anchors) / sizeof(anchors[0]) };
	uint64_t ref[NA] = { 0 };
	int have_ref = 0;
	if (k->have_rec) {
		for (int i = 0; i < NA; i++)
			have_ref += ksyms_addr(&k->rec, anchors[i], &ref[i]);
		k->layout_ref = "the recording's kallsyms snapshot";
	} else if (k->meta_bid_size) {
		uint8_t run[64];
		size_t rn = pf_proof_note_build_id("/sys/kernel/notes", run);
		if (rn == k->meta_bid_size && memcmp(run, k->meta_bid, rn) == 0) {
			have_ref = pf_proof_running_syms(anchors, ref, NA);
			k->layout_ref = "the running kernel, of the recorded build-id";
		}
	}
	if (ft && rt && (!have_ref || !ref[0])) {
		k->file_state = KF_NO_LAYOUT;
	} else if (ft && rt) {
		for (int i = 1; i < NA; i++) {
			uint64_t fa;
			if (!ref[i] || !ksyms_addr(&k->file, anchors[i], &fa))
				continue;
			if (fa - k->file_text != ref[i] - ref[0]) {
				snprintf(k->layout_why, sizeof(k->layout_why),
					 "%s is _text+0x%llx in it, _text+0x%llx in %s", anchors[i],
					 (unsigned long long)(fa - k->file_text), (unsigned long long)(ref[i] - ref[0]),
					 k->layout_ref);
				k->file_state = KF_LAYOUT;
				break;
			}
		}
	}
	if (k->file_state == KF_SHIFTED)
		k->file_shift = k->file_text - k->rec_text;
	else if (k->file_state != KF_SAME && k->file_force)
		k->file_state = KF_FORCED;
}

/* The recorded kernel's build-id: KSYMS (or the --kallsyms file has none),
 * else META kernel_build_id. */
static const uint8_t *recorded_bid(const struct kern *k, size_t *size)
{
	if (k->have_rec && k->rec.build_id_size) {
		*size = k->rec.build_id_size;
		return k->rec.build_id;
	}
	*size = k->meta_bid_size;
	return k->meta_bid;
}

/* Decides, at the first kernel address of a pass, whether the image is used
 * and with which KASLR shift. */
static void vml_decide(struct kern *k)
{
	size_t rn, vn;
	const uint8_t *rb = recorded_bid(k, &rn);
	const uint8_t *vb = pfsi_vml_build_id(k->vml, &vn);
	if (!rn)
		k->vml_state = k->force ? VML_FORCED : VML_NO_BID;
	else if (rn != vn || memcmp(rb, vb, rn) != 0)
		k->vml_state = k->force ? VML_FORCED : VML_MISMATCH;
	else
		k->vml_state = VML_USED;
	if (k->vml_state != VML_USED && k->vml_state != VML_FORCED)
		return;
	/* the runtime address of _text (else _stext): the --kallsyms file's,
	 * the recording's KSYMS, META kernel_text (_text only) */
	for (int st = 0; st < 2; st++) {
		uint64_t rt = 0, lt;
		if (!pfsi_vml_text(k->vml, st, &lt))
			continue;
		const char *name = st ? "_stext" : "_text";
		file_decide(k);
		if ((k->have_rec && ksyms_addr(&k->rec, name, &rt)) || (!st && k->have_meta_text && (rt = k->meta_text)) ||
		    (file_usable(k) && ksyms_addr(&k->file, name, &rt) && (rt -= k->file_shift, 1))) {
			k->vml_shift = rt - lt;
			return;
		}
	}
	k->vml_state = VML_NO_TEXT;
}

int pfsi_kern_resolve_chain(void *ctx, struct pf_prof *p, struct pf_prof_frame *f, uint32_t max)
{
	struct kern *k = ctx;
	/* before KSYMS, only META can decide (both keys there, or --force
	 * and the runtime _text) */
	if (k->vml_state == VML_UNDECIDED && (!k->waiting || (k->have_meta_text && (k->meta_bid_size || k->force))))
		vml_decide(k);
	if (k->vml_state == VML_USED || k->vml_state == VML_FORCED) {
		uint64_t a = f->file_off;
		int dyn = 0;
		for (size_t i = 0; i < k->n_dyn && !dyn; i++)
			dyn = a >= k->dyn[i].addr && a - k->dyn[i].addr < k->dyn[i].len;
		if (!dyn) {
			f->addr = a;
			f->flags |= PF_FRAME_HAS_ADDR;
			int n = pfsi_vml_resolve(k->sym, k->vml, p, a - k->vml_shift, f, max, !k->no_inline);
			if (n < 0)
				return n;
			if (n > 0) {
				if (k->vml_state == VML_FORCED)
					for (int i = 0; i < n; i++)
						f[i].flags |= PF_FRAME_MISMATCH;
				k->addrs++;
				k->named++;
				k->vml_named++;
				return n;
			}
		}
	}
	int rc = pfsi_kern_resolve(ctx, p, f);
	return rc < 0 ? rc : 1;
}

/* ---- the kallsyms table ----------------------------------------------------- */

/* 1 and *nx the first symbol after symbol i (past its aliases) if it starts
 * at a + 1: a is the last byte of symbol i. */
static int pfx_end(const struct pf_ksyms *t, uint32_t i, uint64_t a, struct pf_ksym *nx)
{
	struct pf_ksym cur;
	if (pf_ksyms_sym(t, i, &cur) < 0)
		return 0;
	for (uint32_t j = i + 1; j < t->n_syms; j++) {
		if (pf_ksyms_sym(t, j, nx) < 0)
			return 0;
		if (nx->addr != cur.addr)
			return nx->addr == a + 1 && strncmp(nx->name, "__pfx_", 6) != 0;
	}
	return 0;
}

/* Names f (address f->file_off) from the KSYMBOL records, else the kallsyms
 * table: @return 1 named, 0 not, or -ENOMEM. */
static int name_addr(struct kern *k, struct pf_prof *p, struct pf_prof_frame *f)
{
	/* with --kallsyms FILE, its layout is checked against the recording's
	 * KSYMS: while that section is still to come, nothing is named (the
	 * frames are named when it comes, ksyms_release() in rewrite.c) */
	if (k->waiting && k->have_file && k->file_state == KF_UNDECIDED)
		return 0;
	file_decide(k);
	const struct pf_ksyms *t = table(k);
	uint64_t a = f->file_off;
	for (size_t i = k->n_dyn; i-- > 0;) { /* the latest registered first */
		const struct dynsym *d = &k->dyn[i];
		if (a >= d->addr && a - d->addr < d->len) {
			int64_t id = pf_prof_str(p, d->name, strlen(d->name));
			if (id < 0)
				return (int)id;
			f->name = (uint32_t)id;
			f->sym_off = (uint32_t)(a - d->addr);
			f->flags |= PF_FRAME_HAS_SYMOFF;
			return 1;
		}
	}
	if (!t)
		return 0;
	int shifted = t == &k->file && k->file_state == KF_SHIFTED;
	int64_t i = pf_ksyms_find(t, shifted ? a + k->file_shift : a);
	if (i < 0)
		return 0;
	struct pf_ksym sy, *s = &sy;
	if (pf_ksyms_sym(t, (uint32_t)i, s) < 0)
		return 0;
	if (shifted && s->module) {
		/* modules are placed apart from the core kernel's KASLR slide */
		k->mod_unshifted++;
		return 0;
	}
	if (shifted)
		a += k->file_shift; /* sym_off below: from the file's symbol */
	const char *name = s->name;
	int64_t off = (int64_t)(a - s->addr);
	struct pf_ksym nx;
	if (strncmp(name, "__pfx_", 6) == 0 && pfx_end(t, (uint32_t)i, a, &nx) && strcmp(nx.name, name + 6) == 0) {
		/* the last byte of FUNC's padding (__pfx_FUNC): the byte
		 * before a return address that is FUNC's first byte (a
		 * retpoline's target, an interrupted first instruction; a
		 * call is never the padding's last instruction). perf looks
		 * the return address up and names FUNC+0x0: FUNC, one byte
		 * before it (sym_off -1 modulo 2^32, format/profile.md 3.1) */
		s = &nx;
		name = nx.name;
		off = -1;
	}
	size_t nl = strlen(name);
	char buf[PF_KSYMS_MAX_NAME + 80];
	if (s->module) {
		nl = (size_t)snprintf(buf, sizeof(buf), "%s [%s]", name, t->mods[s->module - 1].name);
		name = buf;
	}
	int64_t id = pf_prof_str(p, name, nl);
	if (id < 0)
		return (int)id;
	if (off < 0) {
		f->name = (uint32_t)id;
		f->sym_off = UINT32_MAX;
		f->flags |= PF_FRAME_HAS_SYMOFF;
	} else {
		pfsi_frame_name(f, (uint32_t)id, (uint64_t)off);
	}
	return 1;
}

int pfsi_kern_resolve(void *ctx, struct pf_prof *p, struct pf_prof_frame *f)
{
	struct kern *k = ctx;
	k->addrs++;
	f->addr = f->file_off;
	f->flags |= PF_FRAME_HAS_ADDR;
	int rc = name_addr(k, p, f);
	if (rc > 0)
		k->named++;
	return rc < 0 ? rc : 0;
}

int pfsi_kern_rename(struct kern *k, struct pf_prof *p, struct pf_prof_frame *f)
{
	if (k->vml) {
		if (k->vml_state == VML_UNDECIDED)
			vml_decide(k);
		if (k->vml_state == VML_USED || k->vml_state == VML_FORCED) {
			int dyn = 0;
			for (size_t i = 0; i < k->n_dyn && !dyn; i++)
				dyn = f->file_off >= k->dyn[i].addr && f->file_off - k->dyn[i].addr < k->dyn[i].len;
			/* the real function only: the frame's node has
			 * no room for inline frames below it */
			int n = dyn ? 0 : pfsi_vml_resolve(k->sym, k->vml, p, f->file_off - k->vml_shift, f, 1, 0);
			if (n < 0)
				return n;
			if (n > 0) {
				if (k->vml_state == VML_FORCED)
					f->flags |= PF_FRAME_MISMATCH;
				k->named++;
				k->vml_named++;
				return 1;
			}
		}
	}
	int rc = name_addr(k, p, f);
	if (rc > 0)
		k->named++;
	return rc;
}

static const char *vml_state_name(const struct kern *k)
{
	switch (k->vml_state) {
	case VML_USED: return "used";
	case VML_FORCED: return "forced";
	case VML_MISMATCH: return "mismatch";
	case VML_NO_BID: return "no_build_id";
	default: return "no_text";
	}
}

int pfsi_kern_syminfo(const struct kern *k, struct pf_buf *b)
{
	int rc = pf_kv_add(b, "kernel_symbols", file_usable(k) ? "kallsyms" : k->have_rec ? "recording" : "none");
	if (k->have_file && k->file_state != KF_UNDECIDED) {
		static const char *const st[] = { "", "same", "shifted", "forced", "no_text", "no_recorded_text", "layout",
						  "no_layout" };
		rc |= pf_kv_add(b, "kernel_kallsyms", st[k->file_state]);
	}
	rc |= pf_kv_add_u64(b, "kernel_addresses", k->addrs);
	rc |= pf_kv_add_u64(b, "kernel_addresses_named", k->named);
	if (k->vml && k->vml_state != VML_UNDECIDED) { /* kernel addresses met */
		rc |= pf_kv_add(b, "kernel_vmlinux", vml_state_name(k));
		rc |= pf_kv_add_u64(b, "kernel_addresses_vmlinux", k->vml_named);
	}
	return rc ? -ENOMEM : 0;
}

/* The line about the --vmlinux image: used (how many addresses, the shift)
 * or why not. */
static void vml_report(const struct kern *k, FILE *out, const char *prog)
{
	size_t rn, vn;
	const uint8_t *rb = recorded_bid(k, &rn);
	const uint8_t *vb = pfsi_vml_build_id(k->vml, &vn);
	char rh[129], vh[129];
	pfsi_hex(rb, rn, rh);
	pfsi_hex(vb, vn, vh);
	const char *vs = vn ? vh : "none";
	switch (k->vml_state) {
	case VML_USED:
	case VML_FORCED:
		pfsi_report_line(out, "%s: %s: %llu unique kernel addresses named from it (build-id %s, KASLR shift 0x%llx)",
			prog, k->vml_path, (unsigned long long)k->vml_named, vs, (unsigned long long)k->vml_shift);
		if (k->vml_state == VML_FORCED)
			pfsi_report_line(out, "%s: %s: used by --force: its build-id %s, the recorded kernel's %s", prog,
				k->vml_path, vs, rn ? rh : "unknown (not recorded)");
		break;
	case VML_MISMATCH:
		pfsi_report_line(out, "%s: %s: not used: its build-id %s differs from the recorded kernel's %s (--force uses it)",
			prog, k->vml_path, vs, rh);
		break;
	case VML_NO_BID:
		pfsi_report_line(out, "%s: %s: not used: the recording has no kernel build-id to check its build-id %s against "
			"(--force uses it)", prog, k->vml_path, vs);
		break;
	case VML_NO_TEXT:
		pfsi_report_line(out, "%s: %s: not used: the recording has no runtime address of _text or _stext (no KSYMS "
			"section, no META kernel_text): the KASLR shift is unknown", prog, k->vml_path);
		break;
	default:
		break;
	}
}

/* The line about the --kallsyms file: how it was matched to the recording
 * (proof), or why it is not used. */
static void file_report(const struct kern *k, FILE *out, const char *prog)
{
	if (!k->have_file || k->file_state == KF_UNDECIDED)
		return;
	const char *p = k->file_path;
	const char *rest = k->have_rec ? "the recording's kallsyms snapshot names kernel frames"
				       : "kernel frames stay [kernel]";
	switch (k->file_state) {
	case KF_SAME:
		fprintf(out, "%s: %s: proof: its _text 0x%llx is the recorded kernel's, its layout that of %s\n", prog, p,
			(unsigned long long)k->file_text, k->layout_ref);
		break;
	case KF_SHIFTED:
		fprintf(out, "%s: %s: proof: _text 0x%llx, the recorded kernel's 0x%llx (another boot): its core kernel "
			"symbols shifted by -0x%llx, its layout that of %s\n", prog, p, (unsigned long long)k->file_text,
			(unsigned long long)k->rec_text, (unsigned long long)k->file_shift, k->layout_ref);
		if (k->mod_unshifted)
			fprintf(out, "%s: %s: %llu kernel addresses in modules left unnamed: modules are placed apart from "
				"the kernel's KASLR shift\n", prog, p, (unsigned long long)k->mod_unshifted);
		break;
	case KF_FORCED:
		fprintf(out, "%s: %s: proof: none, used by --force as it is (no shift)\n", prog, p);
		break;
	case KF_NO_FILE_TEXT:
		fprintf(out, "%s: %s: not used: it has no _text to match it with the recorded kernel; %s (--force uses "
			"it)\n", prog, p, rest);
		break;
	case KF_NO_REC_TEXT:
		fprintf(out, "%s: %s: not used: the recording has no kernel _text (no KSYMS section, no META "
			"kernel_text) to match it with; %s (--force uses it)\n", prog, p, rest);
		break;
	case KF_NO_LAYOUT:
		fprintf(out, "%s: %s: not used: nothing holds the recorded kernel's layout to match it with (no KSYMS "
			"section; this machine runs another kernel build than the recorded one, or the recording names "
			"none); %s (--force uses it)\n", prog, p, rest);
		break;
	case KF_LAYOUT:
		fprintf(out, "%s: %s: not used: another kernel's layout (%s); %s (--force uses it)\n", prog, p,
			k->layout_why, rest);
		break;
	default:
		break;
	}
}

void pfsi_kern_report(const struct kern *k, FILE *out, const char *prog)
{
	if (!k->addrs)
		return;
	if (k->vml)
		vml_report(k, out, prog);
	file_report(k, out, prog);
	int uf = file_usable(k);
	const char *src = uf ? "the --kallsyms file" : k->have_rec ? "the recording's kallsyms snapshot" : NULL;
	if (k->vml_named)
		src = uf ? "the --vmlinux image and the --kallsyms file"
		      : k->have_rec ? "the --vmlinux image and the recording's kallsyms snapshot" : "the --vmlinux image";
	const char *dyn = k->n_dyn ? (src ? " and KSYMBOL records" : "KSYMBOL records (BPF)") : "";
	if (src || k->named)
		pfsi_report_line(out, "%s: %llu of %llu unique kernel addresses named from %s%s", prog,
			(unsigned long long)k->named, (unsigned long long)k->addrs, src ? src : "", dyn);
	if (!src)
		pfsi_report_line(out, "%s: %llu unique kernel addresses left [kernel]: the recording has no kernel symbols "
			"(pfrec --no-kallsyms, hidden addresses, or an older pfrec; pfsym --kallsyms FILE names them)",
			prog, (unsigned long long)(k->addrs - k->named));
}
