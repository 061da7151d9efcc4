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

/* Records held for the KSYMS section beyond this wait for it (memory bound:
 * ~2 s of --call-graph dwarf at 4 kHz on 4 CPUs) */
#define KSYMS_HOLD_MAX (256u << 20)

/* The snapshot is read by a thread: the kernel takes about 0.3 s of system
 * time to list /proc/kallsyms (122,000 lines here), which the command's
 * start must not wait for. Records that come before it is ready are held
 * in memory (put_records), so that the KSYMS section precedes every
 * RECORDS section, but only until the first flush is due (flush_due(): at
 * most --flush-interval of records is only in memory); on a machine so
 * loaded that the thread is not done by then, KSYMS follows some records. */
struct ksyms_job {
	pthread_t th;
	int started;
	int done;            /* atomic: the thread has finished */
	pid_t tid;           /* atomic: the thread's id (0 until it runs) */
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
	/* the lowest priority (this thread alone): the recorded command runs
	 * first where the CPUs are busy */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	__atomic_store_n(&j->tid, gettid(), __ATOMIC_RELEASE);
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
		 * long enough there for --call-graph dwarf rings to overflow */
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
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
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

void save_ksyms(struct rec *R)
{
	if (!ksyms_wanted(R))
		return;
	struct ksyms_job *j = calloc(1, sizeof(*j));
	if (!j)
		return;
	j->zlevel = R->o.zlevel_given ? R->o.zlevel : DEFAULT_ZSTD_LEVEL;
	if (pthread_create(&j->th, NULL, ksyms_main, j) != 0) {
		ksyms_main(j); /* no thread: read it now */
	} else {
		j->started = 1;
	}
	R->ksyms = j;
	/* --call-graph dwarf writes megabytes a second: records held for half
	 * a second come out as one burst whose compression stalls the rings
	 * (samples lost at the start). They are written as they come, and
	 * KSYMS follows them as soon as it is read (a reader keeps them until
	 * then: format/pfile.md 4.11) */
	if (R->o.dwarf)
		R->ksyms_late = 1;
}

/* Writes the KSYMS section and the records held for it, once the thread is
 * done (wait: wait for it). @return 1 while it is still pending. */
int ksyms_flush(struct rec *R, int wait)
{
	struct ksyms_job *j = R->ksyms;
	if (!j)
		return 0;
	if (!wait && !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE) && R->held.len < KSYMS_HOLD_MAX)
		return 1;
	if (j->started) {
		/* waited for now (the recording ends): its priority back to
		 * pfrec's where allowed (raising it needs CAP_SYS_NICE) */
		pid_t t = __atomic_load_n(&j->tid, __ATOMIC_ACQUIRE);
		if (t && !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
			(void)setpriority(PRIO_PROCESS, (id_t)t, getpriority(PRIO_PROCESS, 0));
		pthread_join(j->th, NULL);
	}
	R->ksyms = NULL;
	if (j->warn[0]) {
		if (j->warn_is_notice)
			notice("%s", j->warn);
		else
			errmsg("%s", j->warn);
	}
	if (j->verb[0])
		verbose("%s", j->verb);
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
	if (R->held.len) {
		put_records(R, R->held.data, R->held.len);
		pf_buf_free(&R->held);
	}
	return 0;
}
