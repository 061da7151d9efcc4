/*
 * libpfsym/root.c - opening the files a recording names, confined to a root.
 *
 * A recording comes from another machine and names files by path; a sysroot
 * (--symfs) is a copy of that machine's files, with its symbolic links. Both
 * are data, not instructions: a link in a sysroot that points to /etc/shadow
 * means the sysroot's /etc/shadow, and a recorded path may name a FIFO, a
 * device or a /proc file on this machine. So paths are resolved here, one
 * component at a time, under a directory taken as "/":
 *
 *  - a directory is opened with O_PATH | O_NOFOLLOW | O_DIRECTORY (this
 *    reads nothing, cannot block, and fails with ENOTDIR on a link or
 *    anything but a directory); any other component is looked at with
 *    fstatat(AT_SYMLINK_NOFOLLOW), which opens nothing;
 *  - a symbolic link is read (readlinkat) and its target walked in its place:
 *    an absolute target from the root again, ".." never above the root; at
 *    most ROOT_MAX_LINKS links per path (ELOOP beyond);
 *  - the first component may not be proc, sys or dev: those trees are never
 *    entered, whatever the root;
 *  - only a regular file outside the kernel's pseudo file systems (proc,
 *    sysfs, debugfs, ...) is opened for reading, by name relative to its
 *    directory's descriptor, with O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, and
 *    kept only if fstat shows the file the walk saw (same device and inode).
 *
 * System calls are slow where this was measured (about 3 us each, a walk of
 * /usr/lib/x86_64-linux-gnu/libc.so.6 one component at a time cost 60 us
 * against 9 for a plain open), so each root remembers the directories it
 * walked (by their path from the root, which has no links in it) and the
 * devices known to hold no pseudo file system.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal/pfsym.h"

#define ROOT_MAX_LINKS 40
#define ROOT_MAX_DEPTH 128
/* the remaining path, with link targets spliced in */
#define ROOT_REST_MAX (2 * PATH_MAX)
#define ROOT_N_DIRS (sizeof(((struct root *)0)->dirs) / sizeof(((struct root *)0)->dirs[0]))
#define ROOT_N_DEVS (sizeof(((struct root *)0)->devs_ok) / sizeof(((struct root *)0)->devs_ok[0]))

int pfsi_root_init(struct root *r, const char *dir)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->path = realpath(dir, NULL);
	if (!r->path)
		return -errno;
	r->fd = open(r->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->fd < 0) {
		int e = errno;
		free(r->path);
		r->path = NULL;
		return -e;
	}
	r->path_len = strlen(r->path);
	if (r->path_len == 1) /* "/": components follow without another '/' */
		r->path_len = 0;
	return 0;
}

void pfsi_root_fini(struct root *r)
{
	if (r->fd >= 0)
		close(r->fd);
	for (unsigned i = 0; i < r->n_dirs; i++) {
		close(r->dirs[i].fd);
		free(r->dirs[i].rel);
	}
	free(r->path);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int pfsi_root_contains(const struct root *r, const char *real)
{
	return strncmp(real, r->path, r->path_len) == 0 && (real[r->path_len] == '/' || real[r->path_len] == 0);
}

/* The kernel's pseudo file systems: their "regular" files are interfaces. */
static int pseudo_fs(long type)
{
	switch (type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC:
	case DEVPTS_SUPER_MAGIC:
	case EFIVARFS_MAGIC:
	case PSTOREFS_MAGIC:
	case 0x62656570: /* configfs */
		return 1;
	default:
		return 0;
	}
}

static const char *kind(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFIFO:
		return "a FIFO: not opened";
	case S_IFCHR:
		return "a character device: not opened";
	case S_IFBLK:
		return "a block device: not opened";
	case S_IFSOCK:
		return "a socket: not opened";
	case S_IFDIR:
		return "a directory";
	default:
		return "not a regular file: not opened";
	}
}

