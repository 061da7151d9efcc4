/*
 * libpfsym/kernel.c - kernel frames named from the kernel's text symbols:
 * the KSYMS section pfrec stores (format/pfile.md 4.11), or a kallsyms text
 * file given with `pfsym --kallsyms FILE` (used instead of the snapshot).
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
	if (k->n_dyn == k->cap_dyn) {
		size_t cap = k->cap_dyn ? k->cap_dyn * 2 : 16;
		struct dynsym *n = realloc(k->dyn, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		k->dyn = n;
		k->cap_dyn = cap;
	}
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
	f->name = (uint32_t)id;
	if (a - s->addr <= UINT32_MAX) {
		f->sym_off = (uint32_t)(a - s->addr);
		f->flags |= PF_FRAME_HAS_SYMOFF;
	}
	k->named++;
	return 0;
}

int pfsi_kern_syminfo(const struct kern *k, struct pf_buf *b)
{
	int rc = pf_kv_add(b, "kernel_symbols", k->have_file ? "kallsyms" : k->have_rec ? "recording" : "none");
	rc |= pf_kv_add_u64(b, "kernel_addresses", k->addrs);
	rc |= pf_kv_add_u64(b, "kernel_addresses_named", k->named);
	return rc ? -ENOMEM : 0;
}

void pfsi_kern_report(const struct kern *k, FILE *out, const char *prog)
{
	if (!k->addrs)
		return;
	const char *src = k->have_file ? "the --kallsyms file" : k->have_rec ? "the recording's kallsyms snapshot" : NULL;
	const char *dyn = k->n_dyn ? (src ? " and KSYMBOL records" : "KSYMBOL records (BPF)") : "";
	if (src || k->named)
		fprintf(out, "%s: %llu of %llu unique kernel addresses named from %s%s\n", prog,
			(unsigned long long)k->named, (unsigned long long)k->addrs, src ? src : "", dyn);
	if (!src)
		fprintf(out, "%s: %llu unique kernel addresses left [kernel]: the recording has no kernel symbols "
			"(pfrec --no-kallsyms, hidden addresses, or an older pfrec; pfsym --kallsyms FILE names them)\n",
			prog, (unsigned long long)(k->addrs - k->named));
}
