/*
 * sideband.c - what pfrec writes beside the samples (MAPS snapshots, BUILDID,
 * the vDSO image, pending until their mappings are seen) and the rings
 * drained into RECORDS.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "grow.h"
#include "pfrec/rec.h"
#include "untrusted.h"

/* ------------------------------------------------------------------ */
/* pending side-band sections: MAPS, BUILDID, DSO_IMAGE                  */

static void pend_mark(struct rec *R)
{
	if (!R->pend_since)
		R->pend_since = pfrec_now_ns(CLOCK_MONOTONIC);
}

struct pf_buf *pend_new(struct rec *R, uint16_t type)
{
	if (pft_grow((void **)&R->pend, &R->cappend, (size_t)R->npend + 1, sizeof(*R->pend), 16) < 0)
		return NULL;
	struct pending *p = &R->pend[R->npend++];
	memset(p, 0, sizeof(*p));
	p->type = type;
	pend_mark(R);
	return &p->b;
}

/* BUILDID first: a reader then knows the build-id of every file a MAPS
 * section that follows names when it reads that section. */
void flush_pending(struct rec *R)
{
	if (R->pend_bid.len) {
		put_section(R, PF_SEC_BUILDID, &R->pend_bid);
		R->pend_bid.len = 0;
	}
	for (int i = 0; i < R->npend; i++) {
		put_section(R, R->pend[i].type, &R->pend[i].b);
		pf_buf_free(&R->pend[i].b);
	}
	R->npend = 0;
	R->pend_since = 0;
}

/* Where a mapping lies and which inode it maps, when known (a maps line,
 * or an MMAP2 record without a build-id). */
struct mapref {
	uint64_t start, end;  /* 0, 0: unknown */
	uint64_t ino;
	int have_ino;
};

static int path_has_prefix(const char *p, size_t len, const char *pre)
{
	size_t n = strlen(pre);
	return len >= n && memcmp(p, pre, n) == 0;
}

/* Opens the file a process mapped by its recorded path `p` (absolute), as
 * seen from `root` ("/", or "/proc/PID/root" for another mount namespace),
 * once its mapping (and the map_files link to it) may be gone. With
 * `have_ino` the caller compares the inode opened with the one mapped, and
 * reads nothing from another file. Without it (an MMAP2 record with the
 * kernel's build-id holds no inode) and as root, the name is one another
 * user may have changed since the mapping: tools/common/untrusted.h's rule,
 * so that no link planted there makes pfrec record the size and time of
 * someone else's file: no symbolic link in any component, a regular file of
 * one name, owned by root or the process's owner. @return the descriptor,
 * or -1. */
static int open_mapped(const struct rec *R, uint32_t pid, const char *root, const char *p, int have_ino)
{
	if (have_ino || geteuid() != 0) {
		char full[PATH_MAX + 32];
		snprintf(full, sizeof(full), "%s%s", strcmp(root, "/") ? root : "", p);
		return open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	}
	int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	uid_t owners[1];
	size_t n_owners = 0;
	int64_t uid = process_owner(R, pid);
	if (uid >= 0)
		owners[n_owners++] = (uid_t)uid;
	struct stat st;
	const char *why;
	int fd = pf_open_untrusted(dfd, p + 1, PF_UNTRUSTED_NO_LINKS | PF_UNTRUSTED_ONE_LINK, owners, n_owners, 0,
				   &st, &why);
	close(dfd);
	return fd < 0 ? -1 : fd;
}

/* A mapped file: one BUILDID entry per file, the first time it is seen. The
 * build-id is that of the file mapped, never of what the path names now
 * (format/pfile.md 4.5): the kernel's (MMAP2), else read through
 * /proc/PID/map_files/START-END (the mapping itself; root), else through the
 * path when its inode is the one mapped, else by open_mapped()'s rule. A deleted
 * file's path is never opened; a path that names another file now is marked
 * REPLACED. */
