/*
 * libpfsym/debuglink.c - separate debug files named by a binary's
 * .gnu_debuglink section (a file name, padding to 4 bytes, then the CRC-32
 * of the debug file's bytes in the binary's byte order), for a binary found
 * without .symtab. The places, as GDB looks (its "debug-file-directory"):
 * the binary's recorded directory DIR (under --symfs, else on this
 * machine), DIR/.debug, each --debug-dir + DIR and each --debug-dir itself,
 * /usr/lib/debug + DIR (under --symfs, else on this machine), and with
 * --symfs --host-fallback this machine's /usr/lib/debug + DIR. Each place is
 * resolved under its root as binaries are (root.c). A file is used only if
 * its CRC-32 equals the link's and, when both it and the recording have a
 * build-id, the build-ids are equal; a file with the right name that fails
 * the check is skipped, and the summary names it.
 */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"
#include "internal/pfsym.h"

/* CRC-32 as .gnu_debuglink uses it (and zlib's crc32(), gzip, PNG): the
 * reflected polynomial 0xedb88320, initial value and final xor 0xffffffff. */
static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* The CRC-32 of the bytes of fd. @return 0 or -errno. */
static int crc_fd(int fd, uint32_t *out)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, crc_init);
	uint8_t buf[1 << 16];
	uint32_t c = 0xffffffffu;
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			c = crc_table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
		off += n;
	}
	*out = c ^ 0xffffffffu;
	return 0;
}

/* The link of e: its file name (a plain name: no '/', not "." or "..")
 * into name, and the CRC. @return 0, or -1 if e has no usable link. */
static int read_link(Elf *e, char *name, size_t name_size, uint32_t *crc)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return -1;
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh))
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		const char *sn = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sn || strcmp(sn, ".gnu_debuglink") != 0)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			return -1;
		const uint8_t *p = d->d_buf;
		size_t len = strnlen((const char *)p, d->d_size);
		size_t at = (len + 4) & ~(size_t)3; /* past the NUL, aligned to 4 */
		if (!len || len >= name_size || at + 4 > d->d_size)
			return -1;
		memcpy(name, p, len);
		name[len] = 0;
		if (strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			return -1;
		uint32_t v;
		if (eh.e_ident[EI_DATA] == ELFDATA2MSB)
			v = (uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 | (uint32_t)p[at + 2] << 8 | p[at + 3];
		else
			v = (uint32_t)p[at + 3] << 24 | (uint32_t)p[at + 2] << 16 | (uint32_t)p[at + 1] << 8 | p[at];
		*crc = v;
		return 0;
	}
	return -1;
}

/* Tries `rel` under root r. @return 1 when it is b's debug file (now b's
 * symbol file), else 0. */
static int try_link(struct binfo *b, struct root *r, const char *rel, uint32_t want, int host)
{
	char real[PATH_MAX + 400], label[PATH_MAX + 400];
	const char *why;
	snprintf(label, sizeof(label), "%.*s%s", (int)r->path_len, r->path, rel);
	int fd = pfsi_root_open(r, rel, real, sizeof(real), &why);
	if (fd < 0) {
		pfsi_tried(b, label, why);
		return 0;
	}
	char bad[200] = "";
	uint32_t crc = 0;
	int rc = crc_fd(fd, &crc);
	uint8_t bid[64];
	int bn = rc == 0 ? pf_build_id_fd(fd, bid) : 0;
	if (rc < 0)
		snprintf(bad, sizeof(bad), "%s", strerror(-rc));
	else if (crc != want)
		snprintf(bad, sizeof(bad), "CRC32 %08x, .gnu_debuglink says %08x", crc, want);
	else if (bn > 0 && b->bid_size && (bn != b->bid_size || memcmp(bid, b->bid, b->bid_size) != 0))
		snprintf(bad, sizeof(bad), "its build-id differs");
	Elf *e = NULL;
	if (!bad[0]) {
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (!e || elf_kind(e) != ELF_K_ELF)
			snprintf(bad, sizeof(bad), "not an ELF file");
		else if (!pfsi_has_symtab(e))
			snprintf(bad, sizeof(bad), "no .symtab");
	}
	if (bad[0]) {
		pfsi_tried(b, real, bad);
		pfsi_note(&b->skipped, real, bad);
		if (e)
			elf_end(e);
		close(fd);
		return 0;
	}
	pfsi_tried(b, real, host ? "debug link, used, from this machine" : "debug link, used");
	b->elf_sym = e;
	b->fd_sym = fd;
	free(b->symfile);
	b->symfile = strdup(real);
	b->host_sym = (uint8_t)host;
	return 1;
}

void pfsi_debuglink_find(struct symbolizer *s, struct binfo *b, const char *path)
{
	char name[256], dir[PATH_MAX], rel[2 * PATH_MAX + 300];
	uint32_t crc;
	if (!b->elf_main || b->elf_sym || read_link(b->elf_main, name, sizeof(name), &crc) < 0)
		return;
	const char *slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path); /* "" for "/prog" */
	/* DIR/NAME and DIR/.debug/NAME where the binary was recorded */
	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	if (try_link(b, s->primary, rel, crc, 0))
		return;
	snprintf(rel, sizeof(rel), "%s/.debug/%s", dir, name);
	if (try_link(b, s->primary, rel, crc, 0))
		return;
	/* each --debug-dir + DIR, each --debug-dir, then /usr/lib/debug + DIR */
	for (int i = 0; i < s->n_ddirs; i++) {
		const struct ddir *d = &s->ddirs[i];
		snprintf(rel, sizeof(rel), "%s%s/%s", d->prefix, dir, name);
		if (try_link(b, d->root, rel, crc, 0))
			return;
		if (i == s->n_ddirs - 1)
			break;
		snprintf(rel, sizeof(rel), "%s/%s", d->prefix, name);
		if (try_link(b, d->root, rel, crc, 0))
			return;
	}
	if (s->o.symfs && s->o.host_fallback) {
		snprintf(rel, sizeof(rel), "/usr/lib/debug%s/%s", dir, name);
		try_link(b, &s->host, rel, crc, 1);
	}
}
