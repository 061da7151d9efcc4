/*
 * reader.c - the streaming .pf reader: file header, section frames and
 * checksums, decompression, transforms, resynchronisation after damage
 * (pf_reader_*). Follows format/pfile.md sections 2 and 3.
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
#include <sys/uio.h>
#include <unistd.h>
#include <elf.h>

#include <xxhash.h>
#include <zstd.h>

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */
/* ------------------------------------------------------------------------ */

enum { RS_OK, RS_RESYNC, RS_STOP };

struct pf_reader {
	int fd;
	int own_fd;
	int eof;
	int state;              /* RS_* */
	int swap;
	char *name;
	struct pf_file_header hdr;
	/* input window: bytes [pos, len) of buf are unread; buf[0] is at file
	 * offset base */
	uint8_t *buf;
	size_t pos, len, cap;
	uint64_t base;
	uint64_t index;         /* next section index */
	uint64_t good_end;      /* end offset of the last intact section */
	uint64_t first_bad;
	unsigned errors;
	uint8_t *raw;
	size_t raw_cap;
	/* the last payload handed out in place (in buf, not copied to raw):
	 * pf_reader_swap_data() copies it then */
	const uint8_t *zc_data;
	size_t zc_size;
	const uint8_t *stored;  /* stored payload of the last section returned */
	int (*want)(void *arg, uint16_t type); /* NULL: decode every payload */
	void *want_arg;
	int stop_at_end;        /* pf_reader_set_stop_at_end() */
	uint64_t end_off;       /* just past the intact END handed out; 0: none yet */
	uint64_t end_samples;   /* END's `samples` (UINT64_MAX: no intact END read) */
	ZSTD_DCtx *dctx;
	struct pf_events evs;   /* only for byte swapping */
	pf_tx *tx;              /* events for transformed RECORDS; made at the first EVENT */
	uint8_t *tbuf;          /* a transformed payload after decompression */
	size_t tcap;
	/* transform 2 (format/pfile.md 3.6.7): whether the last RECORDS
	 * section was restored from transform 1 or 2 with nothing lost since
	 * (a section a transform 2 section may continue), and its transformed
	 * payload, the zstd prefix of the next one */
	int tx_chain;
	uint8_t *tprev;
	size_t tprev_len, tprev_cap;
	char msg[512];
};