static const char *errno_why(int e)
{
	switch (e) {
	case ENOENT:
		return "missing";
	case ENOTDIR:
		return "missing (a path component is not a directory)";
	case ELOOP:
		return "too many symbolic links";
	case ENAMETOOLONG:
		return "path too long";
	default:
		return strerror(e);
	}
}

/* Where `p` goes on after the components of `rel` ("/a/b"), skipping empty
 * and "." components of p; NULL if p does not begin with them. */
static const char *dir_match(const char *p, const char *rel)
{
	for (;;) {
		while (*rel == '/')
			rel++;
		if (!*rel)
			return p;
		for (;;) {
			while (*p == '/')
				p++;
			if (p[0] == '.' && (p[1] == '/' || !p[1]))
				p++;
			else
				break;
		}
		size_t n = strcspn(rel, "/"), m = strcspn(p, "/");
		if (n != m || memcmp(p, rel, n) != 0)
			return NULL;
		p += m;
		rel += n;
	}
}

/* Remembers directory `rel` (n bytes) with descriptor fd (the root's now). */
static void dir_keep(struct root *r, const char *rel, size_t n, int fd)
{
	char *copy = malloc(n + 1);
	if (!copy) {
		close(fd);
		return;
	}
	memcpy(copy, rel, n);
	copy[n] = 0;
	struct root_dir *d;
	if (r->n_dirs < ROOT_N_DIRS) {
		d = &r->dirs[r->n_dirs++];
	} else {
		/* in place of the least recently used */
		d = &r->dirs[0];
		for (unsigned i = 1; i < r->n_dirs; i++)
			if (r->dirs[i].used < d->used)
				d = &r->dirs[i];
		close(d->fd);
		free(d->rel);
	}
	d->rel = copy;
	d->fd = fd;
	d->used = ++r->tick;
}

/* Whether the regular file `name` in directory dfd, of device `dev`, is on
 * a pseudo file system. @return 1, 0, or -errno. */
static int on_pseudo_fs(struct root *r, int dfd, const char *name, dev_t dev)
{
	for (unsigned i = 0; i < r->n_devs_ok; i++)
		if (r->devs_ok[i] == (unsigned long)dev)
			return 0;
	int c = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (c < 0)
		return -errno;
	struct statfs sf;
	int rc = fstatfs(c, &sf) < 0 ? -errno : pseudo_fs((long)sf.f_type);
	close(c);
	if (rc == 0 && r->n_devs_ok < ROOT_N_DEVS)
		r->devs_ok[r->n_devs_ok++] = (unsigned long)dev;
	return rc;
}

/* One walk of root_open(): the path left to walk (p, in bufs[cur]) and
 * the directories walked so far: dirs[0] is the root; dirs[i] is closed
 * when left if owned[i] (else it is a remembered one, and dirs[1] may then
 * stand for several components: cached1). */
struct walk {
	char bufs[2][ROOT_REST_MAX];
	int cur;
	const char *p;
	int dirs[ROOT_MAX_DEPTH + 1];
	uint8_t owned[ROOT_MAX_DEPTH + 1], cached1;
	size_t comp_end[ROOT_MAX_DEPTH + 1];
	char rel[PATH_MAX]; /* the path walked, from the root, "/a/b" */
	int depth, links;
	const char *tail; /* on failure: the part of the path not walked */
};

/* At the root: the longest remembered directory that w->p begins with
 * becomes dirs[1]. @return 1 if one did. */
static int walk_remembered(struct root *r, struct walk *w)
{
	const char *best = NULL;
	unsigned bi = 0;
	size_t bl = 0;
	for (unsigned i = 0; i < r->n_dirs; i++) {
		const char *q = dir_match(w->p, r->dirs[i].rel);
		size_t l = strlen(r->dirs[i].rel);
		if (q && l > bl) {
			best = q;
			bi = i;
			bl = l;
		}
	}
	if (!best)
		return 0;
	r->dirs[bi].used = ++r->tick;
	w->dirs[1] = r->dirs[bi].fd;
	w->owned[1] = 0;
	w->cached1 = 1;
	memcpy(w->rel, r->dirs[bi].rel, bl + 1);
	w->comp_end[1] = bl;
	w->depth = 1;
	w->p = best;
	return 1;
}

