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

#include "internal/kernel.h"

/* A kallsyms file larger than this is not one (/proc/kallsyms: ~6 MB). */
#define KALLSYMS_MAX_BYTES (256u << 20)

struct kern {
	struct pf_ksyms file;  /* --kallsyms FILE */
	int have_file;
	struct pf_ksyms rec;   /* the recording's KSYMS section */
	int have_rec;
	uint64_t addrs, named; /* unique kernel addresses met, named */
	char warning[512];
};

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
	free(k);
}

void pfsi_kern_pass_begin(struct kern *k)
{
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
	if (!t)
		return 0;
	int64_t i = pf_ksyms_find(t, a);
	if (i < 0)
		return 0;
	const struct pf_ksym *s = &t->syms[i];
	const char *name = pf_ksyms_name(t, (uint32_t)i);
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
	if (src)
		fprintf(out, "%s: %llu of %llu unique kernel addresses named from %s\n", prog,
			(unsigned long long)k->named, (unsigned long long)k->addrs, src);
	else
		fprintf(out, "%s: %llu unique kernel addresses left [kernel]: the recording has no kernel symbols "
			"(pfrec --no-kallsyms, hidden addresses, or an older pfrec; pfsym --kallsyms FILE names them)\n",
			prog, (unsigned long long)k->addrs);
}