static int rerr(pf_reader *r, int code, uint64_t bad_off, const char *fmt, ...)
{
	char tmp[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	snprintf(r->msg, sizeof(r->msg), "%s: %s", r->name, tmp);
	if (r->errors++ == 0)
		r->first_bad = bad_off;
	return code;
}

/* Makes at least `n` bytes available at buf[pos]; returns how many are
 * (less than n only at end of file), or a negative errno. */
static ssize_t fill(pf_reader *r, size_t n)
{
	if (r->len - r->pos >= n)
		return (ssize_t)n;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	if (pfi_grow_bytes((void **)&r->buf, &r->cap, n, 65536) < 0)
		return -ENOMEM;
	while (r->len < n && !r->eof) {
		ssize_t k = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			r->eof = 1;
		r->len += (size_t)k;
	}
	return (ssize_t)(r->len < n ? r->len : n);
}

static uint64_t cur_off(const pf_reader *r)
{
	return r->base + r->pos;
}

static int parse_file_header(pf_reader *r)
{
	ssize_t n = fill(r, PF_FILE_HEADER_SIZE);
	if (n < 0)
		return rerr(r, (int)n, 0, "read error: %s", strerror((int)-n));
	if (n == 0)
		return rerr(r, -ENODATA, 0, "empty file (not a .pf file)");
	const uint8_t *h = r->buf + r->pos;
	if ((size_t)n >= 8 && (memcmp(h, "PERFILE2", 8) == 0 || memcmp(h, "2ELIFREP", 8) == 0 ||
			       memcmp(h, "PERFFILE", 8) == 0))
		/* perf.data's magic, in either byte order (perf's header.c), or
		 * its version 1 form: the one tool that reads it is pfimport */
		return rerr(r, -EILSEQ, 0, "is a perf.data file: convert it with pfimport");
	if ((size_t)n < PF_MAGIC_SIZE || memcmp(h, PF_MAGIC, PF_MAGIC_SIZE) != 0)
		return rerr(r, -EILSEQ, 0, "not a .pf file (bad magic)");
	if (n < PF_FILE_HEADER_SIZE)
		return rerr(r, -ENODATA, (uint64_t)n, "truncated: file ends inside the file header (%zd of %d bytes)",
			    n, PF_FILE_HEADER_SIZE);
	struct pf_file_header *fh = &r->hdr;
	fh->version_major = pf_le16(h + 8);
	fh->version_minor = pf_le16(h + 10);
	fh->header_size = pf_le16(h + 12);
	if (fh->version_major > PF_FORMAT_MAJOR)
		return rerr(r, -EPROTONOSUPPORT, 8, "format version %u.%u is newer than this reader (%d.%d)",
			    fh->version_major, fh->version_minor, PF_FORMAT_MAJOR, PF_FORMAT_MINOR);
	if (fh->version_major == 0 || fh->header_size < PF_FILE_HEADER_SIZE || fh->header_size > 4096)
		return rerr(r, -EBADMSG, 8, "damaged file header (version %u, header size %u)",
			    fh->version_major, fh->header_size);
	n = fill(r, fh->header_size);
	if (n < 0)
		return rerr(r, (int)n, 0, "read error: %s", strerror((int)-n));
	if (n < fh->header_size)
		return rerr(r, -ENODATA, (uint64_t)n, "truncated: file ends inside the file header");
	h = r->buf + r->pos;
	uint64_t want = pf_le64(h + fh->header_size - 8);
	if (pf_xxh3(h, fh->header_size - 8u) != want)
		return rerr(r, -EBADMSG, 0, "file header checksum mismatch");
	fh->endian = h[14];
	fh->word_size = h[15];
	fh->e_machine = pf_le16(h + 16);
	fh->reserved = pf_le16(h + 18);
	fh->flags = pf_le32(h + 20);
	if ((fh->endian != PF_LITTLE_ENDIAN && fh->endian != PF_BIG_ENDIAN) ||
	    (fh->word_size != 4 && fh->word_size != 8))
		return rerr(r, -EBADMSG, 14, "damaged file header (byte order %u, word size %u)",
			    fh->endian, fh->word_size);
	r->swap = fh->endian != pf_host_endian();
	r->pos += fh->header_size;
	r->good_end = cur_off(r);
	return 0;
}

int pf_reader_open_fd(pf_reader **out, int fd, const char *name)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	pf_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->first_bad = UINT64_MAX;
	r->end_samples = UINT64_MAX;
	r->name = strdup(name ? name : "-");
	r->dctx = ZSTD_createDCtx();
	if (!r->name || !r->dctx) {
		pf_reader_close(r);
		return -ENOMEM;
	}
	*out = r;
	if (fd < 0)
		return rerr(r, -EBADF, 0, "bad file descriptor");
	int rc = parse_file_header(r);
	if (rc < 0)
		r->state = RS_STOP;
	return rc;
}

int pf_reader_open(pf_reader **out, const char *path)
{
	if (!out || !path)
		return -EINVAL;
	*out = NULL;
	if (strcmp(path, "-") == 0)
		return pf_reader_open_fd(out, STDIN_FILENO, "-");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		pf_reader *r = NULL;
		int rc = pf_reader_open_fd(&r, -1, path);
		(void)rc;
		if (r) {
			snprintf(r->msg, sizeof(r->msg), "%s: %s", path, strerror(e));
			r->state = RS_STOP;
		}
		*out = r;
		return -e;
	}
	int rc = pf_reader_open_fd(out, fd, path);
	if (*out)
		(*out)->own_fd = 1;
	else
		close(fd);
	return rc;
}

const struct pf_file_header *pf_reader_header(const pf_reader *r)
{
	return &r->hdr;
}

static int header_ok(const uint8_t *h)
{
	if (pf_le32(h) != PF_SECTION_SYNC)
		return 0;
	return (uint32_t)pf_xxh3(h, 28) == pf_le32(h + 28);
}