static void see_path(struct rec *R, uint32_t pid, const char *path, size_t len, const uint8_t *kbid,
		     unsigned kbid_size, const struct mapref *mr)
{
	if (!len || path[0] != '/' || len >= PATH_MAX)
		return;
	/* memory without a file to read */
	if (path_has_prefix(path, len, "//anon") || path_has_prefix(path, len, "/memfd:") ||
	    path_has_prefix(path, len, "/SYSV") || path_has_prefix(path, len, "/anon_hugepage") ||
	    path_has_prefix(path, len, "/dev/"))
		return;
	/* one entry per file: per path, and per inode where known (by a
	 * 64-bit hash, as pfdump's build-id set: keyset.h keeps uint64_t) */
	char key[PATH_MAX + 48];
	int kl = snprintf(key, sizeof(key), "%.*s", (int)len, path);
	if (mr && mr->have_ino)
		kl += snprintf(key + kl, sizeof(key) - (size_t)kl, "\n%llu", (unsigned long long)mr->ino);
	if (pf_keyset_add(&R->seen_paths, pf_xxh3(key, (size_t)kl) >> 1) != 1)
		return;
	char p[PATH_MAX];
	memcpy(p, path, len);
	p[len] = 0;
	struct pf_buildid e;
	memset(&e, 0, sizeof(e));
	struct stat st;
	int fd = -1;
	if (mr && pid && mr->end > mr->start) {
		char mf[96];
		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)mr->start,
			 (unsigned long long)mr->end);
		fd = open(mf, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	}
	if (len > 10 && memcmp(p + len - 10, " (deleted)", 10) == 0) {
		/* the kernel's mark of a deleted file, or a real file so named:
		 * stat (not open) the name, and compare the inode */
		struct stat ls;
		int real = stat(p, &ls) == 0 && S_ISREG(ls.st_mode) && (!mr || !mr->have_ino || ls.st_ino == mr->ino);
		if (real && fd < 0 && kbid && kbid_size) {
			int lfd = open_mapped(R, pid, "/", p, 0);
			uint8_t fb[64];
			int n = lfd >= 0 ? pf_build_id_fd(lfd, fb) : -1;
			real = n == (int)kbid_size && memcmp(fb, kbid, kbid_size) == 0;
			if (real)
				fd = lfd;
			else if (lfd >= 0)
				close(lfd);
		}
		if (!real)
			e.flags |= PF_BUILDID_DELETED;
		if (!real && fd < 0 && !(kbid && kbid_size))
			return; /* nothing true to say about it */
	} else if (fd < 0) {
		int have_ino = mr && mr->have_ino;
		fd = open_mapped(R, pid, "/", p, have_ino);
		if (fd < 0 && pid) {
			/* another mount namespace: look through the process's root */
			char alt[32];
			snprintf(alt, sizeof(alt), "/proc/%u/root", pid);
			fd = open_mapped(R, pid, alt, p, have_ino);
		}
		if (fd >= 0 && mr && mr->have_ino && fstat(fd, &st) == 0 && st.st_ino != mr->ino) {
			/* the path names another file now (replaced on disk) */
			close(fd);
			fd = -1;
			e.flags |= PF_BUILDID_REPLACED;
		}
		if (fd < 0 && !(e.flags & PF_BUILDID_REPLACED))
			return; /* unreachable: nothing true to say about it */
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return;
	}
	if (kbid && kbid_size && kbid_size <= sizeof(e.build_id)) {
		memcpy(e.build_id, kbid, kbid_size);
		e.build_id_size = (uint8_t)kbid_size;
	} else if (fd >= 0) {
		int n = pf_build_id_fd(fd, e.build_id);
		e.build_id_size = n > 0 ? (uint8_t)n : 0;
	}
	if (fd >= 0) {
		e.file_size = (uint64_t)st.st_size;
		e.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
		close(fd);
	}
	e.path = path;
	e.path_len = len;
	if (pf_buildid_encode(&R->pend_bid, &e) == 0)
		pend_mark(R);
}

/* The vDSO is the same image in every 64-bit process of this kernel: save
 * ours once, with the address where `pid` maps it. */
void save_vdso(struct rec *R, uint32_t pid, uint64_t addr)
{
	if (R->vdso_done)
		return;
	R->vdso_done = 1;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return;
	char *maps;
	size_t len;
	if (pfrec_read_file("/proc/self/maps", 1 << 20, &maps, &len) < 0)
		return;
	uint64_t size = 0;
	struct pf_proc_map pm;
	size_t pos = 0;
	int rc;
	while ((rc = pf_proc_maps_next(maps, len, &pos, &pm)) != 0) {
		if (rc > 0 && pm.start == base && pm.end > pm.start) {
			size = pm.end - pm.start;
			break;
		}
	}
	free(maps);
	if (!size || size > (64u << 20))
		return;
	struct pf_dso_image d;
	memset(&d, 0, sizeof(d));
	d.pid = pid;
	d.addr = addr;
	int n = pf_build_id_mem((const void *)base, (size_t)size, d.build_id);
	d.build_id_size = n > 0 ? (uint8_t)n : 0;
	d.path = "[vdso]";
	d.path_len = 6;
	d.image = (const uint8_t *)base;
	d.image_size = (size_t)size;
	struct pf_buf *b = pend_new(R, PF_SEC_DSO_IMAGE);
	if (b)
		pf_dso_image_encode(b, &d);
	verbose("saved the [vdso] image (%llu bytes, build-id of %d bytes)", (unsigned long long)size, n);
}