/* Component `name` of dirs[depth] is a symbolic link; q is the rest of the
 * path after it. Its target takes its place in the path. @return NULL, or
 * why the walk stops. */
static const char *walk_link(struct walk *w, const char *name, const char *q)
{
	char tgt[PATH_MAX];
	ssize_t tl = ++w->links > ROOT_MAX_LINKS ? -2 : readlinkat(w->dirs[w->depth], name, tgt, sizeof(tgt));
	int e = errno;
	if (tl <= 0 || (size_t)tl >= sizeof(tgt))
		return errno_why(tl == -2 ? ELOOP : tl < 0 ? e : tl == 0 ? ENOENT : ENAMETOOLONG);
	/* the target takes the link's place in the rest of the path */
	size_t rest = strlen(q);
	if ((size_t)tl + rest + 1 > sizeof(w->bufs[0]))
		return errno_why(ENAMETOOLONG);
	char *nb = w->bufs[!w->cur];
	memcpy(nb, tgt, (size_t)tl);
	memcpy(nb + tl, q, rest + 1);
	w->cur = !w->cur;
	w->p = nb;
	if (tgt[0] == '/') {
		for (; w->depth > 0; w->depth--)
			if (w->owned[w->depth])
				close(w->dirs[w->depth]);
		w->cached1 = 0;
	}
	w->rel[w->comp_end[w->depth]] = 0;
	return NULL;
}

/* The last component, `name` in dirs[depth] with lstat `st`: opened if it
 * is a regular file of a real file system. @return the descriptor, or -1
 * with *why set. */
static int walk_open(struct root *r, struct walk *w, const char *name, const struct stat *st, const char **why)
{
	if (!S_ISREG(st->st_mode)) {
		*why = kind(st->st_mode);
		return -1;
	}
	int ps = on_pseudo_fs(r, w->dirs[w->depth], name, st->st_dev);
	if (ps != 0) {
		*why = ps > 0 ? "a file of the kernel's (proc, sysfs, ...): never opened" : errno_why(-ps);
		return -1;
	}
	int fd = openat(w->dirs[w->depth], name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*why = errno_why(errno);
		return -1;
	}
	w->tail = ""; /* reached, whether it is used or not */
	struct stat st2;
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino) {
		close(fd);
		*why = "changed while it was opened: not used";
		return -1;
	}
	return fd;
}

/* The end of a walk: remembers the directories walked to (the next walk
 * may end in a sibling: /usr/lib/debug/.build-id/xx), the deepest last: it
 * is the one used next, the least recently used go first; closes the
 * others; writes the path reached to real. */
static void walk_end(struct root *r, struct walk *w, char *real, size_t real_size)
{
	for (int i = 1; i <= w->depth; i++) {
		if (w->owned[i]) {
			dir_keep(r, w->rel, w->comp_end[i], w->dirs[i]);
			w->owned[i] = 0;
		}
	}
	for (; w->depth > 0; w->depth--)
		if (w->owned[w->depth])
			close(w->dirs[w->depth]);
	if (real && real_size) {
		/* the file reached: the root's path, then the walk from it */
		snprintf(real, real_size, "%.*s%s%s", (int)r->path_len, r->path, w->rel[0] || *w->tail ? w->rel : "/",
			 w->tail);
	}
}

/* Steps into the directory `name` of dirs[depth] (not the last component).
 * @return 1 if it did, 0 if name is no directory (look at it), -1 with *why. */
