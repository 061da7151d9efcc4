/*
 * writer.c - the .pf writer: file header, section framing, compression,
 * record batching (pf_writer_*). Follows format/pfile.md sections 2 and 3.
 */
#include "advanced.h"
#include "internal/alloc.h"
#include "internal/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <elf.h>

#include <xxhash.h>
#include <zstd.h>

/* ------------------------------------------------------------------------ */
/* I/O helpers                                                               */
/* ------------------------------------------------------------------------ */

/* iov[0..n) in writev(2) calls until all is written. */
static int write_v(int fd, struct iovec *v, int n)
{
	int i = 0;
	while (i < n) {
		ssize_t k = writev(fd, v + i, n - i);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		size_t left = (size_t)k;
		while (i < n && left >= v[i].iov_len)
			left -= v[i++].iov_len;
		if (i < n) {
			v[i].iov_base = (uint8_t *)v[i].iov_base + left;
			v[i].iov_len -= left;
		}
	}
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	struct iovec v = { (void *)(uintptr_t)p, n };
	return write_v(fd, &v, 1);
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */
/* ------------------------------------------------------------------------ */

struct pf_writer {
	int fd;
	int level;            /* zstd level; < 0 = no compression */
	int error;            /* first write error, sticky */
	uint8_t endian;
	uint32_t frame_bytes;
	uint64_t written;
	ZSTD_CCtx *cctx;
	struct pf_buf batch;  /* pending RECORDS bytes */
	uint8_t *zbuf;
	size_t zcap;
	pf_tx *tx;            /* RECORDS transform 1, NULL = none */
	struct pf_buf tbuf;   /* transformed payload, and an EVENT copy */
	int chain;            /* transform 2: sections may continue the previous one */
	uint64_t chain_raw;   /* raw bytes in the current chain; 0: the next
	                         RECORDS section starts one (transform 1) */
	struct pf_buf prev;   /* the last RECORDS section's transformed payload */
	int hold;             /* pf_writer_hold(): sections go to `held` */
	struct pf_buf held;   /* sections held back, whole */
	/* a regular file (not a pipe, a socket, a device): the offset of its
	 * header, and the bytes of whole sections on it, to cut a failed
	 * write back to */
	int regular;
	off_t base;
	uint64_t whole;
};

/* A write failed (ENOSPC, EDQUOT, EIO...) after writing part of a section:
 * a regular file is cut back to its last whole section, so that what stays
 * is a valid, incomplete file (format/pfile.md 5.4) that every reader uses
 * in full, whichever tool wrote it. A pipe cannot be taken back. */
static void cut_torn(pf_writer *w)
{
	if (!w->regular)
		return;
	off_t keep = w->base + (off_t)w->whole;
	if (ftruncate(w->fd, keep) == 0)
		(void)lseek(w->fd, keep, SEEK_SET);
}

/* Writes a section (its 32-byte header and stored payload) after the
 * sections held back, in one writev(2): one system call, and one wake-up of
 * a reader at the other end of a pipe; or holds it back too. */
static int put_section(pf_writer *w, const uint8_t *h, const void *stored, size_t n)
{
	int rc = 0;
	if (w->hold) {
		if (pf_buf_put(&w->held, h, PF_SECTION_HEADER_SIZE) || pf_buf_put(&w->held, stored, n))
			rc = -ENOMEM;
	} else {
		struct iovec v[3];
		int k = 0;
		if (w->held.len)
			v[k++] = (struct iovec){ w->held.data, w->held.len };
		v[k++] = (struct iovec){ (void *)h, PF_SECTION_HEADER_SIZE };
		if (n)
			v[k++] = (struct iovec){ (void *)stored, n };
		rc = write_v(w->fd, v, k);
		w->held.len = 0;
	}
	if (rc < 0) {
		cut_torn(w);
		w->error = rc;
		return rc;
	}
	w->written += PF_SECTION_HEADER_SIZE + n;
	if (!w->hold)
		w->whole = w->written;
	return 0;
}

/* The sections held back, written alone. */
static int put_held(pf_writer *w)
{
	if (w->hold || !w->held.len)
		return 0;
	struct iovec v = { w->held.data, w->held.len };
	int rc = write_v(w->fd, &v, 1);
	w->held.len = 0;
	if (rc < 0) {
		cut_torn(w);
		w->error = rc;
	} else {
		w->whole = w->written;
	}
	return rc;
}

int pf_writer_hold(pf_writer *w, int on)
{
	if (!w)
		return -EINVAL;
	w->hold = on != 0;
	return 0;
}

int pf_writer_open_fd(pf_writer **out, int fd, const struct pf_writer_opts *opts)
{
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	if (!out || fd < 0)
		return -EINVAL;
	*out = NULL;
	if (opts) {
		if (opts->sz == 0 || opts->sz > sizeof(o))
			return -EINVAL;
		memcpy(&o, opts, opts->sz);
		o.sz = sizeof(o);
	}
	if (o.min_minor > PF_FORMAT_MINOR)
		return -EINVAL;
	if (o.endian == 0)
		o.endian = pf_host_endian();
	if (o.word_size == 0)
		o.word_size = (uint8_t)sizeof(void *);
	if (o.e_machine == 0)
		o.e_machine = pf_host_e_machine();
	if ((o.endian != PF_LITTLE_ENDIAN && o.endian != PF_BIG_ENDIAN) ||
	    (o.word_size != 4 && o.word_size != 8) || o.zstd_level > ZSTD_maxCLevel())
		return -EINVAL;
	if (o.records_frame_bytes == 0)
		o.records_frame_bytes = PF_RECORDS_FRAME_DEFAULT;
	if (o.records_frame_bytes > PF_SECTION_MAX_RAW || o.records_frame_bytes < 65536)
		return -EINVAL;
	if (o.transform > PF_TRANSFORM_COLUMNS_NEXT)
		return -EINVAL;

	pf_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->level = o.zstd_level == 0 ? 3 : o.zstd_level;
	w->endian = o.endian;
	w->frame_bytes = o.records_frame_bytes;
	if (w->level > 0) {
		w->cctx = ZSTD_createCCtx();
		if (!w->cctx) {
			free(w);
			return -ENOMEM;
		}
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0);
	}
	w->chain = o.transform == PF_TRANSFORM_COLUMNS_NEXT;
	if (o.transform != PF_TRANSFORM_NONE && pf_tx_new(&w->tx, o.e_machine) < 0) {
		ZSTD_freeCCtx(w->cctx);
		free(w);
		return -ENOMEM;
	}

	uint8_t h[PF_FILE_HEADER_SIZE];
	memset(h, 0, sizeof(h));
	memcpy(h, PF_MAGIC, PF_MAGIC_SIZE);
	pf_put_le16(h + 8, PF_FORMAT_MAJOR);
	/* the lowest minor whose features the file may use: 1.0 without a
	 * transform, 1.1 with transform 1, 1.2 with transform 2; 1.3 (runs)
	 * when the caller asks for it */
	uint16_t minor = w->chain ? 2 : w->tx ? 1 : 0;
	pf_put_le16(h + 10, o.min_minor > minor ? o.min_minor : minor);
	pf_put_le16(h + 12, PF_FILE_HEADER_SIZE);
	h[14] = o.endian;
	h[15] = o.word_size;
	pf_put_le16(h + 16, o.e_machine);
	pf_put_le16(h + 18, 0);
	pf_put_le32(h + 20, 0);
	pf_put_le64(h + 24, pf_xxh3(h, 24));
	struct stat st;
	w->base = lseek(fd, 0, SEEK_CUR);
	w->regular = w->base >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	int rc = write_all(fd, h, sizeof(h));
	if (rc < 0) {
		cut_torn(w); /* not even a header: nothing */
		ZSTD_freeCCtx(w->cctx);
		pf_tx_free(w->tx);
		free(w);
		return rc;
	}
	w->written = w->whole = sizeof(h);
	*out = w;
	return 0;
}