/* Validates the limits of an intact-looking section header. */
static const char *header_limits(const uint8_t *h)
{
	uint32_t stored = pf_le32(h + 8), raw = pf_le32(h + 12);
	uint8_t comp = h[24];
	if (stored > PF_SECTION_MAX_STORED || raw > PF_SECTION_MAX_RAW)
		return "section size above the format's limit";
	if (comp > PF_COMP_ZSTD)
		return "unknown compression";
	/* a transformed payload has its own size (section 3.6) */
	if (comp == PF_COMP_NONE && h[25] == PF_TRANSFORM_NONE && stored != raw)
		return "stored and raw sizes differ for an uncompressed section";
	return NULL;
}

/* Scans forward from the current position for the next intact section
 * header. Returns 1 if found (positioned at it), 0 at end of file, <0 error. */
static int resync(pf_reader *r)
{
	for (;;) {
		ssize_t n = fill(r, PF_SECTION_HEADER_SIZE);
		if (n < 0)
			return (int)n;
		if (n < PF_SECTION_HEADER_SIZE) {
			r->pos = r->len;
			return 0;
		}
		const uint8_t *h = r->buf + r->pos;
		if (header_ok(h) && !header_limits(h))
			return 1;
		/* Skip ahead to the next possible sync byte. */
		const uint8_t *next = memchr(h + 1, 'P', r->len - r->pos - 1);
		r->pos = next ? (size_t)(next - r->buf) : r->len;
	}
}

static int ensure_raw(pf_reader *r, size_t n)
{
	if (n <= r->raw_cap)
		return 0;
	size_t cap = r->raw_cap ? r->raw_cap : 65536;
	while (cap < n)
		cap *= 2;
	/* the old payload is not kept: no realloc() copying it */
	free(r->raw);
	r->raw = NULL;
	r->raw_cap = 0;
	uint8_t *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	r->raw = b;
	r->raw_cap = cap;
	return 0;
}

/* Restores a transformed payload into r->raw (format/pfile.md 3.6): the
 * stored bytes (decompressed first when compressed) are the transformed
 * payload, whose own size is the zstd frame's content size. */
static int untransform(pf_reader *r, struct pf_section *sec, const uint8_t *payload)
{
	unsigned long long idx = (unsigned long long)sec->index, off = (unsigned long long)sec->offset;
	const uint8_t *t = payload;
	size_t tn = sec->stored_size;
	int next = sec->transform == PF_TRANSFORM_COLUMNS_NEXT;
	int chain = r->tx_chain;
	r->tx_chain = 0; /* until this section is restored */
	if (next && !chain)
		return rerr(r, -EBADMSG, off + PF_SECTION_HEADER_SIZE,
			    "section %llu at offset %llu: continues a RECORDS section that could not be read "
			    "(transform 2; section skipped)", idx, off);
	if (sec->compression == PF_COMP_ZSTD) {
		unsigned long long fcs = ZSTD_getFrameContentSize(payload, sec->stored_size);
		if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs == ZSTD_CONTENTSIZE_UNKNOWN || fcs > PF_SECTION_MAX_RAW)
			return rerr(r, -EBADMSG, off + PF_SECTION_HEADER_SIZE,
				    "section %llu at offset %llu: zstd frame of a transformed section has no valid "
				    "content size (section skipped)", idx, off);
		if (fcs + 1 > r->tcap) {
			uint8_t *b = realloc(r->tbuf, (size_t)fcs + 1);
			if (!b) {
				r->state = RS_STOP;
				return rerr(r, -ENOMEM, off, "out of memory");
			}
			r->tbuf = b;
			r->tcap = (size_t)fcs + 1;
		}
		/* transform 2: the frame may refer back into the previous
		 * section's transformed payload (set right before its only use) */
		if (next && r->tprev_len)
			ZSTD_DCtx_refPrefix(r->dctx, r->tprev, r->tprev_len);
		size_t got = ZSTD_decompressDCtx(r->dctx, r->tbuf, (size_t)fcs, payload, sec->stored_size);
		if (ZSTD_isError(got) || got != fcs)
			return rerr(r, -EBADMSG, off + PF_SECTION_HEADER_SIZE,
				    "section %llu at offset %llu: zstd frame does not decode to %llu bytes: %s "
				    "(section skipped)", idx, off, fcs,
				    ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size differs");
		t = r->tbuf;
		tn = got;
	}
	if (!r->tx && pf_tx_new(&r->tx, r->hdr.e_machine) < 0) {
		r->state = RS_STOP;
		return rerr(r, -ENOMEM, off, "out of memory");
	}
	const char *why = "";
	int rc = next ? pf_tx_decode_next(r->tx, r->swap, t, tn, r->raw, sec->raw_size, &why)
		      : pf_tx_decode(r->tx, r->swap, t, tn, r->raw, sec->raw_size, &why);
	if (rc == -ENOMEM) {
		r->state = RS_STOP;
		return rerr(r, rc, off, "out of memory");
	}
	if (rc < 0)
		return rerr(r, -EBADMSG, off + PF_SECTION_HEADER_SIZE,
			    "section %llu at offset %llu: transformed records do not decode: %s (section skipped)",
			    idx, off, why);
	/* keep the transformed payload for the section that may continue this one */
	if (t == r->tbuf) {
		uint8_t *b = r->tprev;
		size_t c = r->tprev_cap;
		r->tprev = r->tbuf;
		r->tprev_cap = r->tcap;
		r->tbuf = b;
		r->tcap = c;
	} else {
		if (tn > r->tprev_cap) {
			uint8_t *b = malloc(tn);
			if (!b) {
				r->state = RS_STOP;
				return rerr(r, -ENOMEM, off, "out of memory");
			}
			free(r->tprev);
			r->tprev = b;
			r->tprev_cap = tn;
		}
		if (tn)
			memcpy(r->tprev, t, tn);
	}
	r->tprev_len = tn;
	r->tx_chain = 1;
	return 0;
}

