/*
 * pfrec/ksyms.c - the KSYMS section (format/pfile.md 4.11): the kernel's
 * text symbols from /proc/kallsyms, each module's load address and size
 * (/proc/modules) and build-id (/sys/module/NAME/notes), and the kernel's
 * build-id (/sys/kernel/notes), so that pfsym names kernel frames offline.
 */
#include "pfrec/rec.h"
#include "ksyms.h"
#include "ksnap.h"
#include "proof.h"
#include <zstd.h>

/* The snapshot is read before the recording starts: before the command
 * is released from its exec, or the events of -p and -a are enabled. The
 * kernel takes about 0.3 s of system time to list /proc/kallsyms (122,000
 * lines here). It was read by a thread of the lowest priority while the
 * command ran, and on a loaded machine that thread came after seconds of
 * records, or never (pfsym then named no kernel address). Now nothing of
 * the workload competes with it and KSYMS precedes every RECORDS section;
 * a thread still reads it, beside the rest of the setup (ksyms_start() as
 * soon as the events are known, ksyms_finish() before the META section). */
struct ksyms_job {
	pthread_t th;
	int started;
	struct pf_buf payload; /* the KSYMS payload; empty: none to write */
	char warn[512];      /* a warning to print (from the main thread) */
	int warn_is_notice;
	char verb[160];
	int zlevel;          /* the writer's zstd level (0: stored as is) */
	void *zbuf;          /* the payload compressed here, or NULL */
	size_t zlen;
};

static void *ksyms_main(void *arg)
{
	struct ksyms_job *j = arg;
	struct pf_ksyms k = { 0 };
	char err[256];
	int rc = pf_ksnap_read(&k, 0, err, sizeof(err));
	if (rc == -EBADMSG) {
		snprintf(j->warn, sizeof(j->warn), "warning: /proc/kallsyms: %s: kernel symbols not stored", err);
		goto out;
	}
	if (rc < 0) {
		snprintf(j->warn, sizeof(j->warn), "/proc/kallsyms: %s: kernel frames will show as [kernel] "
			 "(pfsym --kallsyms FILE names them)", strerror(-rc));
		j->warn_is_notice = 1;
		goto out;
	}
	if (k.hidden || !k.n_syms) {
		snprintf(j->warn, sizeof(j->warn),
			 "warning: /proc/kallsyms shows every address as 0 (kernel.kptr_restrict or "
			 "kernel.perf_event_paranoid hides them from this user): kernel symbols not stored, kernel "
			 "frames will show as [kernel]");
		goto out;
	}
	if (pf_ksyms_encode(&k, &j->payload) < 0) {
		pf_buf_free(&j->payload);
		snprintf(j->warn, sizeof(j->warn), "warning: kernel symbols not stored: out of memory");
	} else {
		snprintf(j->verb, sizeof(j->verb), "KSYMS: %u text symbols, %u modules, %zu bytes before compression",
			 k.n_syms, k.n_mods, j->payload.len);
		/* compressed here, not in the main loop: 3.5 MB at level 6 took
		 * long enough there for --call-graph dwarf rings to overflow
		 * when the section followed the first records */
		if (j->zlevel > 0) {
			size_t cap = ZSTD_compressBound(j->payload.len);
			j->zbuf = malloc(cap);
			size_t r = j->zbuf ? ZSTD_compress(j->zbuf, cap, j->payload.data, j->payload.len, j->zlevel) : 0;
			if (!j->zbuf || ZSTD_isError(r) || r >= j->payload.len) {
				free(j->zbuf);
				j->zbuf = NULL;
			} else {
				j->zlen = r;
			}
		}
	}
out:
	pf_ksyms_free(&k);
	return NULL;
}

/* The runtime address of `_text` in /proc/kallsyms, read only up to that
 * line (the first few hundred: after the per-CPU symbols), 0 when hidden. */
static uint64_t kallsyms_text_addr(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	char line[640];
	uint64_t addr = 0;
	for (int n = 0; n < 100000 && fgets(line, sizeof(line), f); n++) {
		char *end;
		unsigned long long a = strtoull(line, &end, 16);
		if (end != line && strncmp(end, " T _text\n", 9) == 0) {
			addr = a;
			break;
		}
	}
	fclose(f);
	return addr;
}

int ksyms_meta(struct rec *R, struct pf_buf *b)
{
	int kernel = 0;
	for (int e = 0; e < R->o.nev; e++)
		kernel |= !R->pa[e].attr.exclude_kernel;
	if (!kernel || R->o.count_only)
		return 0;
	uint8_t bid[64];
	size_t n = pf_proof_note_build_id("/sys/kernel/notes", bid);
	int rc = 0;
	if (n) {
		char hex[129];
		for (size_t i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", bid[i]);
		rc |= pf_kv_add(b, "kernel_build_id", hex);
	}
	uint64_t t = kallsyms_text_addr();
	if (t)
		rc |= pf_kv_add_u64(b, "kernel_text", t);
	return rc ? -ENOMEM : 0;
}

int ksyms_wanted(const struct rec *R)
{
	if (R->o.no_kallsyms || R->o.count_only)
		return 0;
	int kernel = 0;
	for (int e = 0; e < R->o.nev; e++)
		kernel |= !R->pa[e].attr.exclude_kernel;
	return kernel; /* else no kernel frames to name */
}

void ksyms_start(struct rec *R)
{
	if (!ksyms_wanted(R))
		return;
	struct ksyms_job *j = calloc(1, sizeof(*j));
	if (!j)
		return;
	j->zlevel = R->o.zlevel_given ? R->o.zlevel : DEFAULT_ZSTD_LEVEL;
	if (pthread_create(&j->th, NULL, ksyms_main, j) == 0)
		j->started = 1;
	else
		ksyms_main(j); /* no thread: read it now */
	R->ksyms = j;
}

int ksyms_finish(struct rec *R)
{
	struct ksyms_job *j = R->ksyms;
	if (!j)
		return 0;
	if (j->started) {
		pthread_join(j->th, NULL);
		j->started = 0;
	}
	if (j->warn[0]) {
		if (j->warn_is_notice)
			notice("%s", j->warn);
		else
			errmsg("%s", j->warn);
		j->warn[0] = 0;
	}
	if (j->verb[0])
		verbose("%s", j->verb);
	j->verb[0] = 0;
	if (j->payload.len)
		return 1;
	free(j);
	R->ksyms = NULL;
	return 0;
}

void ksyms_write(struct rec *R)
{
	struct ksyms_job *j = R->ksyms;
	if (!j)
		return;
	if (j->started) /* ksyms_finish() not called: an early exit */
		pthread_join(j->th, NULL);
	if (j->zbuf) {
		struct pf_section sec;
		memset(&sec, 0, sizeof(sec));
		sec.type = PF_SEC_KSYMS;
		sec.compression = PF_COMP_ZSTD;
		sec.raw_size = (uint32_t)j->payload.len;
		sec.stored_size = (uint32_t)j->zlen;
		sec.size = j->payload.len;
		put_section_stored(R, &sec, j->zbuf);
	} else if (j->payload.len) {
		put_section(R, PF_SEC_KSYMS, &j->payload);
	}
	free(j->zbuf);
	pf_buf_free(&j->payload);
	free(j);
	R->ksyms = NULL;
}