/* Parses a maps text for executable file mappings and the vDSO. */
static void scan_maps_text(struct rec *R, uint32_t pid, const char *text, size_t len)
{
	struct pf_proc_map pm, prev;
	memset(&prev, 0, sizeof(prev));
	size_t pos = 0;
	int rc, have_prev = 0;
	while ((rc = pf_proc_maps_next(text, len, &pos, &pm)) != 0) {
		if (rc < 0)
			continue;
		/* text remapped over itself is the file's (pfsym names it so) */
		struct pf_proc_map line = pm;
		if (pm.perms[2] == 'x')
			pf_proc_map_remapped(&pm, have_prev ? &prev : NULL, text, len, pos);
		prev = line;
		have_prev = 1;
		struct mapref mr = { pm.start, pm.end, pm.inode, 1 };
		if (pm.path_len == 6 && memcmp(pm.path, "[vdso]", 6) == 0)
			save_vdso(R, pid, pm.start);
		else if (pm.perms[2] == 'x' && pm.path_len && *pm.path == '/')
			see_path(R, pid, pm.path, pm.path_len, NULL, 0, &mr);
	}
}

/* Reads /proc/PID/maps now into a pending MAPS section. @return 0 or -errno. */
int snapshot_maps(struct rec *R, uint32_t pid, uint64_t time)
{
	char path[64], *text;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	int rc = pfrec_read_file(path, MAPS_MAX_BYTES, &text, &len);
	if (rc < 0)
		return rc;
	if (len == 0) { /* a kernel thread has no mappings */
		free(text);
		return 0;
	}
	struct pf_buf *b = pend_new(R, PF_SEC_MAPS);
	if (b)
		pf_maps_encode(b, pid, time, text, len);
	scan_maps_text(R, pid, text, len);
	free(text);
	return 0;
}

uint64_t perf_now(struct rec *R, uint64_t rec_time)
{
	if (R->clock_id >= 0)
		return pfrec_now_ns(R->clock_id);
	return rec_time;
}

static void new_process(struct rec *R, uint32_t pid, uint64_t time)
{
	if (!pid || pf_keyset_add(&R->known, pid) != 1)
		return;
	note_owner(R, pid);
	snapshot_maps(R, pid, perf_now(R, time));
}

/* ------------------------------------------------------------------ */
/* records                                                              */

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void note_record(struct rec *R, const uint8_t *rec)
{
	struct perf_event_header h;
	memcpy(&h, rec, sizeof(h));
	size_t size = h.size;
	uint64_t t = 0;
	R->records++;
	if (h.type < PF_RECORD_TYPES)
		R->by_type[h.type]++;
	if (h.type == PERF_RECORD_SAMPLE) {
		R->samples++;
		if (size >= SAMPLE_TIME_OFFSET + 8)
			t = ld64(rec + SAMPLE_TIME_OFFSET);
	} else if (size >= 8 + ID_TRAILER_BYTES) {
		t = ld64(rec + size - ID_TRAILER_TIME_FROM_END);
	}
	if (t) {
		if (!R->first_time || t < R->first_time)
			R->first_time = t;
		if (t > R->last_time)
			R->last_time = t;
	}
	/* the decoders need the sample_id trailer's size: attr[0]'s (the same
	 * ID_TRAILER_BYTES for every event); records are 8-byte aligned in the
	 * ring and in R->tmp */
	if (!R->id_ev.attr.sample_id_all)
		R->id_ev.attr = R->pa[0].attr;
	const struct pf_event *ev = &R->id_ev;
	const struct perf_event_header *hp = (const struct perf_event_header *)(const void *)rec;
	switch (h.type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct pf_lost l;
		if (pf_lost_decode(ev, hp, &l) == 0)
			R->lost += l.lost;
		break;
	}
	case PERF_RECORD_THROTTLE:
		R->throttles++;
		break;
	case PERF_RECORD_READ: {
		struct pfrec_count_ids ids = {R->ids, R->nids, R->o.nev, R->pa};
		if (R->o.per_thread && pfrec_threads_read_record(&R->threads, rec, size, ID_TRAILER_BYTES, &ids) < 0)
			verbose("a thread's count (PERF_RECORD_READ of %zu bytes) was not understood", size);
		break;
	}
	case PERF_RECORD_FORK: {
		struct pf_task k;
		if (pf_task_decode(ev, hp, &k) == 0 && k.pid != k.ppid)
			new_process(R, k.pid, t);
		break;
	}
	case PERF_RECORD_EXIT: {
		struct pf_task k;
		if (pf_task_decode(ev, hp, &k) < 0)
			break;
		if (R->o.per_thread && pfrec_threads_exit(&R->threads, k.pid, k.tid) < 0)
			verbose("out of memory: thread %u's exit is not counted", (unsigned)k.tid);
		/* the process is gone, its JIT map is complete (and its pid may
		 * be used again before the recording stops) */
		if (k.pid == k.tid)
			save_perfmap(R, k.pid, t);
		break;
	}
	case PERF_RECORD_COMM: {
		struct pf_comm c;
		if (pf_comm_decode(ev, hp, &c) == 0) {
			/* an exec may change the owner (setuid, setpriv):
			 * the latest is the one that writes the map */
			if ((h.misc & PERF_RECORD_MISC_COMM_EXEC) && pf_keyset_has(&R->known, c.pid))
				note_owner(R, c.pid);
			new_process(R, c.pid, t);
		}
		break;
	}
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_MMAP: {
		struct pf_mmap m;
		if (pf_mmap_decode(ev, hp, &m) < 0)
			break;
		/* a build-id size the kernel never writes: read the file's own */
		unsigned bsz = m.has_build_id && m.build_id_size <= 20 ? m.build_id_size : 0;
		if (m.mmap2 && m.filename_len == 6 && memcmp(m.filename, "[vdso]", 6) == 0)
			save_vdso(R, m.pid, m.addr);
		else {
			/* without the kernel's build-id: the inode it gives */
			struct mapref mr = { m.addr, m.addr + m.len, m.ino, m.mmap2 && !m.has_build_id };
			see_path(R, m.pid, m.filename, m.filename_len, bsz ? m.build_id : NULL, bsz, &mr);
		}
		break;
	}
	default:
		break;
	}
}

