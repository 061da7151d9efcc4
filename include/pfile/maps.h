/*
 * pfile/maps.h - libpfile: the address -> mapping timeline of a recording.
 *
 * For every process of a recording, the executable mappings in force at every
 * moment: built from the MAPS snapshots (processes alive when recording
 * started), PERF_RECORD_MMAP/MMAP2 (new mappings), PERF_RECORD_FORK (a new
 * process inherits its parent's mappings), PERF_RECORD_COMM with
 * PERF_RECORD_MISC_COMM_EXEC (exec replaces them all) and BUILDID entries.
 * Only the user-space view is kept: kernel addresses are told apart by the
 * callchain context markers or the sample's cpumode, not by a mapping.
 *
 * HowTo
 *    struct pf_maps *m; pf_maps_new(&m);
 *    for every section in file order:
 *        MAPS:    pf_maps_add_proc_maps(m, pid, time, text, len)
 *        BUILDID: pf_maps_note_buildid(m, &entry) for each entry
 *        RECORDS: for every record: pf_maps_record(m, ev, rec)  (samples are ignored)
 *    for a sampled address:
 *        const struct pf_map *mp = pf_maps_find(m, pid, addr, time_ns);
 *        if (mp) { file offset = addr - mp->start + mp->pgoff; dso = pf_maps_dso(m, mp->dso); }
 *    pf_maps_delete(m);
 *
 * Records are applied in file order. Rings of several CPUs are written
 * interleaved, so a mapping may be seen after a sample that uses it, a
 * child's mappings after its FORK, an exec before the mappings that preceded
 * it: the timeline is the same whatever the order in which a set of records
 * and snapshots is applied. A mapping ends where a later one (in time)
 * overlaps it or its process execs; a fork copies the mappings live in the
 * parent at that time, also those applied after the FORK record.
 * A mapping from a MAPS snapshot (read from /proc at some time, without
 * build-ids) never hides one from a record: a lookup prefers, among the
 * mappings live at the sample's time, one from a record, then the latest;
 * with none live, it takes the one that contains the address and starts
 * nearest in time.
 */
#ifndef PFILE_MAPS_H
#define PFILE_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include "pfile.h"
#include "records.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PF_MAPS_NONE UINT32_MAX
#define PF_TIME_INF UINT64_MAX

/* What the path of a DSO names (format/pfile.md 4.5). */
enum pf_dso_kind {
	PF_DSO_FILE = 0,   /* a file at `path` */
	PF_DSO_DELETED,    /* a deleted file ("... (deleted)"): never open `path` */
	PF_DSO_REPLACED,   /* `path` names another file now: never open it */
	PF_DSO_ANON,       /* memory with no file to open: //anon, memfd:, anon_inode:, SysV shm,
	                      anonymous huge pages */
	PF_DSO_PSEUDO,     /* a kernel-provided area: [vdso], [heap], [stack], ... */
};

/* 1 if `path` (`len` bytes, not NUL-terminated) is anonymous memory that
 * perf maps one to one and names /tmp/perf-PID.map (map__new() in
 * tools/perf/util/map.c: "//anon", "/dev/zero...", "/anon_hugepage...",
 * "/SYSV..."): its frames are keyed by address, not file offset (the
 * builder, format/profile.md 3.1), and pfscript prints them as perf script
 * does. 0 otherwise (files, memfd:, pseudo files such as [vdso]). */
int pf_dso_perf_anon(const char *path, size_t len);

/* A mapped file (or pseudo file: "[vdso]", "//anon"), interned by path and
 * build-id: the same path with two build-ids (a binary replaced during the
 * recording) gives two DSOs. */
struct pf_dso {
	char *path;              /* NUL-terminated, owned: as the kernel wrote it */
	uint32_t path_len;       /* bytes, without the NUL */
	uint32_t name_len;       /* bytes of `path` that name the module for
	                            display: without a " (deleted)" suffix */
	uint8_t kind;            /* enum pf_dso_kind */
	uint8_t build_id_size;   /* bytes, 0 = unknown */
	uint8_t build_id[64];
	uint32_t id;             /* index in the table */
	void *user;              /* free for the caller (e.g. the symbolizer's state) */
	/* since 0.1 of issue 29 (appended: the table is libpfile's, never
	 * allocated by a caller) */
	uint8_t proof;           /* how the build-id is vouched for: PF_DSO_PROOF_* */
	uint8_t ino_state;       /* PF_DSO_INO_*: whether dev_maj/dev_min/ino are known */
	uint32_t dev_maj, dev_min; /* device of the file mapped (MMAP2 maj/min, a MAPS line's DEV) */
	uint64_t ino;            /* its inode (MMAP2 ino, a MAPS line's INODE) */
};