/* Section types whose uncompressed payloads are handed out where they lie
 * in the input buffer (format/profile.md tables: length-prefixed binary,
 * never converted, no NUL needed after them). */
static int in_place(uint16_t t)
{
	return t == PF_SEC_SAMPLES || t == PF_SEC_STACKS || t == PF_SEC_FRAMES || t == PF_SEC_STRINGS;
}

static int known_type(uint16_t t)
{
	return (t >= PF_SEC_META && t <= PF_SEC_THREADS) || (t >= PF_SEC_STRINGS && t <= PF_SEC_SYMINFO);
}

/* Reads the next section frame: its header (checked) and its whole
 * payload, at *payload (in r->buf, consumed). @return 1, 0 at the end of the
 * file, or the negative code of rerr() (r->state says whether to go on). */
static int read_frame(pf_reader *r, struct pf_section *sec, const uint8_t **payload, uint64_t *sum)
{
	if (r->state == RS_RESYNC) {
		int rc = resync(r);
		if (rc < 0) {
			r->state = RS_STOP;
			return rerr(r, rc, cur_off(r), "read error: %s", strerror(-rc));
		}
		r->state = RS_OK;
		if (rc == 0)
			return 0;
	}
	uint64_t off = cur_off(r);
	ssize_t n = fill(r, PF_SECTION_HEADER_SIZE);
	if (n < 0) {
		r->state = RS_STOP;
		return rerr(r, (int)n, off, "read error at offset %llu: %s", (unsigned long long)off,
			    strerror((int)-n));
	}
	if (n == 0)
		return 0;
	uint64_t idx = r->index++;
	if (n < PF_SECTION_HEADER_SIZE) {
		r->state = RS_STOP;
		return rerr(r, -ENODATA, off,
			    "section %llu at offset %llu: truncated: file ends inside the section header "
			    "(%zd of %d bytes; data kept up to offset %llu)",
			    (unsigned long long)idx, (unsigned long long)off, n, PF_SECTION_HEADER_SIZE,
			    (unsigned long long)r->good_end);
	}
	const uint8_t *h = r->buf + r->pos;
	const char *why = NULL;
	if (memcmp(h, PF_MAGIC, PF_MAGIC_SIZE) == 0) /* PF_SECTION_HEADER_SIZE > 8 */
		why = "a file header where a section header should be (another file appended?)";
	else if (pf_le32(h) != PF_SECTION_SYNC)
		why = "bad sync word in section header";
	else if ((uint32_t)pf_xxh3(h, 28) != pf_le32(h + 28))
		why = "section header checksum mismatch";
	else
		why = header_limits(h);
	if (why) {
		r->pos += 1; /* resync starts after this byte */
		r->state = RS_RESYNC;
		r->tx_chain = 0; /* what was lost may have been RECORDS */
		return rerr(r, -EBADMSG, off,
			    "section %llu at offset %llu: %s (data kept up to offset %llu; "
			    "skipping to the next intact section)",
			    (unsigned long long)idx, (unsigned long long)off, why,
			    (unsigned long long)r->good_end);
	}
	memset(sec, 0, sizeof(*sec));
	sec->type = pf_le16(h + 4);
	sec->flags = pf_le16(h + 6);
	sec->stored_size = pf_le32(h + 8);
	sec->raw_size = pf_le32(h + 12);
	sec->compression = h[24];
	sec->transform = h[25];
	sec->offset = off;
	sec->index = idx;
	*sum = pf_le64(h + 16);
	size_t total = PF_SECTION_HEADER_SIZE + (size_t)sec->stored_size;
	n = fill(r, total);
	if (n < 0) {
		r->state = RS_STOP;
		return rerr(r, (int)n, off, "read error at offset %llu: %s", (unsigned long long)off,
			    strerror((int)-n));
	}
	if ((size_t)n < total) {
		r->state = RS_STOP;
		return rerr(r, -ENODATA, off + (uint64_t)n,
			    "section %llu at offset %llu: truncated: payload of %u bytes, only %zd in the file "
			    "(data kept up to offset %llu)",
			    (unsigned long long)idx, (unsigned long long)off, sec->stored_size,
			    n - PF_SECTION_HEADER_SIZE, (unsigned long long)r->good_end);
	}
	*payload = r->buf + r->pos + PF_SECTION_HEADER_SIZE;
	r->pos += total; /* the section is consumed whatever follows */
	return 1;
}