/* The layout of a transformed payload (format/pfile.md 3.6.2): a header of
 * 24 bytes + 80 stream lengths, then the streams back to back. */
#define TX_STREAMS 80u
#define TX_HEADER_BYTES (24u + 4u * TX_STREAMS)
#define TX_STACKDATA 14u /* the stream of stack-copy words */

/* Compresses a transformed RECORDS payload into w->zbuf as one zstd frame
 * whose blocks end where its streams end (ZSTD_e_flush after the header and
 * after each stream): a block then holds one column, whose literals and
 * sequences get entropy tables of their own, instead of tables shared by
 * columns as unlike as times and call-chain entries. For sections of a few
 * hundred KiB this makes them 2-4 % smaller than one ZSTD_compress2() call
 * (bench/RESULTS.md), which is what keeps the sections of the flush timer
 * (pfrec --flush-interval) close to the size of 1 MiB ones.
 * @return the frame's size, or 0 when it does not fit (the caller stores the
 * payload uncompressed) or the payload is not a well-formed transformed one. */
static size_t compress_columns(pf_writer *w, const uint8_t *t, size_t n)
{
	if (n < TX_HEADER_BYTES)
		return 0;
	size_t sum = TX_HEADER_BYTES;
	for (unsigned i = 0; i < TX_STREAMS; i++)
		sum += pf_le32(t + 24 + 4 * i);
	if (sum != n)
		return 0;
	ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
	if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(w->cctx, n)))
		return 0;
	ZSTD_outBuffer out = { w->zbuf, w->zcap, 0 };
	size_t off = 0;
	for (int i = -1; i < (int)TX_STREAMS; i++) {
		size_t len = i < 0 ? TX_HEADER_BYTES : pf_le32(t + 24 + 4 * (unsigned)i);
		if (!len)
			continue;
		ZSTD_inBuffer in = { t + off, len, 0 };
		size_t left;
		do {
			left = ZSTD_compressStream2(w->cctx, &out, &in, off + len == n ? ZSTD_e_end : ZSTD_e_flush);
			if (ZSTD_isError(left) || (left && out.pos == out.size)) {
				ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
				return 0;
			}
		} while (left || in.pos < in.size);
		off += len;
	}
	return out.pos;
}

