/*
 * libpfsym/ahead.c - the read-ahead thread of pf_sym_rewrite() (rewrite.c)
 * and the large payload buffers it rotates with the builder.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/pfsym.h"

/* A buffer for RECORDS payloads (pfrec writes 1 MiB sections): 2 MiB
 * aligned and advised as a transparent huge page where the kernel offers
 * them, so that filling it costs one page fault instead of 512. malloc'd
 * memory as far as free() and realloc() are concerned. NULL if none. */
uint8_t *pfsi_payload_buf(size_t *cap)
{
	const size_t sz = 2u << 20;
	uint8_t *p = aligned_alloc(sz, sz);
	*cap = p ? sz : 0;
	if (p)
		(void)madvise(p, sz, MADV_HUGEPAGE);
	return p;
}

/* ---- buffers for large sections ------------------------------------------ */

/* A recording with stack copies (--call-graph dwarf) has RECORDS sections
 * of up to 8 MiB (pfrec's size for them), and three payload buffers rotate
 * between the reader, the slot and the builder. Each one's first fill
 * costs the kernel's zeroing of its pages, measured here at about 3 ms per
 * 8 MiB, and in the read-ahead thread, which is then the slower one. The
 * main thread waits for that thread during the first sections, so it
 * prepares (allocates and faults in) two spare buffers while it waits, and
 * puts them into the rotation in place of the small or empty ones. */

/* One step of preparing the next spare. @return 1 if there is more to do. */
int pfsi_spare_step(struct spares *sp)
{
	if (!sp->want || sp->given >= 2 || (sp->p && sp->done >= sp->want))
		return 0;
	if (!sp->p) {
		sp->p = aligned_alloc(SPARE_STEP, sp->want);
		if (!sp->p) {
			sp->want = 0;
			return 0;
		}
		(void)madvise(sp->p, sp->want, MADV_HUGEPAGE);
		sp->done = 0;
	}
	size_t n = sp->want - sp->done < SPARE_STEP ? sp->want - sp->done : SPARE_STEP;
#ifdef MADV_POPULATE_WRITE
	if (madvise(sp->p + sp->done, n, MADV_POPULATE_WRITE) != 0)
#endif
		for (size_t i = 0; i < n; i += 4096)
			sp->p[sp->done + i] = 0;
	sp->done += n;
	return sp->done < sp->want;
}

/* Puts a ready spare in place of *buf if that one is smaller. */
void pfsi_spare_give(struct spares *sp, uint8_t **buf, size_t *cap)
{
	if (!sp->p || sp->done < sp->want || (*buf && *cap >= sp->want))
		return;
	free(*buf);
	*buf = sp->p;
	*cap = sp->want;
	sp->p = NULL;
	sp->given++;
}

/* ---- read-ahead -------------------------------------------------------- */

/* A thread runs pf_reader_next() (read, checksum, zstd, transform 1) for the
 * next sections while the main thread turns the previous ones into samples.
 * Each result goes into a slot with what the main loop asks the reader about
 * it: the payload (the reader's buffer, swapped out), a copy of the stored
 * bytes, the message, can_continue and the offset. The main thread does not
 * touch the reader until the thread has ended. */
/* Two slots: the thread decodes ahead of the main thread by up to two
 * sections, so it is never woken up to hand one over. With one slot it
 * waited for the main thread after each section, and on two cores shared
 * with the next pipeline stage its wake-up took up to 0.5 ms (measured with
 * a timeline of the threads on the 10 s demo recording). Four payload
 * buffers rotate (the reader's, two slots', the builder's). Payloads above
 * AHEAD_BIG (dwarf recordings: 8 MiB sections) keep to one slot: the fourth
 * buffer's first fill cost more than the slot saved (37 ms instead of 34 on
 * bench/unwind.sh's recording). */


