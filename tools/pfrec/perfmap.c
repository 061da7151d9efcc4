/*
 * tools/pfrec/perfmap.c - JIT symbol maps: a recorded process's
 * /tmp/perf-PID.map (the perf map convention: "START SIZE name" lines that
 * JIT compilers and interpreters such as `python3.12 -X perf` append to
 * while they run) copied into a PERFMAP section (format/pfile.md 4.12),
 * when the process exits and when the recording stops.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "rec.h"
#include "../pfrec.h"

/* Room left for the text in a 64 MiB payload after its 16-byte header. */
#define PERFMAP_MAX_BYTES ((64u << 20) - 4096u)

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
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	int rc = pfrec_read_file(path, PERFMAP_MAX_BYTES, &text, &len);
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