static int write_section(pf_writer *w, uint16_t type, uint16_t flags, const void *raw, size_t size)
{
	if (w->error)
		return w->error;
	if (size > PF_SECTION_MAX_RAW)
		return -E2BIG;
	uint8_t tf = PF_TRANSFORM_NONE;
	uint64_t chain_after = 0; /* chain_raw once this section is written */
	if (w->tx && type == PF_SEC_EVENT) {
		/* the transform parses samples by the events seen so far */
		w->tbuf.len = 0;
		if (pf_buf_put(&w->tbuf, raw, size) < 0)
			return -ENOMEM;
		if (w->endian != pf_host_endian())
			(void)pf_event_payload_swap(w->tbuf.data, size);
		if (pf_tx_add_event(w->tx, w->tbuf.data, size) == -ENOMEM)
			return -ENOMEM;
	} else if (w->tx && type == PF_SEC_RECORDS && size > 0) {
		/* transform 2 continues the chain while its sections add up
		 * to at most frame_bytes of records (a full batch starts one);
		 * on failure (not whole records) the section is stored as it
		 * is, and the next one starts a chain */
		int next = w->chain && w->chain_raw && w->chain_raw + size <= w->frame_bytes;
		int swap = w->endian != pf_host_endian();
		int trc = next ? pf_tx_encode_next(w->tx, swap, raw, size, &w->tbuf)
			       : pf_tx_encode(w->tx, swap, raw, size, &w->tbuf);
		if (trc == -ENOMEM)
			return trc;
		if (trc == 0 && w->tbuf.len <= PF_SECTION_MAX_RAW) {
			raw = w->tbuf.data;
			tf = next ? PF_TRANSFORM_COLUMNS_NEXT : PF_TRANSFORM_COLUMNS;
			chain_after = (next ? w->chain_raw : 0) + size;
		}
		w->chain_raw = 0;
	}
	size_t tsize = tf ? w->tbuf.len : size; /* the bytes to compress */
	const void *stored = raw;
	size_t stored_size = tsize;
	uint8_t comp = PF_COMP_NONE;
	if (w->cctx && tsize >= 64) {
		/* a block header (3 bytes) more for each column's flush */
		size_t bound = ZSTD_compressBound(tsize) + (tf ? 4 * (TX_STREAMS + 1) : 0);
		if (pfi_reserve((void **)&w->zbuf, &w->zcap, bound) < 0)
			return -ENOMEM;
		/* one block per column, except with stack copies, whose
		 * columns compress better together (bench/RESULTS.md) */
		size_t zn = 0;
		int columns = tf && tsize >= TX_HEADER_BYTES && !pf_le32(raw + 24 + 4 * TX_STACKDATA);
		/* transform 2: the frame may refer back into the previous
		 * section's transformed payload (a raw-content prefix) */
		if (tf == PF_TRANSFORM_COLUMNS_NEXT && w->prev.len)
			ZSTD_CCtx_refPrefix(w->cctx, w->prev.data, w->prev.len);
		if (columns)
			zn = compress_columns(w, raw, tsize);
		if (!zn) {
			if (columns && tf == PF_TRANSFORM_COLUMNS_NEXT && w->prev.len)
				ZSTD_CCtx_refPrefix(w->cctx, w->prev.data, w->prev.len);
			zn = ZSTD_compress2(w->cctx, w->zbuf, w->zcap, raw, tsize);
		}
		if (!ZSTD_isError(zn) && zn < tsize) {
			stored = w->zbuf;
			stored_size = zn;
			comp = PF_COMP_ZSTD;
		}
	}
	uint8_t h[PF_SECTION_HEADER_SIZE];
	memset(h, 0, sizeof(h));
	pf_put_le32(h + 0, PF_SECTION_SYNC);
	pf_put_le16(h + 4, type);
	pf_put_le16(h + 6, flags);
	pf_put_le32(h + 8, (uint32_t)stored_size);
	pf_put_le32(h + 12, (uint32_t)size);
	pf_put_le64(h + 16, pf_xxh3(stored, stored_size));
	h[24] = comp;
	h[25] = tf;
	pf_put_le32(h + 28, (uint32_t)pf_xxh3(h, 28));
	int rc = put_section(w, h, stored, stored_size);
	if (rc == 0 && tf) {
		/* the chain goes on from this section: its transformed
		 * payload is the next one's zstd prefix */
		w->chain_raw = chain_after;
		struct pf_buf t = w->prev;
		w->prev = w->tbuf;
		w->tbuf = t;
	}
	return rc;
}

