/*
 * libpfsym/find.c - finding the binaries and debug files of a recording.
 *
 *
 * For each DSO (path + recorded build-id) the candidates are tried in order:
 * the path under --symfs DIR (else on this machine), each --debug-dir
 * (DIR/.build-id/xx/rest.debug, DIR + path, DIR + path + ".debug"),
 * /usr/lib/debug/.build-id/xx/rest.debug under --symfs DIR (else on this
 * machine), and with --symfs only if --host-fallback is given, the path and
 * /usr/lib/debug/.build-id/xx/rest.debug on this machine. Each directory is
 * a root that links cannot leave (root.c); only regular files are
 * opened. A candidate counts only if its build-id equals the recorded one:
 * without one on either side nothing vouches for the file, and only --force
 * uses it. The first match gives the PT_LOAD segments (file offset ->
 * virtual address); symbols come from the first match that has .symtab, else
 * from .dynsym. The symbol index is built once per build-id: a sorted array
 * searched by address, size-aware. Paths that name no file (//anon,
 * /memfd:..., [heap]) are never looked up, and a file that was deleted when
 * recorded (" (deleted)") never at the path recorded for it.
 *
 * A binary found without .symtab gets the file its .gnu_debuglink names,
 * CRC32-checked (debuglink.c); one that --force uses, the debug file of
 * its own build-id (own_id_debug()). This file finds and checks the files
 * (each_cand(), try_file()); the symbol index of a file found is symtab.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid.h"
#include "proof.h"
#include "internal/pfsym.h"

int pfsi_sym_new(const struct pfsym_opts *o, struct symbolizer **out, const char **bad_dir)
{
	elf_version(EV_CURRENT);
	*out = NULL;
	*bad_dir = NULL;
	struct symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->host.fd = s->sysroot.fd = -1;
	for (int i = 0; i < 32; i++)
		s->ddir_roots[i].fd = -1;
	/* this machine's root: not even opened under --symfs alone */
	int rc = 0;
	if ((!o->symfs || o->host_fallback) && (rc = pfsi_root_init(&s->host, "/")) < 0) {
		*bad_dir = "/";
		goto fail;
	}
	s->primary = &s->host;
	if (o->symfs) {
		if ((rc = pfsi_root_init(&s->sysroot, o->symfs)) < 0) {
			*bad_dir = o->symfs;
			goto fail;
		}
		s->primary = &s->sysroot;
	}
	if (o->n_debug_dirs > 32) {
		rc = -EINVAL;
		goto fail;
	}
	for (int i = 0; i < o->n_debug_dirs; i++) {
		struct root *r = &s->ddir_roots[i];
		if ((rc = pfsi_root_init(r, o->debug_dirs[i])) < 0) {
			*bad_dir = o->debug_dirs[i];
			goto fail;
		}
		struct ddir *d = &s->ddirs[s->n_ddirs++];
		if (o->symfs && pfsi_root_contains(&s->sysroot, r->path)) {
			/* a directory of the sysroot: its links are the sysroot's */
			d->root = &s->sysroot;
			d->prefix = strdup(r->path + s->sysroot.path_len);
		} else {
			d->root = r;
			d->prefix = strdup("");
		}
		if (!d->prefix) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	struct ddir *d = &s->ddirs[s->n_ddirs++];
	d->root = s->primary;
	if (!(d->prefix = strdup("/usr/lib/debug"))) {
		rc = -ENOMEM;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	pfsi_sym_free(s);
	return rc;
}

static void binfo_free(struct binfo *b)
{
	pfsi_lines_free(b->lines); /* before the ELF handles it reads */
	if (b->elf_sym && b->elf_sym != b->elf_main)
		elf_end(b->elf_sym);
	if (b->elf_main)
		elf_end(b->elf_main);
	if (b->fd_sym >= 0 && b->fd_sym != b->fd_main)
		close(b->fd_sym);
	if (b->fd_main >= 0)
		close(b->fd_main);
	if (b->fd_dbg >= 0)
		close(b->fd_dbg);
	free(b->dbgfile);
	free(b->path);
	free(b->found);
	free(b->symfile);
	free(b->inode_why);
	pf_buf_free(&b->tried);
	pf_buf_free(&b->skipped);
	free(b->syms);
	free(b->plt_names);
	free(b);
}

void pfsi_sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (struct binfo *b = s->list, *n; b; b = n) {
		n = b->next;
		binfo_free(b);
	}
	for (struct image *i = s->images, *n; i; i = n) {
		n = i->next;
		free(i->path);
		free(i->data);
		free(i);
	}
	for (int i = 0; i < s->n_ddirs; i++)
		free(s->ddirs[i].prefix);
	for (int i = 0; i < 32; i++)
		pfsi_root_fini(&s->ddir_roots[i]);
	pfsi_root_fini(&s->sysroot);
	pfsi_root_fini(&s->host);
	pfsi_debuginfod_free(s);
	free(s->meta_host);
	free(s->meta_release);
	free(s);
}