/* pf_dso.proof */
#define PF_DSO_PROOF_RECORDED 0 /* recorded with the mapping (MMAP2, BUILDID), or none */
#define PF_DSO_PROOF_INODE    1 /* a BUILDID entry flagged PF_BUILDID_INODE gave it */
/* pf_dso.ino_state */
#define PF_DSO_INO_NONE     0 /* no record gave the file's device and inode */
#define PF_DSO_INO_KNOWN    1 /* every mapping of the DSO gave the same device and inode */
#define PF_DSO_INO_CONFLICT 2 /* mappings of this DSO named different files: no inode proof */

#define PF_MAP_SNAPSHOT 0x1u /* from a MAPS snapshot, not from a record */

/* One mapping of a process. */
struct pf_map {
	uint64_t start, end;     /* virtual addresses, end exclusive */
	uint64_t pgoff;          /* file offset of `start`, bytes */
	uint64_t t_start, t_end; /* ns, perf clock: live in [t_start, t_end) */
	uint32_t dso;            /* pf_dso id */
	uint32_t flags;          /* PF_MAP_* */
};

/* The timeline: opaque (its tables and caches are internal; advanced.h has
 * them, with no ABI promise). */
struct pf_maps;

/* A new, empty timeline. @return 0 and *out set, or -ENOMEM. */
int pf_maps_new(struct pf_maps **out);

/* Frees the timeline (not the `user` pointers of its DSOs); NULL is a no-op. */
void pf_maps_delete(struct pf_maps *m);

/* Interns a DSO by path (`len` bytes) and build-id (`bid_size` bytes, 0 =
 * unknown; then a build-id noted by pf_maps_note_buildid() for that path is
 * used). Both may point into the table (another DSO's path or build-id).
 * @return the DSO id, or -ENOMEM. Pointers from pf_maps_dso() are valid
 * until the next call that interns a DSO (the table may move). */
int64_t pf_maps_dso_intern(struct pf_maps *m, const char *path, size_t len,
			   const uint8_t *bid, size_t bid_size);

/* The DSO with id `id`, or NULL if id >= pf_maps_dso_count(). The DSO is
 * the timeline's (the caller may set its `user` field). */
struct pf_dso *pf_maps_dso(const struct pf_maps *m, uint32_t id);

/* Number of DSOs interned so far: ids 0 .. count-1. */
uint32_t pf_maps_dso_count(const struct pf_maps *m);

/* Remembers a BUILDID entry: later DSOs with this path and no build-id of
 * their own take it, and so do existing ones without one; its flags decide
 * the kind of DSOs with this path (a real file named "x (deleted)", a path
 * that names another file now). The first entry for a path counts.
 * @return 0 or -ENOMEM. */
int pf_maps_note_buildid(struct pf_maps *m, const struct pf_buildid *e);

/* Adds a mapping [start, start+len) of `dso` at file offset `pgoff` to `pid`
 * from `time_ns` on (a record's: PERF_RECORD_MMAP/MMAP2); live mappings it
 * overlaps end at `time_ns`, and it ends where a later one overlaps it or
 * pid execs. Forked children live then inherit it. @return 0 or -ENOMEM. */
int pf_maps_mmap(struct pf_maps *m, uint32_t pid, uint64_t start, uint64_t len,
		 uint64_t pgoff, uint32_t dso, uint64_t time_ns);

/* A new process `pid` forked from `ppid` at `time_ns`: it gets a copy of the
 * parent's mappings live then, including those applied later. Threads
 * (pid == ppid) share the mappings. @return 0 or -ENOMEM. */
int pf_maps_fork(struct pf_maps *m, uint32_t pid, uint32_t ppid, uint64_t time_ns);

/* `pid` called exec at `time_ns`: all its mappings live then end then,
 * including those applied later. @return 0 or -ENOMEM. */
int pf_maps_exec(struct pf_maps *m, uint32_t pid, uint64_t time_ns);

/* One line of /proc/PID/maps (proc(5)): "START-END PERMS OFFSET DEV INODE
 * PATH", numbers in hex but INODE in decimal. */
struct pf_proc_map {
	uint64_t start, end;      /* virtual addresses, end exclusive */
	uint64_t pgoff;           /* file offset of `start`, bytes */
	uint64_t inode;           /* 0 when absent or not a number */
	char perms[5];            /* "r-xp", NUL-terminated */
	const char *path;         /* into the text, not NUL-terminated; "" for
				     anonymous memory (path_len 0) */
	size_t path_len;
};