static int walk_dir(struct walk *w, const char *name, size_t comp_end, const char **why)
{
	int c = openat(w->dirs[w->depth], name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (c >= 0) {
		if (w->depth == ROOT_MAX_DEPTH) {
			close(c);
			*why = errno_why(ENAMETOOLONG);
			return -1;
		}
		w->dirs[++w->depth] = c;
		w->owned[w->depth] = 1;
		w->comp_end[w->depth] = comp_end;
		return 1;
	}
	if (errno != ENOTDIR) {
		*why = errno_why(errno);
		return -1;
	}
	return 0;
}

int pfsi_root_open(struct root *r, const char *path, char *real, size_t real_size, const char **why)
{
	char name[NAME_MAX + 1];
	size_t plen = strlen(path);
	if (plen >= ROOT_REST_MAX) {
		*why = errno_why(ENAMETOOLONG);
		if (real && real_size)
			snprintf(real, real_size, "%.*s%s", (int)r->path_len, r->path, path);
		return -1;
	}
	struct walk walk, *w = &walk;
	int fd = -1, use_dirs = 1;
	w->cached1 = 0;
	w->tail = "";
restart:
	memcpy(w->bufs[0], path, plen + 1);
	w->cur = 0;
	w->p = w->bufs[0];
	w->dirs[0] = r->fd;
	w->owned[0] = 0;
	w->comp_end[0] = 0;
	w->rel[0] = 0;
	w->depth = 0;
	w->links = 0;
	*why = NULL;
	for (;;) {
		while (*w->p == '/')
			w->p++;
		w->tail = "";
		if (!*w->p) {
			*why = "a directory";
			break;
		}
		if (w->depth == 0 && use_dirs && walk_remembered(r, w))
			continue;
		const char *p = w->p, *q = p;
		while (*q && *q != '/')
			q++;
		w->tail = q;
		size_t n = (size_t)(q - p);
		const char *after = q;
		while (*after == '/')
			after++;
		int last = !*after;
		if (n == 1 && p[0] == '.') {
			w->p = q;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (w->depth == 1 && w->cached1) {
				/* a remembered directory stands for all the
				 * components to it: walk them one by one */
				use_dirs = 0;
				w->cached1 = 0;
				goto restart;
			}
			if (w->depth > 0) {
				if (w->owned[w->depth])
					close(w->dirs[w->depth]);
				w->depth--;
			}
			w->rel[w->comp_end[w->depth]] = 0;
			w->p = q;
			continue;
		}
		if (n > NAME_MAX) {
			*why = errno_why(ENAMETOOLONG);
			break;
		}
		memcpy(name, p, n);
		name[n] = 0;
		/* the walk so far, with this component (for messages) */
		size_t rl = w->comp_end[w->depth];
		if (rl + 1 + n >= sizeof(w->rel)) {
			*why = errno_why(ENAMETOOLONG);
			break;
		}
		w->rel[rl] = '/';
		memcpy(w->rel + rl + 1, name, n + 1);
		if (w->depth == 0 &&
		    (strcmp(name, "proc") == 0 || strcmp(name, "sys") == 0 || strcmp(name, "dev") == 0)) {
			*why = name[0] == 'p' ? "under /proc: never opened"
			       : name[0] == 's' ? "under /sys: never opened"
						: "under /dev: never opened";
			break;
		}
		if (!last) {
			int d = walk_dir(w, name, rl + 1 + n, why);
			if (d < 0)
				break;
			if (d > 0) {
				w->p = q;
				continue;
			}
		}
		struct stat st;
		if (fstatat(w->dirs[w->depth], name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			*why = errno_why(errno);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			if ((*why = walk_link(w, name, q)))
				break;
			continue;
		}
		if (!last) {
			*why = errno_why(ENOTDIR);
			break;
		}
		fd = walk_open(r, w, name, &st, why);
		break;
	}
	walk_end(r, w, real, real_size);
	return fd;
}