/* --call-graph dwarf: the kernel copies only dyn_size bytes of the user
 * stack and leaves the rest of the STACK_USER field as stale ring-buffer
 * bytes (undefined, perf_event_open(2)); zero them so that they compress
 * (in a copy: the ring's data pages cannot be written, SIGBUS). The sample
 * is read by its event's plan (records.h), whatever fields precede the
 * stack (READ with --repeat, RAW of a tracepoint). */
static void scrub_stack(const struct rec *R, uint8_t *rec, size_t size)
{
	if (!R->o.dwarf || size < 16)
		return;
	struct perf_event_header h;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE)
		return;
	/* the event: by the IDENTIFIER every event of ours samples first */
	int ev = 0;
	if (R->o.nev > 1) {
		uint64_t id = ld64(rec + 8);
		ev = -1;
		for (int e = 0; e < R->o.nev && ev < 0; e++)
			for (uint32_t i = 0; i < R->nids[e]; i++)
				if (R->ids[e][i] == id) {
					ev = e;
					break;
				}
		if (ev < 0)
			return;
	}
	struct pf_sample_plan plan;
	pf_sample_plan_compile(&plan, &R->pa[ev].attr);
	struct pf_sample s;
	if (pf_sample_plan_decode(&plan, (const struct perf_event_header *)(const void *)rec, &s) < 0 ||
	    !s.user_stack_size || s.user_stack_dyn_size >= s.user_stack_size)
		return;
	uint8_t *stack = rec + (s.user_stack - rec);
	memset(stack + s.user_stack_dyn_size, 0, s.user_stack_size - s.user_stack_dyn_size);
}

/* Copies everything between data_tail and data_head into the file. */
static void drain_ring(struct rec *R, struct pfrec_ring *rg)
{
	if (!rg->base)
		return;
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)rg->base;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	uint64_t mask = rg->data_bytes - 1;
	const uint8_t *run = NULL;
	size_t run_len = 0;
	while (tail < head) {
		uint64_t off = tail & mask;
		struct perf_event_header h;
		memcpy(&h, rg->data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail || (h.size & 7)) {
			R->ring_errors++;
			tail = head;
			break;
		}
		const uint8_t *rec = rg->data + off;
		if (off + h.size <= rg->data_bytes && !(R->o.dwarf && h.type == PERF_RECORD_SAMPLE)) {
			if (run && run + run_len == rec) {
				run_len += h.size;
			} else {
				put_records(R, run, run_len);
				run = rec;
				run_len = h.size;
			}
		} else {
			put_records(R, run, run_len);
			run = NULL;
			run_len = 0;
			size_t first = (size_t)(rg->data_bytes - off);
			if (first > h.size)
				first = h.size;
			memcpy(R->tmp, rec, first);
			memcpy(R->tmp + first, rg->data, h.size - first);
			scrub_stack(R, R->tmp, h.size);
			rec = R->tmp;
			put_records(R, rec, h.size);
		}
		note_record(R, rec);
		tail += h.size;
	}
	put_records(R, run, run_len);
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

void drain_all(struct rec *R)
{
	for (int i = 0; i < R->ncpus; i++)
		drain_ring(R, &R->rings[i]);
}