/* The payload restored into r->raw (NUL past its end): decompressed, and
 * with a transform undone (chain: whether a transform 2 section may continue
 * the previous one). @return 0 or the negative code of rerr(). */
static int restore(pf_reader *r, struct pf_section *sec, const uint8_t *payload, int chain)
{
	uint64_t off = sec->offset, idx = sec->index;
	int rc = ensure_raw(r, (size_t)sec->raw_size + 1);
	if (rc < 0) {
		r->state = RS_STOP;
		return rerr(r, rc, off, "out of memory");
	}
	if (sec->transform != PF_TRANSFORM_NONE) {
		r->tx_chain = chain;
		rc = untransform(r, sec, payload);
		if (rc < 0)
			return rc;
	} else if (sec->compression == PF_COMP_ZSTD) {
		size_t got = ZSTD_decompressDCtx(r->dctx, r->raw, sec->raw_size, payload, sec->stored_size);
		if (ZSTD_isError(got) || got != sec->raw_size)
			return rerr(r, -EBADMSG, off + PF_SECTION_HEADER_SIZE,
				    "section %llu at offset %llu: zstd frame does not decode to %u bytes: %s "
				    "(section skipped)",
				    (unsigned long long)idx, (unsigned long long)off, sec->raw_size,
				    ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size differs");
	} else if (sec->raw_size) {
		memcpy(r->raw, payload, sec->raw_size);
	}
	r->raw[sec->raw_size] = 0; /* a NUL past the end, for text payloads */
	sec->data = r->raw;
	sec->size = sec->raw_size;
	return 0;
}

/* A restored EVENT registered for the transform (and, in the other byte
 * order, converted and kept for the records' conversion), RECORDS converted
 * to host order. @return 0 or the negative code of rerr(). */
static int to_host(pf_reader *r, struct pf_section *sec)
{
	uint64_t off = sec->offset, idx = sec->index;
	int rc = 0;
	if (sec->type == PF_SEC_EVENT) {
		/* every EVENT takes an index for transformed RECORDS, even a
		 * malformed one (which pf_events_add() reports below) */
		if (!r->tx && pf_tx_new(&r->tx, r->hdr.e_machine) < 0) {
			r->state = RS_STOP;
			return rerr(r, -ENOMEM, off, "out of memory");
		}
		int erc = r->swap ? pf_event_payload_swap(sec->data, sec->size) : 0;
		if (pf_tx_add_event(r->tx, sec->data, sec->size) == -ENOMEM) {
			r->state = RS_STOP;
			return rerr(r, -ENOMEM, off, "out of memory");
		}
		if (r->swap) {
			rc = erc;
			if (rc == 0)
				rc = pf_events_add(&r->evs, sec);
			/* an event whose attr sets fields past those this library
			 * knows is converted as far as it knows and kept; its
			 * samples stay in the file's order, and each tool refuses
			 * the event as it does in a file of this host's order */
			if (rc == -EPROTONOSUPPORT)
				rc = 0;
		}
	}
	if (r->swap) {
		if (sec->type == PF_SEC_RECORDS) {
			/* Records up to a damaged one are swapped; the record
			 * iterator stops at the damaged one and reports it, as it
			 * does for a file in host order. */
			(void)pf_records_swap(&r->evs, sec->data, sec->size);
		}
		if (rc < 0)
			return rerr(r, rc, off + PF_SECTION_HEADER_SIZE,
				    "section %llu at offset %llu: cannot convert byte order: damaged records",
				    (unsigned long long)idx, (unsigned long long)off);
	}
	return 0;
}

int pf_reader_next(pf_reader *r, struct pf_section *sec)
{
	if (!r || !sec)
		return -EINVAL;
	r->stored = NULL;
	r->zc_data = NULL;
	if (r->state == RS_STOP)
		return 0;
	if (r->stop_at_end && r->end_off) {
		r->state = RS_STOP;
		ssize_t n = fill(r, 1);
		if (n < 0)
			return rerr(r, (int)n, cur_off(r), "read error at offset %llu: %s",
				    (unsigned long long)cur_off(r), strerror((int)-n));
		if (n == 0)
			return 0;
		return rerr(r, -EBADMSG, r->end_off,
			    "offset %llu: data after the END section (another file appended?): ignored",
			    (unsigned long long)r->end_off);
	}
	const uint8_t *payload = NULL;
	uint64_t sum = 0;
	int rc = read_frame(r, sec, &payload, &sum);
	if (rc <= 0)
		return rc;
	uint64_t off = sec->offset, idx = sec->index;
	/* a RECORDS section not restored from a transform ends the chain of
	 * sections a transform 2 section may continue (untransform() keeps
	 * it going) */
	int chain = r->tx_chain;
	if (sec->type == PF_SEC_RECORDS)
		r->tx_chain = 0;
	if (pf_xxh3(payload, sec->stored_size) != sum)
		return rerr(r, -EBADMSG, off + PF_SECTION_HEADER_SIZE,
			    "section %llu at offset %llu: checksum mismatch (section skipped; data kept up to offset %llu)",
			    (unsigned long long)idx, (unsigned long long)off, (unsigned long long)r->good_end);
	if (!known_type(sec->type) && (sec->flags & PF_SECF_MUST_UNDERSTAND)) {
		r->state = RS_STOP;
		return rerr(r, -EPROTONOSUPPORT, off,
			    "section %llu at offset %llu: unknown section type 0x%04x marked must-understand",
			    (unsigned long long)idx, (unsigned long long)off, sec->type);
	}
	if (r->want && sec->type != PF_SEC_EVENT && sec->type != PF_SEC_END && !r->want(r->want_arg, sec->type)) {
		/* not wanted: checked, handed out without its payload */
		r->good_end = cur_off(r);
		if (sec->type == PF_SEC_END)
			r->end_off = r->good_end;
		r->stored = payload;
		return 1;
	}
	if (sec->transform != PF_TRANSFORM_NONE &&
	    (sec->transform > PF_TRANSFORM_COLUMNS_NEXT || sec->type != PF_SEC_RECORDS))
		return rerr(r, -EPROTONOSUPPORT, off,
			    "section %llu at offset %llu: unsupported transform %u for a section of type 0x%04x "
			    "(section skipped)",
			    (unsigned long long)idx, (unsigned long long)off, sec->transform, sec->type);
	if (sec->compression == PF_COMP_NONE && sec->transform == PF_TRANSFORM_NONE && in_place(sec->type)) {
		/* binary tables, read where they lie: no copy */
		r->zc_data = payload;
		r->zc_size = sec->raw_size;
		sec->data = (uint8_t *)payload; /* our own input buffer */
		sec->size = sec->raw_size;
	} else if ((rc = restore(r, sec, payload, chain)) < 0 || (rc = to_host(r, sec)) < 0) {
		return rc;
	}
	r->good_end = cur_off(r);
	if (sec->type == PF_SEC_END) {
		struct pf_end e;
		r->end_off = r->good_end;
		/* what the file says it holds, for pf_reader_input_note() */
		if (pf_end_decode(sec->data, sec->size, &e) == 0)
			r->end_samples = e.samples;
	}
	r->stored = payload;
	return 1;
}

const uint8_t *pf_reader_stored(const pf_reader *r)
{
	return r ? r->stored : NULL;
}

int pf_reader_swap_data(pf_reader *r, uint8_t **buf, size_t *cap)
{
	if (!r || !buf || !cap)
		return -EINVAL;
	if (r->zc_data) {
		/* a payload handed out in place: into raw first */
		if (ensure_raw(r, r->zc_size + 1) < 0)
			return -ENOMEM;
		memcpy(r->raw, r->zc_data, r->zc_size);
		r->raw[r->zc_size] = 0;
		r->zc_data = NULL;
	}
	uint8_t *b = r->raw;
	size_t c = r->raw_cap;
	r->raw = *buf;
	r->raw_cap = *buf ? *cap : 0;
	*buf = b;
	*cap = c;
	return 0;
}

void pf_reader_set_want(pf_reader *r, int (*want)(void *arg, uint16_t type), void *arg)
{
	if (!r)
		return;
	r->want = want;
	r->want_arg = arg;
}

void pf_reader_set_stop_at_end(pf_reader *r, int stop)
{
	if (r)
		r->stop_at_end = stop != 0;
}

int pf_reader_can_continue(const pf_reader *r)
{
	return r && r->state != RS_STOP;
}

const char *pf_reader_errmsg(const pf_reader *r)
{
	return r ? r->msg : "";
}

uint64_t pf_reader_first_bad_offset(const pf_reader *r)
{
	return r ? r->first_bad : UINT64_MAX;
}

int pf_reader_complete(const pf_reader *r)
{
	return r && r->end_off != 0;
}

uint64_t pf_reader_samples_claimed(const pf_reader *r)
{
	return r ? r->end_samples : UINT64_MAX;
}

int pf_input_note(const char *name, int complete, int damaged, uint64_t used, uint64_t claimed, char *buf,
		  size_t size)
{
	if (size)
		buf[0] = '\0';
	/* every sample END counts was used: nothing of the recording is
	 * missing, whatever else was damaged (told on its own) */
	if (complete && ((claimed != UINT64_MAX && used >= claimed) || (!damaged && claimed == UINT64_MAX)))
		return 0;
	char of[64] = "";
	if (claimed != UINT64_MAX && used < claimed)
		snprintf(of, sizeof(of), " of the %llu END counts", (unsigned long long)claimed);
	const char *what = damaged && !complete ? "damaged and incomplete (no END section)"
			   : damaged		 ? "damaged"
			   : !complete		 ? "incomplete (no END section: the recorder was stopped or the file was "
						   "cut short)"
						 : "some samples did not decode";
	if (size)
		snprintf(buf, size, "%s: %s: %llu samples used%s", name, what, (unsigned long long)used, of);
	return 1;
}

int pf_reader_input_note(const pf_reader *r, uint64_t used, char *buf, size_t size)
{
	if (!r) {
		if (size)
			buf[0] = '\0';
		return -EINVAL;
	}
	return pf_input_note(strcmp(r->name, "-") ? r->name : "<stdin>", r->end_off != 0, r->errors != 0, used,
			     r->end_samples, buf, size);
}

unsigned pf_reader_errors(const pf_reader *r)
{
	return r ? r->errors : 0;
}

int pf_reader_needs_swap(const pf_reader *r)
{
	return r ? r->swap : 0;
}

const char *pf_reader_name(const pf_reader *r)
{
	return r ? r->name : "";
}

uint64_t pf_reader_offset(const pf_reader *r)
{
	return r ? cur_off(r) : 0;
}

void pf_reader_close(pf_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->name);
	free(r->buf);
	free(r->raw);
	free(r->tbuf);
	free(r->tprev);
	pf_tx_free(r->tx);
	ZSTD_freeDCtx(r->dctx);
	pf_events_free(&r->evs);
	free(r);
}


