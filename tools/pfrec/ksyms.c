/*
 * pfrec/ksyms.c - the KSYMS section (format/pfile.md 4.11): the kernel's
 * text symbols from /proc/kallsyms, each module's load address and size
 * (/proc/modules) and build-id (/sys/module/NAME/notes), and the kernel's
 * build-id (/sys/kernel/notes), so that pfsym names kernel frames offline.
 */
#include "pfrec/rec.h"
#include "ksyms.h"

/* /proc/kallsyms is ~6 MB with ~120k text symbols on a distribution kernel */
#define KALLSYMS_MAX (256u << 20)

/* Reads a file of the kernel's (its size is not known before) into *b.
 * @return 0 or -errno. */
static int slurp(const char *path, struct pf_buf *b, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (b->cap - b->len < 65536) {
			size_t cap = b->cap ? b->cap * 2 : 1 << 20;
			uint8_t *n = realloc(b->data, cap);
			if (!n) {
				close(fd);
				return -ENOMEM;
			}
			b->data = n;
			b->cap = cap;
		}
		ssize_t r = read(fd, b->data + b->len, b->cap - b->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (!r)
			break;
		b->len += (size_t)r;
		if (b->len > max) {
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	return 0;
}

/* The GNU build-id note (type 3, name "GNU") among the ELF notes of `path`
 * (native byte order, 4-byte aligned). @return its size (copied to bid, at
 * most 64), or 0 when there is none. */
static size_t note_build_id(const char *path, uint8_t bid[64])
{
	struct pf_buf b = { 0 };
	size_t got = 0;
	if (slurp(path, &b, 1 << 20) == 0) {
		size_t p = 0;
		while (b.len - p >= 12) {
			uint32_t nsz, dsz, type;
			memcpy(&nsz, b.data + p, 4);
			memcpy(&dsz, b.data + p + 4, 4);
			memcpy(&type, b.data + p + 8, 4);
			size_t nal = ((size_t)nsz + 3) & ~(size_t)3, dal = ((size_t)dsz + 3) & ~(size_t)3;
			if (nal > b.len - p - 12 || dal > b.len - p - 12 - nal)
				break;
			const uint8_t *name = b.data + p + 12, *desc = name + nal;
			if (type == 3 && nsz == 4 && memcmp(name, "GNU", 4) == 0 && dsz && dsz <= 64) {
				memcpy(bid, desc, dsz);
				got = dsz;
				break;
			}
			p += 12 + nal + dal;
		}
	}
	pf_buf_free(&b);
	return got;
}

/* /proc/modules: "NAME SIZE REFS DEPS STATE ADDRESS [TAINT]" per line. */
static int add_modules(struct pf_ksyms *k)
{
	struct pf_buf b = { 0 };
	int rc = slurp("/proc/modules", &b, 16u << 20);
	if (rc < 0) {
		pf_buf_free(&b);
		return rc == -ENOENT ? 0 : rc; /* a kernel without modules */
	}
	if (pf_buf_put(&b, "", 1) < 0) {
		pf_buf_free(&b);
		return -ENOMEM;
	}
	char *save = NULL;
	for (char *l = strtok_r((char *)b.data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[64], state[32];
		unsigned long long size, addr;
		if (sscanf(l, "%63s %llu %*s %*s %31s %llx", name, &size, state, &addr) != 4)
			continue;
		char path[128];
		uint8_t bid[64];
		snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id", name);
		size_t bsz = note_build_id(path, bid);
		if ((rc = pf_ksyms_set_module(k, name, addr, size, bsz ? bid : NULL, bsz)) < 0 && rc != -EINVAL)
			break;
		rc = 0;
	}
	pf_buf_free(&b);
	return rc;
}

void save_ksyms(struct rec *R)
{
	if (R->o.no_kallsyms || R->o.count_only)
		return;
	int kernel = 0;
	for (int e = 0; e < R->o.nev; e++)
		kernel |= !R->pa[e].attr.exclude_kernel;
	if (!kernel)
		return; /* no kernel frames to name */
	struct pf_buf text = { 0 };
	struct pf_ksyms k = { 0 };
	char err[256];
	int rc = slurp("/proc/kallsyms", &text, KALLSYMS_MAX);
	if (rc < 0) {
		notice("/proc/kallsyms: %s: kernel frames will show as [kernel] (pfsym --kallsyms FILE names them)",
		       strerror(-rc));
		pf_buf_free(&text);
		return;
	}
	rc = pf_ksyms_parse(&k, (const char *)text.data, text.len, err, sizeof(err));
	pf_buf_free(&text);
	if (rc < 0) {
		errmsg("warning: /proc/kallsyms: %s: kernel symbols not stored", rc == -EBADMSG ? err : strerror(-rc));
		return;
	}
	if (k.hidden || !k.n_syms) {
		errmsg("warning: /proc/kallsyms shows every address as 0 (kernel.kptr_restrict or "
		       "kernel.perf_event_paranoid hides them from this user): kernel symbols not stored, kernel "
		       "frames will show as [kernel]");
		pf_ksyms_free(&k);
		return;
	}
	k.build_id_size = (uint8_t)note_build_id("/sys/kernel/notes", k.build_id);
	if ((rc = add_modules(&k)) < 0)
		verbose("/proc/modules: %s: modules without load address", strerror(-rc));
	struct pf_buf b = { 0 };
	if (pf_ksyms_encode(&k, &b) < 0) {
		errmsg("warning: kernel symbols not stored: out of memory");
	} else {
		verbose("KSYMS: %u text symbols, %u modules, %zu bytes before compression", k.n_syms, k.n_mods, b.len);
		put_section(R, PF_SEC_KSYMS, &b);
	}
	pf_buf_free(&b);
	pf_ksyms_free(&k);
}
