/*
 * tools/common/untrusted.c - opening a file on someone else's behalf
 * (untrusted.h has the rules and why).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "untrusted.h"

#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Each component of `path` opened with O_NOFOLLOW in turn (directories with
 * O_PATH | O_DIRECTORY): the openat2() rule for kernels without it. */
static int open_each(int dirfd, const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	if (len >= sizeof(buf) || path[0] == '/')
		return -EINVAL;
	memcpy(buf, path, len + 1);
	int d = dirfd, fd = -1;
	for (char *s = buf; s;) {
		char *slash = strchr(s, '/');
		if (slash)
			*slash = 0;
		if (!strcmp(s, "..")) {
			fd = -EXDEV; /* not beneath dirfd */
		} else if (slash) {
			fd = openat(d, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				fd = -(errno == ENOTDIR ? ELOOP : errno); /* a link to a directory */
		} else {
			fd = openat(d, s, OPEN_FLAGS);
			if (fd < 0)
				fd = -errno;
		}
		if (d != dirfd)
			close(d);
		if (fd < 0 || !slash)
			break;
		d = fd;
		s = slash + 1;
	}
	return fd;
}

int pf_open_untrusted(int dirfd, const char *path, unsigned flags, const uid_t *owners, size_t n_owners,
		      uint64_t max_bytes, struct stat *st, const char **why)
{
	int fd;
	if (flags & PF_UNTRUSTED_NO_LINKS) {
		struct open_how how;
		memset(&how, 0, sizeof(how));
		how.flags = OPEN_FLAGS;
		how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd < 0)
			fd = errno == ENOSYS ? open_each(dirfd, path) : -errno;
	} else {
		fd = openat(dirfd, path, OPEN_FLAGS);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		*why = fd == -ELOOP ? "a symbolic link" : strerror(-fd);
		return fd;
	}
	int rc = 0;
	if (fstat(fd, st) < 0) {
		rc = -errno;
		*why = strerror(errno);
	} else if (!S_ISREG(st->st_mode)) {
		rc = -EINVAL;
		*why = "not a regular file";
	} else if ((flags & PF_UNTRUSTED_ONE_LINK) && st->st_nlink > 1) {
		rc = -EMLINK;
		*why = "a hard link (more than one name)";
	} else if (!(flags & PF_UNTRUSTED_TRUNCATE) && max_bytes && (uint64_t)st->st_size > max_bytes) {
		rc = -EFBIG;
		*why = "too large";
	} else if (st->st_uid != 0) {
		rc = -EPERM;
		*why = "owned by another user";
		for (size_t i = 0; i < n_owners; i++)
			if (st->st_uid == owners[i])
				rc = 0;
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}
