/*
 * tools/common/untrusted.h - opening a file on someone else's behalf (not
 * installed): a file that a tool running as root reads because another
 * user's program named it or could have put it there, such as the
 * /tmp/perf-PID.map of a recorded process (pfrec) or the [vdso] image of
 * perf's build-id cache (pfimport). What it reads ends up in a recording,
 * so a link planted there must not make the tool read a file of someone
 * else's (/etc/shadow, the tool's own /proc/self/environ), and a FIFO or a
 * device must not make it block or read forever.
 *
 * The rules, checked on the descriptor opened (no race between a check and
 * the open):
 *  - no symbolic link is followed: O_NOFOLLOW for the last component, and
 *    with PF_UNTRUSTED_NO_LINKS none in any component of a relative path
 *    under a directory (openat2(2) RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
 *    where the kernel has no openat2 (before 5.6), each component is opened
 *    O_NOFOLLOW in turn);
 *  - opened O_NONBLOCK | O_NOCTTY, so that a FIFO or a terminal never
 *    blocks the open, then refused unless fstat(2) says a regular file;
 *  - its owner is root or one of the uids the caller names;
 *  - with PF_UNTRUSTED_ONE_LINK, a file of more than one name (a hard link
 *    another user made to a file he cannot read, where
 *    fs.protected_hardlinks is 0) is refused;
 *  - its size is checked against the caller's bound before any read.
 */
#ifndef PF_TOOLS_UNTRUSTED_H
#define PF_TOOLS_UNTRUSTED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PF_UNTRUSTED_NO_LINKS 1u /* no link in any component of `path` (under dirfd) */
#define PF_UNTRUSTED_ONE_LINK 2u /* refuse a file with more than one name (st_nlink > 1) */
#define PF_UNTRUSTED_TRUNCATE 4u /* a file over max_bytes is opened all the same (the
				  * caller reads its first max_bytes) */

/* Opens `path` (relative to directory `dirfd`, or AT_FDCWD) read-only by
 * the rules above. owners[0..n_owners): the uids besides root (0) whose
 * files are accepted. max_bytes: the largest size accepted (0: any), see
 * PF_UNTRUSTED_TRUNCATE. *st gets the file's status.
 * @return the descriptor (O_CLOEXEC, still O_NONBLOCK: reads of a regular
 * file do not mind), or a negative errno with *why set to a static
 * phrase for a message: -ELOOP "a symbolic link", -EINVAL "not a regular
 * file", -EPERM "owned by another user", -EMLINK "a hard link (more than
 * one name)", -EFBIG "too large", or an open(2) error (then *why is
 * strerror's text). */
int pf_open_untrusted(int dirfd, const char *path, unsigned flags, const uid_t *owners, size_t n_owners,
		      uint64_t max_bytes, struct stat *st, const char **why);

#endif