/* Parses the next line of a /proc/PID/maps text (`len` bytes from `text`,
 * from byte *pos, which starts at 0 and is moved past the line's newline).
 * START, END and OFFSET are at most 16 hex digits; PERMS 4 characters.
 * @return 1 with *m filled, 0 at the end of the text, -1 for a line that
 * does not parse (skipped: call again). The one parser of this text in
 * pftools: pfrec reads /proc with it, readers the MAPS sections. */
int pf_proc_maps_next(const char *text, size_t len, size_t *pos, struct pf_proc_map *m);

/* Text remapped over itself: whether `pm`, a line of the maps text
 * (`len` bytes from `text`) that is executable anonymous memory (no path,
 * no inode), fills exactly the hole between `prev` (the line before it, or
 * NULL) and the line at byte `pos` (the one after it), two mappings of one
 * file (path and inode) whose offsets are those of one contiguous image: a
 * program that copied its text to anonymous memory (huge pages) and moved
 * it back over the file's mapping leaves that. @return 1 with pm's path,
 * inode and pgoff set to the file's (the hole's offset in it), else 0 (pm
 * unchanged). */
int pf_proc_map_remapped(struct pf_proc_map *pm, const struct pf_proc_map *prev, const char *text, size_t len,
			 size_t pos);

/* Executable anonymous memory next to a file that pf_proc_map_remapped()
 * cannot place exactly (only one side adjoins the file, or the offsets do
 * not line up): likely code copied from that file (text moved to huge pages
 * in part). Labels it "[anon:NAME]", NAME the base name of the file mapped
 * right before it (else right after it), written to buf (size bytes, NUL
 * included); pm's path points there and its pgoff is 0.
 * @return 1 labelled, 0 not (pm unchanged: not anonymous, not executable,
 * no file adjoins it, or buf too small). */
int pf_proc_map_anon_label(struct pf_proc_map *pm, const struct pf_proc_map *prev, const char *text, size_t len,
			   size_t pos, char *buf, size_t size);

/* Parses the text of /proc/PID/maps (`len` bytes) and adds its executable
 * file-backed and pseudo mappings ("[vdso]") to `pid` from `time_ns`, as
 * well as text remapped over itself (an executable anonymous mapping that
 * exactly fills the hole between two mappings of one file with contiguous
 * offsets: that file's text, at the hole's offset in it), as
 * snapshot mappings (PF_MAP_SNAPSHOT): they supersede earlier snapshot
 * mappings they overlap, never record ones. Lines that do not parse are
 * skipped. @return the number of mappings added, or -ENOMEM. */
int pf_maps_add_proc_maps(struct pf_maps *m, uint32_t pid, uint64_t time_ns,
			  const char *text, size_t len);

/* Applies one host-order record: MMAP, MMAP2 (executable ones; build-id when
 * the record carries it), FORK (new processes only), COMM with
 * PERF_RECORD_MISC_COMM_EXEC. Other records, kernel mappings (pid -1) and
 * records too short for their type are ignored. `ev` describes the record's
 * sample_id trailer (for its time); it may be NULL (time 0).
 * @return 0 or -ENOMEM. */
int pf_maps_record(struct pf_maps *m, const struct pf_event *ev, const struct perf_event_header *rec);

/* The mapping of `pid` that holds `addr` at `time_ns` (see the file comment
 * for the out-of-order rule), or NULL. The pointer is valid until the next
 * call that adds mappings. */
const struct pf_map *pf_maps_find(const struct pf_maps *m, uint32_t pid, uint64_t addr, uint64_t time_ns);

/* As pf_maps_find(); *live (may be NULL) is set to 1 when the mapping returned
 * is live at time_ns, 0 when it is the out-of-order nearest one or none. */
const struct pf_map *pf_maps_find_live(const struct pf_maps *m, uint32_t pid, uint64_t addr,
				       uint64_t time_ns, int *live);

/* A 64-bit key of the state of pid's timeline at time_ns: the generation of
 * its mappings (it changes with every mmap, fork and exec applied to pid)
 * and the interval between two changes of its live set that holds time_ns.
 * Two lookups of pid with equal keys give the same answer for every address
 * that a live mapping holds (pf_maps_find_live() says *live = 1) and for
 * every address that no mapping holds; a cache of resolved addresses per
 * (pid, key) is therefore exact for them. 0 when pid has no mappings.
 * Builds a small per-process index on first use after a change (-ENOMEM is
 * reported as key UINT64_MAX: do not cache). */
uint64_t pf_maps_time_key(struct pf_maps *m, uint32_t pid, uint64_t time_ns);

#ifdef __cplusplus
}
#endif
#endif /* PFILE_MAPS_H */