static void *ahead_main(void *arg)
{
	struct ahead *a = arg;
	int last = 0;
	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!last) {
		/* decode into the reader's own buffer, then wait for a slot:
		 * with one slot held by the main thread the next is being read */
		struct pf_section sec;
		(void)pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL); /* a read() may block */
		int rc = pf_reader_next(a->r, &sec);
		(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		/* large payloads (stack copies) use one slot: a buffer fewer
		 * to fault in, and there the main thread is the slower */
		unsigned slots = rc > 0 && sec.size > AHEAD_BIG ? 1 : AHEAD_SLOTS;
		pthread_mutex_lock(&a->mu);
		while (a->head - a->tail >= slots && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			break;
		}
		/* the first free slot: with one in use at a time, always the
		 * same one (and its buffer) */
		unsigned idx = 0;
		while (a->in_use[idx])
			idx++;
		pthread_mutex_unlock(&a->mu);
		struct ahead_sec *x = &a->slot[idx];
		x->rc = rc;
		x->s = sec;
		x->has_stored = 0;
		x->msg[0] = 0;
		int oom = 0;
		if (rc > 0 && sec.data) {
			/* the reader decodes the next payload into this slot's
			 * buffer: a huge page one, not one it grows itself */
			if (!x->data)
				x->data = pfsi_payload_buf(&x->cap);
			oom = pf_reader_swap_data(a->r, &x->data, &x->cap) < 0;
			x->s.data = x->data;
		}
		/* the kernel's symbol table is decoded here too, beside the
		 * main thread (about 100 instructions a symbol) */
		x->ks_decoded = 0;
		if (rc > 0 && !oom && sec.type == PF_SEC_KSYMS && x->s.data) {
			pf_ksyms_free(&x->ks);
			x->ks_rc = pf_ksyms_decode_owned(&x->ks, x->data, x->s.size, x->ks_msg, sizeof(x->ks_msg));
			x->ks_decoded = 1;
			if (x->ks_rc == 0) { /* the table holds the payload now (x->s.data) */
				x->data = NULL;
				x->cap = 0;
			}
		}
		const uint8_t *st = rc > 0 ? pf_reader_stored(a->r) : NULL;
		if (st && sec.stored_size > x->stored_cap) {
			uint8_t *n = realloc(x->stored, sec.stored_size);
			if (n) {
				x->stored = n;
				x->stored_cap = sec.stored_size;
			}
		}
		if (st && sec.stored_size <= x->stored_cap) {
			if (sec.stored_size)
				memcpy(x->stored, st, sec.stored_size);
			x->has_stored = 1;
		}
		if (rc < 0)
			snprintf(x->msg, sizeof(x->msg), "%s", pf_reader_errmsg(a->r));
		x->can_continue = pf_reader_can_continue(a->r);
		x->offset = pf_reader_offset(a->r);
		if (oom) {
			x->rc = rc = -ENOMEM;
			snprintf(x->msg, sizeof(x->msg), "out of memory");
			x->can_continue = 0;
		}
		last = rc == 0 || (rc < 0 && !x->can_continue);
		pthread_mutex_lock(&a->mu);
		a->order[a->head % AHEAD_SLOTS] = idx;
		a->in_use[idx] = 1;
		__atomic_store_n(&a->head, a->head + 1, __ATOMIC_RELEASE);
		if (last)
			a->done = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	return NULL;
}

int pfsi_ahead_start(struct ahead *a, pf_reader *r)
{
	memset(a, 0, sizeof(*a));
	a->r = r;
	/* a regular file: stopping waits for the read in progress (at most one
	 * section), so no cancellation unwinds the thread (ASan reports a
	 * cancelled thread's teardown as a stack-buffer-underflow) */
	struct stat st;
	const char *name = pf_reader_name(r);
	a->regular = strcmp(name, "-") ? stat(name, &st) == 0 && S_ISREG(st.st_mode)
				       : fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->started = pthread_create(&a->th, NULL, ahead_main, a) == 0;
	return a->started ? 0 : -EAGAIN;
}

/* Whether the next section is ready (pfsi_ahead_next() would not wait). */
int pfsi_ahead_ready(struct ahead *a)
{
	return __atomic_load_n(&a->head, __ATOMIC_ACQUIRE) != __atomic_load_n(&a->tail, __ATOMIC_ACQUIRE);
}

/* The next section's slot; the previous one must have been handed back. */
struct ahead_sec *pfsi_ahead_next(struct ahead *a)
{
	pthread_mutex_lock(&a->mu);
	while (a->head == a->tail)
		pthread_cond_wait(&a->cv, &a->mu);
	struct ahead_sec *x = &a->slot[a->order[a->tail % AHEAD_SLOTS]];
	pthread_mutex_unlock(&a->mu);
	return x;
}

void pfsi_ahead_release(struct ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->in_use[a->order[a->tail % AHEAD_SLOTS]] = 0;
	__atomic_store_n(&a->tail, a->tail + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

/* Ends the thread (cancelling a read that waits on a pipe) and frees the
 * slots; the reader is the caller's again. */
void pfsi_ahead_stop(struct ahead *a)
{
	if (!a->started)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	int done = a->done;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (!done && !a->regular)
		(void)pthread_cancel(a->th); /* a read that waits on a pipe */
	pthread_join(a->th, NULL);
	a->started = 0;
	for (unsigned i = 0; i < AHEAD_SLOTS; i++) {
		free(a->slot[i].data);
		free(a->slot[i].stored);
		pf_ksyms_free(&a->slot[i].ks);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
}