/* The pending RECORDS batch as a section (after the sections held back);
 * sections held back stay held when there is no batch: they go out with
 * the section the caller writes next. */
static int flush_batch(pf_writer *w)
{
	if (w->error)
		return w->error;
	if (w->batch.len == 0)
		return 0;
	int rc = write_section(w, PF_SEC_RECORDS, 0, w->batch.data, w->batch.len);
	w->batch.len = 0;
	return rc;
}

int pf_writer_flush(pf_writer *w)
{
	if (!w)
		return -EINVAL;
	int rc = flush_batch(w);
	return rc < 0 ? rc : put_held(w);
}

int pf_writer_section(pf_writer *w, uint16_t type, uint16_t flags, const void *raw, size_t size)
{
	if (!w || (!raw && size))
		return -EINVAL;
	int rc = flush_batch(w);
	if (rc < 0)
		return rc;
	return write_section(w, type, flags, raw, size);
}

int pf_writer_section_stored(pf_writer *w, const struct pf_section *sec, const void *stored)
{
	if (!w || !sec || (!stored && sec->stored_size) || sec->raw_size > PF_SECTION_MAX_RAW ||
	    sec->stored_size > PF_SECTION_MAX_STORED || sec->compression > PF_COMP_ZSTD ||
	    (sec->compression == PF_COMP_NONE && !sec->transform && sec->stored_size != sec->raw_size))
		return -EINVAL;
	int rc = flush_batch(w);
	if (rc < 0)
		return rc;
	/* a RECORDS section copied: the writer's next one cannot continue
	 * it (it does not have its coding state) */
	if (sec->type == PF_SEC_RECORDS)
		w->chain_raw = 0;
	uint8_t h[PF_SECTION_HEADER_SIZE];
	memset(h, 0, sizeof(h));
	pf_put_le32(h + 0, PF_SECTION_SYNC);
	pf_put_le16(h + 4, sec->type);
	pf_put_le16(h + 6, sec->flags);
	pf_put_le32(h + 8, sec->stored_size);
	pf_put_le32(h + 12, sec->raw_size);
	pf_put_le64(h + 16, pf_xxh3(stored, sec->stored_size));
	h[24] = sec->compression;
	h[25] = sec->transform;
	pf_put_le32(h + 28, (uint32_t)pf_xxh3(h, 28));
	return put_section(w, h, stored, sec->stored_size);
}

static uint16_t rec_size(const pf_writer *w, const uint8_t *p)
{
	uint16_t s;
	memcpy(&s, p + 6, 2);
	if (w->endian != pf_host_endian())
		s = (uint16_t)(s >> 8 | s << 8);
	return s;
}

int pf_writer_records(pf_writer *w, const void *data, size_t size)
{
	if (!w || (!data && size))
		return -EINVAL;
	if (w->error)
		return w->error;
	const uint8_t *p = data, *end = p + size;
	while (p < end) {
		/* Take the longest run of whole records that fits the batch. */
		const uint8_t *q = p;
		size_t room = w->frame_bytes - w->batch.len;
		while (q < end) {
			if ((size_t)(end - q) < sizeof(struct perf_event_header))
				return -EBADMSG;
			uint16_t s = rec_size(w, q);
			/* the kernel writes records in multiples of 8 bytes; readers
			 * reject other sizes (format/pfile.md 4.3) */
			if (s < sizeof(struct perf_event_header) || (s & 7) || s > (size_t)(end - q))
				return -EBADMSG;
			if ((size_t)(q - p) + s > room)
				break;
			q += s;
		}
		if (q == p) {
			/* Nothing fits: the batch is full. */
			int rc = pf_writer_flush(w);
			if (rc < 0)
				return rc;
			continue;
		}
		int rc = pf_buf_put(&w->batch, p, (size_t)(q - p));
		if (rc < 0)
			return rc;
		p = q;
		if (w->batch.len >= w->frame_bytes) {
			rc = pf_writer_flush(w);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

uint64_t pf_writer_bytes(const pf_writer *w)
{
	return w ? w->written : 0;
}

int pf_writer_close(pf_writer *w)
{
	if (!w)
		return 0;
	w->hold = 0;
	int rc = pf_writer_flush(w);
	ZSTD_freeCCtx(w->cctx);
	pf_buf_free(&w->batch);
	pf_buf_free(&w->held);
	free(w->zbuf);
	pf_tx_free(w->tx);
	pf_buf_free(&w->tbuf);
	pf_buf_free(&w->prev);
	free(w);
	return rc;
}

