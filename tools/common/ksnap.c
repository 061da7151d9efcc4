/*
 * tools/common/ksnap.c - this machine's kernel symbols (ksnap.h).
 */
#include "ksnap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proof.h"

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
		size_t bsz = pf_proof_note_build_id(path, bid);
		if ((rc = pf_ksyms_set_module(k, name, addr, size, bsz ? bid : NULL, bsz)) < 0 && rc != -EINVAL)
			break;
		rc = 0;
	}
	pf_buf_free(&b);
	return rc;
}


/* The text with every core kernel address moved by `shift` and the module
 * lines left out. @return 0 or -ENOMEM. */
static int shift_text(const struct pf_buf *in, struct pf_buf *out, uint64_t shift)
{
	const char *p = (const char *)in->data, *end = p + in->len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
		char *e;
		unsigned long long a = strtoull(p, &e, 16);
		if (!memchr(p, '[', n)) {
			char hex[24];
			if (e > p && (size_t)(e - p) <= n) {
				int hl = snprintf(hex, sizeof(hex), "%016llx", a ? (unsigned long long)(a + shift) : 0ull);
				if (pf_buf_put(out, hex, (size_t)hl) < 0 || pf_buf_put(out, e, n - (size_t)(e - p)) < 0 ||
				    pf_buf_put(out, "\n", 1) < 0)
					return -ENOMEM;
			} else if (pf_buf_put(out, p, n) < 0 || pf_buf_put(out, "\n", 1) < 0) {
				return -ENOMEM;
			}
		}
		p += n + 1;
	}
	return 0;
}

int pf_ksnap_read(struct pf_ksyms *k, uint64_t shift, char *errmsg, size_t errmsg_size)
{
	struct pf_buf text = { 0 }, moved = { 0 };
	int rc = slurp("/proc/kallsyms", &text, KALLSYMS_MAX);
	if (rc == 0 && shift) {
		rc = shift_text(&text, &moved, shift);
		pf_buf_free(&text);
		text = moved;
	}
	if (rc == 0)
		rc = pf_ksyms_parse(k, (const char *)text.data, text.len, errmsg, errmsg_size);
	pf_buf_free(&text);
	if (rc < 0 || k->hidden || !k->n_syms)
		return rc;
	k->build_id_size = (uint8_t)pf_proof_note_build_id("/sys/kernel/notes", k->build_id);
	if (!shift)
		(void)add_modules(k);
	return 0;
}
