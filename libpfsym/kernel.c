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
		}
	}
	*out = k;
	return 0;
}

void pfsi_kern_free(struct kern *k)
{
	if (!k)
		return;
	pfsi_vml_free(k->vml);
	free(k->vml_path);
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

void pfsi_kern_pass_begin(struct kern *k)
{
	dyn_free(k);
	pf_ksyms_free(&k->rec);
	k->have_rec = 0;
	k->addrs = k->named = 0;
	k->meta_bid_size = 0;
	k->have_meta_text = 0;
	k->vml_state = VML_UNDECIDED;
	k->vml_shift = k->vml_named = 0;
}

void pfsi_kern_take(struct kern *k, struct pf_ksyms *t)
{
	if (k->have_rec)
		return; /* the first snapshot is the one used */
	k->rec = *t;
	memset(t, 0, sizeof(*t));
	k->have_rec = 1;
}

static const struct pf_ksyms *table(const struct kern *k)
{
	return k->have_file ? &k->file : k->have_rec ? &k->rec : NULL;
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
		if ((k->have_file && ksyms_addr(&k->file, name, &rt)) || (k->have_rec && ksyms_addr(&k->rec, name, &rt)) ||
		    (!st && k->have_meta_text && (rt = k->meta_text))) {
			k->vml_shift = rt - lt;
			return;
		}
	}
	k->vml_state = VML_NO_TEXT;
}

int pfsi_kern_resolve_chain(void *ctx, struct pf_prof *p, struct pf_prof_frame *f, uint32_t max)
{
	struct kern *k = ctx;
	if (k->vml_state == VML_UNDECIDED)
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

int pfsi_kern_resolve(void *ctx, struct pf_prof *p, struct pf_prof_frame *f)
{
	struct kern *k = ctx;
	const struct pf_ksyms *t = table(k);
	k->addrs++;
	uint64_t a = f->file_off;
	f->addr = a;
	f->flags |= PF_FRAME_HAS_ADDR;
	for (size_t i = k->n_dyn; i-- > 0;) { /* the latest registered first */
		const struct dynsym *d = &k->dyn[i];
		if (a >= d->addr && a - d->addr < d->len) {
			int64_t id = pf_prof_str(p, d->name, strlen(d->name));
			if (id < 0)
				return (int)id;
			f->name = (uint32_t)id;
			f->sym_off = (uint32_t)(a - d->addr);
			f->flags |= PF_FRAME_HAS_SYMOFF;
			k->named++;
			return 0;
		}
	}
	if (!t)
		return 0;
	int64_t i = pf_ksyms_find(t, a);
	if (i < 0)
		return 0;
	struct pf_ksym sy, *s = &sy;
	if (pf_ksyms_sym(t, (uint32_t)i, s) < 0)
		return 0;
	const char *name = s->name;
	size_t nl = strlen(name);
	char buf[PF_KSYMS_MAX_NAME + 80];
	if (s->module) {
		nl = (size_t)snprintf(buf, sizeof(buf), "%s [%s]", name, t->mods[s->module - 1].name);
		name = buf;
	}
	int64_t id = pf_prof_str(p, name, nl);
	if (id < 0)
		return (int)id;
	pfsi_frame_name(f, (uint32_t)id, a - s->addr);
	k->named++;
	return 0;
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
	int rc = pf_kv_add(b, "kernel_symbols", k->have_file ? "kallsyms" : k->have_rec ? "recording" : "none");
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

void pfsi_kern_report(const struct kern *k, FILE *out, const char *prog)
{
	if (!k->addrs)
		return;
	if (k->vml)
		vml_report(k, out, prog);
	const char *src = k->have_file ? "the --kallsyms file" : k->have_rec ? "the recording's kallsyms snapshot" : NULL;
	if (k->vml_named)
		src = k->have_file ? "the --vmlinux image and the --kallsyms file"
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