int pfsi_sym_add_image(struct symbolizer *s, const struct pf_dso_image *img)
{
	for (struct image *i = s->images; i; i = i->next)
		if (strlen(i->path) == img->path_len && memcmp(i->path, img->path, img->path_len) == 0)
			return 0; /* keep the first */
	struct image *i = calloc(1, sizeof(*i));
	if (!i)
		return -ENOMEM;
	i->path = strndup(img->path, img->path_len);
	i->data = malloc(img->image_size ? img->image_size : 1);
	if (!i->path || !i->data) {
		free(i->path);
		free(i->data);
		free(i);
		return -ENOMEM;
	}
	memcpy(i->data, img->image, img->image_size);
	i->size = img->image_size;
	i->next = s->images;
	s->images = i;
	return 0;
}

void pfsi_hex(const uint8_t *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

/* An entry already in the list (the DWARF search walks the debug-link
 * places the symbol search walked) is noted once. */
void pfsi_tried(struct binfo *b, const char *path, const char *why)
{
	const char *list = b->tried.len ? (const char *)b->tried.data : "";
	size_t pl = strlen(path), wl = strlen(why);
	for (const char *at = list; (at = strstr(at, path)); at++)
		if ((at == list || (at >= list + 2 && at[-2] == ',' && at[-1] == ' ')) && strncmp(at + pl, " (", 2) == 0 &&
		    strncmp(at + pl + 2, why, wl) == 0 && at[pl + 2 + wl] == ')' &&
		    (at[pl + 3 + wl] == 0 || at[pl + 3 + wl] == ','))
			return;
	pfsi_note(&b->tried, path, why);
}

/* ---- finding the files ---- */

static int deleted_suffix(const char *p)
{
	size_t n = strlen(p);
	return n > 10 && strcmp(p + n - 10, " (deleted)") == 0;
}

/* The path to look for b's file at (without the " (deleted)" suffix of a
 * deleted file: a real file may have a name that ends so). */
static void lookup_path(const struct binfo *b, char *out, size_t size)
{
	size_t n = strlen(b->path);
	if (b->kind == PF_DSO_DELETED && deleted_suffix(b->path))
		n -= 10;
	snprintf(out, size, "%.*s", (int)n, b->path);
}

/* A place to look: `rel` resolved under root `r`. */
struct cand {
	struct root *r;
	const char *rel;
	int host;  /* this machine's file, reached by --host-fallback */
	int debug; /* a place for debug files, not where the binary lives */
};

typedef int (*cand_fn)(struct symbolizer *s, struct binfo *b, const struct cand *c, void *arg);

/* Calls fn on each place for b's files (`path` as recorded, without
 * " (deleted)"), in the order of the comment at the top, until it returns
 * nonzero. A file deleted when recorded is not looked for at its path, in
 * the sysroot or on this machine: what is there now is another file. */
static void each_cand(struct symbolizer *s, struct binfo *b, const char *path, cand_fn fn, void *arg)
{
	char rel[PATH_MAX + 200], bidhex[140];
	if (b->bid_size)
		pfsi_hex(b->bid, b->bid_size, bidhex);
	struct cand c = { s->primary, path, 0, 0 };
	if (!b->deleted && fn(s, b, &c, arg))
		return;
	for (int i = 0; i < s->n_ddirs; i++) {
		const struct ddir *d = &s->ddirs[i];
		c = (struct cand){ d->root, rel, 0, 1 };
		if (b->bid_size) {
			snprintf(rel, sizeof(rel), "%s/.build-id/%.2s/%s.debug", d->prefix, bidhex, bidhex + 2);
			if (fn(s, b, &c, arg))
				return;
		}
		if (i == s->n_ddirs - 1)
			break; /* /usr/lib/debug: by build-id only */
		if ((size_t)snprintf(rel, sizeof(rel), "%s%s", d->prefix, path) < sizeof(rel) && fn(s, b, &c, arg))
			return;
		if ((size_t)snprintf(rel, sizeof(rel), "%s%s.debug", d->prefix, path) < sizeof(rel) && fn(s, b, &c, arg))
			return;
	}
	if (s->o.symfs && s->o.host_fallback) {
		c = (struct cand){ &s->host, path, 1, 0 };
		if (!b->deleted && fn(s, b, &c, arg))
			return;
		if (b->bid_size) {
			snprintf(rel, sizeof(rel), "/usr/lib/debug/.build-id/%.2s/%s.debug", bidhex, bidhex + 2);
			c = (struct cand){ &s->host, rel, 1, 1 };
			fn(s, b, &c, arg);
		}
	}
}

/* Opens a candidate: the descriptor, or -1 with the reason noted as tried.
 * label gets "PLACE" or "PLACE -> FILE REACHED" (through links); real the
 * file reached. */
static int open_cand(const struct cand *c, char *label, size_t label_size, char *real, size_t real_size,
		     const char **why)
{
	char shown[PATH_MAX + 400];
	snprintf(shown, sizeof(shown), "%.*s%s", (int)c->r->path_len, c->r->path, c->rel);
	int fd = pfsi_root_open(c->r, c->rel, real, real_size, why);
	if (strcmp(shown, real) == 0)
		snprintf(label, label_size, "%s", shown);
	else
		snprintf(label, label_size, "%s -> %s", shown, real);
	return fd;
}

struct find_ctx {
	Elf *mm;        /* --force: the first file that no build-id vouches for */
	int mm_fd, mm_host;
	char *mm_path;
	int mismatched; /* a file with another build-id was seen */
	int unverified; /* a file was seen where no build-id was recorded */
};

static int try_file(struct symbolizer *s, struct binfo *b, const struct cand *c, void *arg)
{
	struct find_ctx *x = arg;
	if (b->elf_main && b->elf_sym)
		return 1;
	char label[2 * PATH_MAX + 800], real[PATH_MAX + 400];
	const char *why;
	int fd = open_cand(c, label, sizeof(label), real, sizeof(real), &why);
	if (fd < 0) {
		pfsi_tried(b, label, why);
		return 0;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		pfsi_tried(b, label, "not an ELF file");
		if (e)
			elf_end(e);
		close(fd);
		return 0;
	}
	uint8_t bid[64];
	int bn = pf_build_id_fd(fd, bid);
	size_t n = bn > 0 ? (size_t)bn : 0;
	char bad[200] = "";
	if (b->as_is) {
		/* --resolve: the file the user named */
	} else if (!b->bid_size && b->inode_ok && !c->debug && c->r == &s->host && !c->host) {
		/* the file proven by inode (it has no build-id of its own) */
	} else if (!b->bid_size) {
		snprintf(bad, sizeof(bad), "no build-id recorded to check it against");
		x->unverified = 1;
	} else if (n != b->bid_size || memcmp(bid, b->bid, n) != 0) {
		strcpy(bad, "build-id ");
		if (n)
			pfsi_hex(bid, n, bad + 9);
		else
			strcpy(bad + 9, "none");
		strcat(bad, " differs");
		x->mismatched = 1;
	}
	if (bad[0]) {
		pfsi_tried(b, label, bad);
		if (s->o.force && !x->mm) {
			x->mm = e;
			x->mm_fd = fd;
			x->mm_host = c->host;
			x->mm_path = strdup(real);
		} else {
			elf_end(e);
			close(fd);
		}
		return 0;
	}
	int used = 0;
	if (!b->elf_main) {
		b->elf_main = e;
		b->fd_main = fd;
		b->found = strdup(real);
		b->host_main = (uint8_t)c->host;
		pfsi_load_segments(b, e);
		used = 1;
	}
	if (!b->elf_sym && pfsi_has_symtab(e)) {
		b->elf_sym = e;
		b->fd_sym = fd;
		free(b->symfile);
		b->symfile = strdup(real);
		b->host_sym = (uint8_t)c->host;
		used = 1;
	}
	pfsi_tried(b, label, !used ? "matches, no .symtab" : c->host ? "used, from this machine" : "used");
	if (!used) {
		elf_end(e);
		close(fd);
	}
	return b->elf_main && b->elf_sym;
}

/* The debuginfod servers' file of b's build-id (debuginfo: its debug
 * file, else its executable), tried as a file of this machine. */
static void try_debuginfod(struct symbolizer *s, struct binfo *b, int debuginfo, struct find_ctx *x)
{
	char p[PATH_MAX];
	if (b->as_is || pfsi_debuginfod_fetch(s, b, debuginfo, p, sizeof(p)) < 0)
		return;
	if (s->host.fd < 0 && pfsi_root_init(&s->host, "/") < 0)
		return;
	struct cand c = { &s->host, p, 0, debuginfo };
	try_file(s, b, &c, x);
}

/* --force: the binary used is vouched for by no recorded build-id (none
 * was recorded, or another), but it has one of its own: its debug file by
 * that build-id in each debug dir (the last is /usr/lib/debug; with --symfs
 * and --host-fallback also this machine's), where gdb and perf look too. The
 * debug file must have the binary's build-id. */
static void own_id_debug(struct symbolizer *s, struct binfo *b)
{
	uint8_t own[sizeof(b->bid)];
	int n = pf_build_id_fd(b->fd_main, own);
	if (n <= 0 || (size_t)n > sizeof(own))
		return;
	uint8_t recorded[sizeof(b->bid)], recorded_n = b->bid_size;
	memcpy(recorded, b->bid, sizeof(recorded));
	memcpy(b->bid, own, (size_t)n); /* what try_file() checks against */
	b->bid_size = (uint8_t)n;
	char hex[2 * sizeof(own) + 1], rel[PATH_MAX + 200];
	pfsi_hex(own, (size_t)n, hex);
	struct find_ctx x = { NULL, -1, 0, NULL, 0, 0 };
	for (int i = 0; i < s->n_ddirs && !b->elf_sym; i++) {
		const struct ddir *d = &s->ddirs[i];
		snprintf(rel, sizeof(rel), "%s/.build-id/%.2s/%s.debug", d->prefix, hex, hex + 2);
		struct cand c = { d->root, rel, 0, 1 };
		try_file(s, b, &c, &x);
	}
	if (!b->elf_sym && s->o.symfs && s->o.host_fallback) {
		snprintf(rel, sizeof(rel), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		struct cand c = { &s->host, rel, 1, 1 };
		try_file(s, b, &c, &x);
	}
	if (x.mm) {
		elf_end(x.mm);
		close(x.mm_fd);
	}
	free(x.mm_path);
	memcpy(b->bid, recorded, sizeof(recorded));
	b->bid_size = recorded_n;
}

/* The inode proof of b (recorded without a build-id) at `path` on this
 * machine: proof.h. Proven: b's build-id is the file's (bid_proven), and
 * inode_ok set; else inode_why says why not. */
static void inode_proof(struct symbolizer *s, struct binfo *b, const char *path)
{
	char why[400];
	if (!b->ino_known) {
		b->inode_why = strdup("no device and inode recorded for it");
		return;
	}
	if (s->o.symfs && !s->o.host_fallback) {
		b->inode_why = strdup("--symfs: the inode proof is for this machine's files");
		return;
	}
	if (!s->boot_state) {
		s->boot_state = pf_proof_same_boot(s->meta_host, s->meta_release, s->meta_text, s->boot_why,
						   sizeof(s->boot_why)) ? 1 : -1;
	}
	if (s->boot_state < 0) {
		snprintf(why, sizeof(why), "not this machine and boot: %s", s->boot_why);
		b->inode_why = strdup(why);
		return;
	}
	if (s->host.fd < 0 && pfsi_root_init(&s->host, "/") < 0) {
		b->inode_why = strdup("cannot open /");
		return;
	}
	char real[PATH_MAX + 400];
	const char *w;
	int fd = pfsi_root_open(&s->host, path, real, sizeof(real), &w);
	if (fd < 0) {
		snprintf(why, sizeof(why), "%.300s: %s", path, w);
		b->inode_why = strdup(why);
		return;
	}
	if (!pf_proof_file(fd, b->dev_maj, b->dev_min, b->ino, s->start_ns, why, sizeof(why))) {
		close(fd);
		b->inode_why = strdup(why);
		return;
	}
	uint8_t bid[64];
	int n = pf_build_id_fd(fd, bid);
	close(fd);
	if (n > 0 && (size_t)n <= sizeof(b->bid)) {
		memcpy(b->bid, bid, (size_t)n);
		b->bid_size = (uint8_t)n;
		b->bid_proven = 1;
	}
	b->inode_ok = 1;
}

int pfsi_sym_meta(struct symbolizer *s, const uint8_t *data, size_t size)
{
	char v[512];
	free(s->meta_host);
	free(s->meta_release);
	s->meta_host = s->meta_release = NULL;
	s->meta_text = s->start_ns = 0;
	s->boot_state = 0;
	if (pf_kv_get(data, size, "hostname", v, sizeof(v)) > 0 && !(s->meta_host = strdup(v)))
		return -ENOMEM;
	if (pf_kv_get(data, size, "kernel_release", v, sizeof(v)) > 0 && !(s->meta_release = strdup(v)))
		return -ENOMEM;
	if (pf_kv_get(data, size, "kernel_text", v, sizeof(v)) > 0)
		s->meta_text = strtoull(v, NULL, 10);
	/* the start: pfrec reads its anchor as it starts (an import has it
	 * from perf's CLOCK_DATA, perf record -k mono) */
	if (pf_kv_get(data, size, "clock_anchor_realtime_ns", v, sizeof(v)) > 0)
		s->start_ns = strtoull(v, NULL, 10);
	return 0;
}

int pfsi_sym_proven_buildids(const struct symbolizer *s, struct pf_buf *out)
{
	int n = 0;
	for (const struct binfo *b = s->list; b; b = b->next) {
		if (!b->bid_proven || b->state != ST_OK || !b->asked)
			continue;
		struct pf_buildid e;
		memset(&e, 0, sizeof(e));
		memcpy(e.build_id, b->bid, b->bid_size);
		e.build_id_size = b->bid_size;
		e.flags = PF_BUILDID_INODE;
		e.path = b->path;
		e.path_len = strlen(b->path);
		if (pf_buildid_encode(out, &e) < 0)
			return -ENOMEM;
		n++;
	}
	return n;
}

void pfsi_find_files(struct symbolizer *s, struct binfo *b)
{
	char path[PATH_MAX + 16];
	struct find_ctx x = { NULL, -1, 0, NULL, 0, 0 };
	if (strlen(b->path) >= PATH_MAX) {
		/* cut short, it would name another file */
		pfsi_tried(b, "(the recorded path)", "path too long");
		b->state = ST_MISSING;
		return;
	}
	lookup_path(b, path, sizeof(path));
	if (!b->as_is && !b->deleted && !b->bid_size && b->kind == PF_DSO_FILE)
		inode_proof(s, b, path);
	if (b->as_is) {
		/* --resolve: the file named on this machine */
		struct cand c = { &s->host, path, 0, 0 };
		if (s->host.fd >= 0 || pfsi_root_init(&s->host, "/") == 0)
			try_file(s, b, &c, &x);
		else
			pfsi_tried(b, path, "cannot open /");
	} else {
		if (b->deleted)
			pfsi_tried(b, b->path, "deleted when recorded: not looked for at its path");
		each_cand(s, b, path, try_file, &x);
		if (!b->elf_main)
			try_debuginfod(s, b, 0, &x);
	}
	if (!b->elf_main && x.mm) {
		/* --force: a binary with another build-id, or none to check */
		b->elf_main = x.mm;
		b->fd_main = x.mm_fd;
		b->found = x.mm_path;
		b->forced = 1;
		b->host_main = (uint8_t)x.mm_host;
		pfsi_load_segments(b, x.mm);
		if (pfsi_has_symtab(x.mm)) {
			b->elf_sym = x.mm;
			b->fd_sym = x.mm_fd;
			b->host_sym = (uint8_t)x.mm_host;
		}
		x.mm = NULL;
		x.mm_path = NULL;
	}
	if (x.mm) {
		elf_end(x.mm);
		close(x.mm_fd);
	}
	free(x.mm_path);
	if (!b->elf_main) {
		if (s->o.symfs && !s->o.host_fallback && !b->as_is && !b->deleted)
			pfsi_tried(b, path, "this machine's file: not looked at without --host-fallback");
		b->state = x.mismatched ? ST_MISMATCH : x.unverified ? ST_UNVERIFIED : ST_MISSING;
		return;
	}
	b->state = ST_OK;
	if (!b->elf_sym && !b->as_is)
		pfsi_debuglink_find(s, b, path);
	if (!b->elf_sym && b->forced)
		own_id_debug(s, b);
	if (!b->elf_sym && !b->as_is && !b->forced) {
		struct find_ctx y = { NULL, -1, 0, NULL, 0, 0 };
		try_debuginfod(s, b, 1, &y);
		if (y.mm) {
			elf_end(y.mm);
			close(y.mm_fd);
		}
		free(y.mm_path);
	}
	if (b->elf_sym)
		pfsi_load_syms(b, b->elf_sym, SHT_SYMTAB, b->elf_main);
	else if (pfsi_has_dynsym(b->elf_main))
		pfsi_load_syms(b, b->elf_main, SHT_DYNSYM, b->elf_main);
}

struct binfo *pfsi_binfo_new(struct symbolizer *s, const struct pf_dso *dso, int deleted, int as_is)
{
	struct binfo *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->fd_main = b->fd_sym = b->fd_dbg = -1;
	b->kind = dso->kind;
	b->path = strdup(dso->path);
	if (!b->path) {
		free(b);
		return NULL;
	}
	b->bid_size = dso->build_id_size;
	memcpy(b->bid, dso->build_id, dso->build_id_size);
	b->deleted = (uint8_t)deleted;
	b->as_is = (uint8_t)as_is;
	b->proof = dso->proof;
	b->inode_ok = dso->build_id_size && dso->proof == PF_DSO_PROOF_INODE;
	if (dso->ino_state == PF_DSO_INO_KNOWN) {
		b->ino_known = 1;
		b->dev_maj = dso->dev_maj;
		b->dev_min = dso->dev_min;
		b->ino = dso->ino;
	}
	b->next = s->list;
	s->list = b;
	return b;
}

struct binfo *pfsi_binfo_get(struct symbolizer *s, struct pf_dso *dso)
{
	if (dso->user)
		return dso->user;
	int deleted = dso->kind == PF_DSO_DELETED || dso->kind == PF_DSO_REPLACED;
	/* one index per build-id (or per path without one) and kind: a DSO
	 * whose path is not to be opened never shares the index of one found
	 * at its path, whichever was asked for first */
	for (struct binfo *b = s->list; b; b = b->next) {
		if (b->as_is || b->kind != dso->kind || (dso->kind != PF_DSO_FILE && strcmp(b->path, dso->path) != 0))
			continue;
		if (dso->build_id_size ? (b->bid_size == dso->build_id_size &&
					  memcmp(b->bid, dso->build_id, b->bid_size) == 0)
				       : ((!b->bid_size || b->bid_proven) && !b->as_is && b->deleted == deleted &&
					  strcmp(b->path, dso->path) == 0 &&
					  (dso->ino_state != PF_DSO_INO_KNOWN ||
					   (b->ino_known && b->ino == dso->ino && b->dev_maj == dso->dev_maj &&
					    b->dev_min == dso->dev_min)))) {
			dso->user = b;
			return b;
		}
	}
	struct binfo *b = pfsi_binfo_new(s, dso, deleted, 0);
	if (!b)
		return NULL;
	dso->user = b;

	const char *p = dso->path;
	if (p[0] == '[') {
		for (struct image *i = s->images; i; i = i->next) {
			if (strcmp(i->path, p) != 0)
				continue;
			Elf *e = elf_memory(i->data, i->size);
			if (e && elf_kind(e) == ELF_K_ELF) {
				b->elf_main = b->elf_sym = e;
				b->found = strdup("(recorded image)");
				pfsi_load_segments(b, e);
				pfsi_load_syms(b, e, pfsi_has_symtab(e) ? SHT_SYMTAB : SHT_DYNSYM, e);
				b->state = ST_OK;
			} else if (e) {
				elf_end(e);
			}
			break;
		}
		if (b->state == ST_NEW)
			b->state = ST_NOFILE;
		return b;
	}
	if (dso->kind == PF_DSO_ANON || dso->kind == PF_DSO_PSEUDO) {
		b->state = ST_NOFILE; /* //anon, anon_inode:..., /memfd:... */
		return b;
	}
	pfsi_find_files(s, b);
	return b;
}

int pfsi_sym_preload_one(struct symbolizer *s, struct pf_maps *maps)
{
	while (s->preload_next < maps->n_dsos) {
		struct pf_dso *dso = pf_maps_dso(maps, s->preload_next++);
		/* only a DSO whose identity is final: one without a build-id
		 * may still get one from a BUILDID section, and is bound to
		 * its file at its first lookup, at a point of the input that
		 * does not depend on this thread's timing */
		if (dso->user || dso->kind != PF_DSO_FILE || !dso->build_id_size)
			continue;
		return pfsi_binfo_get(s, dso) ? 1 : -ENOMEM;
	}
	return 0;
}

static int binfo_report_cmp(const void *a, const void *b)
{
	const struct binfo *x = *(const struct binfo *const *)a, *y = *(const struct binfo *const *)b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	if (x->bid_size != y->bid_size)
		return x->bid_size < y->bid_size ? -1 : 1;
	return memcmp(x->bid, y->bid, x->bid_size);
}

int pfsi_sym_report(struct symbolizer *s, FILE *out, const char *prog)
{
	/* by path, not in the list's order, which follows when binaries were
	 * loaded (early loading runs while the input is read) */
	size_t n = 0, k = 0;
	for (struct binfo *b = s->list; b; b = b->next)
		n++;
	struct binfo **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (struct binfo *b = s->list; b; b = b->next)
		if (b->asked)
			v[k++] = b;
	qsort(v, k, sizeof(*v), binfo_report_cmp);
	int lines = 0;
	for (size_t i = 0; i < k; i++) {
		const struct binfo *b = v[i];
		if (b->state == ST_OK && (b->host_main || b->host_sym)) {
			int two = b->elf_sym && b->elf_sym != b->elf_main;
			pfsi_report_line(out, "%s: %s: from this machine (--host-fallback): %s%s%s%s", prog, b->path,
				b->host_main ? b->found : "", b->host_main && two && b->host_sym ? ", " : "",
				two && b->host_sym ? "symbols from " : "", two && b->host_sym ? b->symfile : "");
			lines++;
		}
		char bidhex[140] = "none";
		if (b->bid_size)
			pfsi_hex(b->bid, b->bid_size, bidhex);
		if (b->state == ST_OK && !b->as_is && b->found && b->found[0] == '/') {
			/* how the file used was proven to be the one recorded */
			if (b->forced)
				fprintf(out, "%s: %s: proof: none, used by --force (%s)\n", prog, b->path, b->found);
			else if (b->bid_proven || (b->inode_ok && !b->bid_size))
				fprintf(out,
					"%s: %s: proof: inode (device %x:%x, inode %llu, unchanged since before the "
					"recording, in its boot), build-id %s\n",
					prog, b->path, b->dev_maj, b->dev_min, (unsigned long long)b->ino,
					b->bid_size ? bidhex : "none");
			else if (b->inode_ok)
				fprintf(out, "%s: %s: proof: inode (checked when imported: BUILDID flag INODE), build-id %s\n",
					prog, b->path, bidhex);
			else
				fprintf(out, "%s: %s: proof: build-id %s (recorded)\n", prog, b->path, bidhex);
			lines++;
		}
		if (b->skipped.len) {
			pfsi_report_line(out, "%s: %s: debug files skipped: %s", prog, b->path, (char *)b->skipped.data);
			lines++;
		}
		if (b->state == ST_OK && !b->forced && !b->elf_sym && b->fd_main >= 0 && b->addrs_named < b->addrs) {
			/* found, stripped, no debug file: .dynsym at most */
			char name[PATH_MAX];
			lookup_path(b, name, sizeof(name));
			pfsi_report_line(out,
				"%s: %s: stripped (no .symtab) and no debug file found: %llu of %llu addresses "
				"unnamed (build-id %s); tried: %s",
				prog, name, (unsigned long long)(b->addrs - b->addrs_named), (unsigned long long)b->addrs,
				bidhex, b->tried.data ? (char *)b->tried.data : "nothing");
			lines++;
		}
		if (b->state != ST_MISSING && b->state != ST_MISMATCH && b->state != ST_UNVERIFIED && !b->forced)
			continue;
		char unv[600];
		snprintf(unv, sizeof(unv),
			 "no build-id recorded to check a file against%s%s%s, frames left unresolved (--force uses it)",
			 b->inode_why ? " and no inode proof (" : "", b->inode_why ? b->inode_why : "",
			 b->inode_why ? ")" : "");
		const char *what =
			b->forced ? (b->bid_size ? "used despite a build-id mismatch (--force)"
						 : "used without a build-id check: none recorded (--force)")
			: b->state == ST_MISMATCH ? "build-id mismatch, frames left unresolved"
			: b->state == ST_UNVERIFIED ? unv
				: "not found";
		char name[PATH_MAX];
		lookup_path(b, name, sizeof(name)); /* without " (deleted)" */
		pfsi_report_line(out, "%s: %s: %s (build-id %s, %llu addresses); tried: %s", prog, name, what, bidhex,
			(unsigned long long)b->addrs, b->tried.data ? (char *)b->tried.data : "nothing");
		lines++;
	}
	free(v);
	return lines;
}

void pfsi_sym_counts(const struct symbolizer *s, struct pfsi_sym_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (const struct binfo *b = s->list; b; b = b->next) {
		if (!b->asked)
			continue;
		if (b->state == ST_OK) {
			c->found++;
			if (b->host_main || b->host_sym)
				c->from_host++;
		} else if (b->state == ST_MISSING) {
			c->missing++;
		} else if (b->state == ST_MISMATCH) {
			c->mismatched++;
		} else if (b->state == ST_UNVERIFIED) {
			c->unverified++;
		}
	}
}

Elf *pfsi_sym_dso_elf(struct symbolizer *s, struct pf_dso *dso, const char **path, int *fd)
{
	struct binfo *b = pfsi_binfo_get(s, dso);
	*path = NULL;
	*fd = -1;
	if (b)
		b->asked = 1;
	if (!b || b->state != ST_OK || !b->elf_main)
		return NULL;
	if (b->found && b->found[0] == '/' && b->fd_main >= 0) {
		*path = b->found;
		*fd = b->fd_main;
	}
	return b->elf_main;
}

/* each_cand() callback of pfsi_sym_dso_debug_fd(): the first debug place that
 * holds a file of b's build-id. */
static int find_dbg(struct symbolizer *s, struct binfo *b, const struct cand *c, void *arg)
{
	(void)s;
	(void)arg;
	if (!c->debug)
		return 0;
	char label[2 * PATH_MAX + 800], real[PATH_MAX + 400];
	const char *why;
	int fd = open_cand(c, label, sizeof(label), real, sizeof(real), &why);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint8_t bid[64];
	int ok = e && elf_kind(e) == ELF_K_ELF && pf_build_id_fd(fd, bid) == (int)b->bid_size &&
		 memcmp(bid, b->bid, b->bid_size) == 0;
	if (e)
		elf_end(e);
	if (ok && !(b->dbgfile = strdup(real)))
		ok = 0;
	if (!ok) {
		close(fd);
		return 0;
	}
	b->fd_dbg = fd;
	return 1;
}

int pfsi_sym_dso_debug_fd(struct symbolizer *s, struct pf_dso *dso, const char **path)
{
	struct binfo *b = pfsi_binfo_get(s, dso);
	*path = NULL;
	if (!b || b->state != ST_OK || !b->elf_main || b->fd_main < 0)
		return -1;
	if (b->elf_sym && b->elf_sym != b->elf_main && b->fd_sym >= 0) {
		*path = b->symfile;
		return fcntl(b->fd_sym, F_DUPFD_CLOEXEC, 0);
	}
	if (!b->dbg_searched) {
		b->dbg_searched = 1;
		char p[PATH_MAX + 16];
		if (b->bid_size && !b->forced && !b->as_is && strlen(b->path) < PATH_MAX) {
			lookup_path(b, p, sizeof(p));
			each_cand(s, b, p, find_dbg, NULL);
		}
		/* a binary with .symtab (strip --strip-debug) whose DWARF is in the
		 * file its .gnu_debuglink names: the places and checks of a binary
		 * without .symtab (debuglink.c), which sets b's symbol file, so b's
		 * is set aside meanwhile */
		if (b->fd_dbg < 0 && !b->as_is && strlen(b->path) < PATH_MAX) {
			Elf *sym = b->elf_sym;
			int fd_sym = b->fd_sym;
			char *symfile = b->symfile;
			uint8_t host_sym = b->host_sym;
			b->elf_sym = NULL;
			b->fd_sym = -1;
			b->symfile = NULL;
			lookup_path(b, p, sizeof(p));
			pfsi_debuglink_find(s, b, p);
			if (b->elf_sym) {
				elf_end(b->elf_sym);
				b->fd_dbg = b->fd_sym;
				b->dbgfile = b->symfile;
			} else {
				free(b->symfile);
			}
			b->elf_sym = sym;
			b->fd_sym = fd_sym;
			b->symfile = symfile;
			b->host_sym = host_sym;
		}
	}
	if (b->fd_dbg < 0)
		return -1;
	*path = b->dbgfile;
	return fcntl(b->fd_dbg, F_DUPFD_CLOEXEC, 0);
}
