/*
 * tools/pfrec/perfmap.c - JIT symbol maps: a recorded process's
 * /tmp/perf-PID.map (the perf map convention: "START SIZE name" lines that
 * JIT compilers and interpreters such as `python3.12 -X perf` append to
 * while they run) copied into a PERFMAP section (format/pfile.md 4.12),
 * when the process exits and when the recording stops.
 *
 * pfrec runs as root and the map is written by the recorded program, which
 * may be another user's: /tmp/perf-PID.map could be a link to /etc/shadow
 * or to pfrec's own /proc/self/environ (where fs.protected_symlinks is 0),
 * a FIFO, or a hard link. It is opened by the rules of untrusted.h: no
 * link followed, a regular file only, of one name, owned by root or by the
 * recorded process's owner (as pfrec saw it at its exec, or now), and at
 * most PERFMAP_MAX_BYTES of it read. A refused map is named in a notice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "rec.h"
#include "untrusted.h"
#include "../pfrec.h"

/* Room left for the text in a 64 MiB payload after its 16-byte header. */
#define PERFMAP_MAX_BYTES ((64u << 20) - 4096u)

static size_t owner_slot(const struct rec *R, uint32_t pid)
{
	size_t mask = R->cap_owners - 1, h = (size_t)(pid * 0x9e3779b1u) & mask;
	while (R->owners[h].pid && R->owners[h].pid != pid)
		h = (h + 1) & mask;
	return h;
}

/* The uid that owns /proc/PID (the process's effective uid; root's for a
 * process that is not dumpable), or -1 when it is gone. */
static int64_t proc_owner(uint32_t pid)
{
	char path[32];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &st) == 0 ? (int64_t)st.st_uid : -1;
}

int64_t process_owner(const struct rec *R, uint32_t pid)
{
	if (R->cap_owners) {
		size_t h = owner_slot(R, pid);
		if (R->owners[h].pid)
			return R->owners[h].uid;
	}
	return pid ? proc_owner(pid) : -1;
}

void note_owner(struct rec *R, uint32_t pid)
{
	int64_t uid = proc_owner(pid);
	if (!pid || uid < 0)
		return;
	if ((R->n_owners + 1) * 2 > R->cap_owners) {
		size_t ncap = R->cap_owners ? 2 * R->cap_owners : 256;
		struct pid_uid *old = R->owners, *n = calloc(ncap, sizeof(*n));
		if (!n)
			return; /* its map is then accepted from root only */
		size_t ocap = R->cap_owners;
		R->owners = n;
		R->cap_owners = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].pid)
				R->owners[owner_slot(R, old[i].pid)] = old[i];
		free(old);
	}
	size_t h = owner_slot(R, pid);
	if (!R->owners[h].pid)
		R->n_owners++;
	R->owners[h] = (struct pid_uid){ pid, (uint32_t)uid };
}

/* Copies /tmp/perf-PID.map into a pending PERFMAP section (nothing if the
 * file is missing or empty). A file above the limit keeps its first
 * complete lines, with a notice. */
void save_perfmap(struct rec *R, uint32_t pid, uint64_t time)
{
	char path[64], *text;
	size_t len;
	if (!pid)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	/* the owners whose file it may be, besides root */
	uid_t owners[2];
	size_t n_owners = 0;
	if (R->cap_owners) {
		size_t h = owner_slot(R, pid);
		if (R->owners[h].pid)
			owners[n_owners++] = R->owners[h].uid;
	}
	int64_t now = proc_owner(pid);
	if (now >= 0)
		owners[n_owners++] = (uid_t)now;
	struct stat st;
	const char *why;
	int fd = pf_open_untrusted(AT_FDCWD, path, PF_UNTRUSTED_ONE_LINK | PF_UNTRUSTED_TRUNCATE, owners, n_owners,
				   PERFMAP_MAX_BYTES, &st, &why);
	if (fd == -ENOENT)
		return;
	if (fd < 0) {
		if (fd == -EPERM)
			notice("%s: owned by uid %u, not by root or the process's owner%s: not recorded", path,
			       (unsigned)st.st_uid, n_owners ? "" : " (unknown)");
		else
			notice("%s: %s: not recorded", path, why);
		pf_keyset_add(&R->perfmaps, pid);
		return;
	}
	if (!st.st_size) {
		close(fd);
		pf_keyset_add(&R->perfmaps, pid);
		return;
	}
	int rc = pfrec_read_fd(fd, PERFMAP_MAX_BYTES, &text, &len);
	if (rc < 0) {
		notice("%s: %s (its JIT symbols are not recorded)", path, strerror(-rc));
		return;
	}
	if (len >= PERFMAP_MAX_BYTES) {
		while (len && text[len - 1] != '\n')
			len--;
		notice("%s: over %u MiB: only its first %zu bytes are recorded", path, PERFMAP_MAX_BYTES >> 20, len);
	}
	if (len) {
		struct pf_buf *b = pend_new(R, PF_SEC_PERFMAP);
		if (b && pf_maps_encode(b, pid, time, text, len) == 0)
			verbose("%s: %zu bytes of JIT symbols recorded", path, len);
	}
	free(text);
	pf_keyset_add(&R->perfmaps, pid);
}

/* At the stop: the map of every process seen whose map was not copied
 * when it exited (still running, or its exit not recorded). */
void save_perfmaps(struct rec *R, uint64_t time)
{
	for (size_t i = 0; i < R->known.cap; i++) {
		/* a slot holds key + 1 (keyset.h), 0 when empty */
		uint64_t v = R->known.k[i];
		if (v && !pf_keyset_has(&R->perfmaps, v - 1))
			save_perfmap(R, (uint32_t)(v - 1), time);
	}
}
