/*
 * pfile/pfile.h - libpfile: the one parser and writer of the pftools `.pf` container.
 *
 * This header is the library's manual. Read it top to bottom.
 *
 * A `.pf` file is a fixed 32-byte file header followed by a sequence of
 * self-delimiting sections (format/pfile.md, sections 2 and 3). Each section
 * carries its type, its stored and raw sizes, its compression and an XXH3-64
 * checksum of the stored bytes, so a reader can stream the file from a pipe,
 * skip what it does not know, and stop or resynchronise at damage.
 *
 * Conventions used by every function below:
 *  - Errors are negative errno values (libbpf style). Functions that can meet a
 *    damaged file also leave a one-line message with context (file name, byte
 *    offset, section index) that tools print as they are:
 *        pf_reader_errmsg(r) -> "run.pf: section 7 at offset 81234: checksum mismatch"
 *    The codes used: -EINVAL (bad argument), -ENOMEM, -EIO and other errno
 *    values from read(2)/write(2), -EILSEQ (not a .pf file: bad magic),
 *    -EPROTONOSUPPORT (a future major version or an unknown must-understand
 *    section), -EBADMSG (damaged data: checksum mismatch, impossible length,
 *    bad record), -ENODATA (the file ends inside a header or a section:
 *    truncated), -E2BIG (a length above the documented limits).
 *  - Sizes are in bytes, times in nanoseconds of the recording's perf clock
 *    unless the name says otherwise (`_ns`, `_bytes`, `period` in events).
 *  - Container fields (file header, section headers, and every field that
 *    pftools itself defines inside a section) are little-endian on disk,
 *    whatever the machine. Data the kernel produced (struct perf_event_attr
 *    and perf records) is stored exactly as the recording machine wrote it,
 *    in that machine's byte order, which the file header names. The reader
 *    converts it to host order before handing it out (pf_records_swap()).
 *
 * The headers of libpfile, one per stage (this one is the container):
 *    pfile/pfile.h     the container: writer, reader, buffers, byte order,
 *                      XXH3, key/value payloads, the small section payloads
 *    pfile/records.h   perf records: EVENT payloads, the decoders of the
 *                      sample and of the records pftools reads,
 *                      iteration, byte-order swapping
 *    pfile/maps.h      the mapping timeline of a recording and its DSOs
 *    pfile/profile.h   the resolved profile: tables and section codecs
 *    pfile/build.h     raw records -> samples over those tables (the builder)
 *    pfile/fold.h      folded stacks and top-N functions of a file
 *    pfile/advanced.h  no ABI promise: the RECORDS transform and the
 *                      structures behind the opaque types, for tests
 * For programs written when this header was the only one, it still brings
 * in records.h at its end (the EVENT and record decoders were declared here).
 *
 * HowTo: write a file
 *    struct pf_writer_opts o = PF_WRITER_OPTS_INIT;     // host byte order, level 3
 *    pf_writer *w; pf_writer_open_fd(&w, fd, &o);
 *    pf_writer_section(w, PF_SEC_META, 0, meta, meta_len);   // pf_kv_* builds it
 *    pf_writer_section(w, PF_SEC_EVENT, 0, ev, ev_len);      // pf_event_encode() (records.h)
 *    for each batch of ring-buffer bytes (whole records):
 *        pf_writer_records(w, bytes, len);   // batched into RECORDS frames
 *    pf_writer_section(w, PF_SEC_END, 0, end, end_len);      // pf_end_encode()
 *    pf_writer_close(w);                    // flushes; frees; does not close fd
 *
 * HowTo: read a file (a path, "-" for stdin, or any fd including a pipe)
 *    pf_reader *r; if (pf_reader_open(&r, path) < 0) { print pf_reader_errmsg }
 *    struct pf_section s; int rc;
 *    while ((rc = pf_reader_next(r, &s)) != 0) {
 *        if (rc < 0) { print pf_reader_errmsg(r); if (!pf_reader_can_continue(r)) break; continue; }
 *        if (s.type == PF_SEC_EVENT) pf_events_add(evs, &s);             // records.h
 *        if (s.type == PF_SEC_RECORDS) {     // kernel data, already in host order
 *            struct pf_rec_iter it; pf_rec_iter_init(&it, s.data, s.size);
 *            const struct perf_event_header *h; while ((rc = pf_rec_iter_next(&it, &h)) > 0) { ... }
 *        }
 *    }
 *    pf_reader_close(r);
 */
#ifndef PFILE_H
#define PFILE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions and constants (format/pfile.md section 2)                        */
/* ------------------------------------------------------------------------ */

#define PF_FORMAT_MAJOR 1 /* readers refuse files with a larger major */
#define PF_FORMAT_MINOR 4 /* readers accept any minor of their major; a writer
                           * writes the lowest minor whose features it may use:
                           * 0 without transforms, 1 with transform 1, 2 with
                           * transform 2 (continued sections), 3 with runs
                           * (RUN sections and END's run table), 4 with KSYMS
                           * and PERFMAP sections */

/* The 8 magic bytes at offset 0: 0x89 'P' 'F' 'I' 'L' 'E' '\r' '\n'. */
#define PF_MAGIC "\x89PFILE\r\n"
#define PF_MAGIC_SIZE 8
#define PF_FILE_HEADER_SIZE 32
#define PF_SECTION_HEADER_SIZE 32
/* Sync word at the start of every section header: the bytes 'P' 'F' 'S' 'C'. */
#define PF_SECTION_SYNC 0x43534650u

/* Limits a reader enforces; a writer never produces more (format/ 3.3). */
#define PF_SECTION_MAX_RAW (64u << 20)    /* raw (decompressed) payload, bytes */
#define PF_SECTION_MAX_STORED (64u << 20) /* stored payload, bytes */
#define PF_RECORDS_FRAME_DEFAULT (1u << 20) /* raw bytes per RECORDS section */

/* Byte order of the recording machine (file header byte 14). */
enum pf_endian { PF_LITTLE_ENDIAN = 1, PF_BIG_ENDIAN = 2 };

/* Section types (format/pfile.md section 4). Ranges:
 *  0x0001-0x00ff  raw recording (pfrec)
 *  0x0100-0x01ff  resolved profile (pfsym)
 *  0x0200-0x7fff  reserved for future pftools versions
 *  0x8000-0xffff  private / experimental: never assigned by pftools */
enum pf_section_type {
	PF_SEC_META = 0x0001,      /* key/value strings: machine, kernel, clock ... */
	PF_SEC_EVENT = 0x0002,     /* one perf_event_attr as opened, its ids, name */
	PF_SEC_RECORDS = 0x0003,   /* perf records as the kernel wrote them */
	PF_SEC_MAPS = 0x0004,      /* pid, time, raw /proc/PID/maps text */
	PF_SEC_BUILDID = 0x0005,   /* path, build-id, size, mtime entries */
	PF_SEC_END = 0x0006,       /* totals; its presence = complete recording */
	PF_SEC_DSO_IMAGE = 0x0007, /* a file's bytes, e.g. the [vdso] image */
	PF_SEC_THREADS = 0x0008,   /* pid, tid, comm of threads alive at start */
	PF_SEC_COUNTS = 0x0009,    /* each event's total count at the end (key/value) */
	PF_SEC_RUN = 0x000a,       /* a run of the command begins (pfrec --repeat; format 1.3) */
	PF_SEC_KSYMS = 0x000b,     /* the kernel's text symbols and modules (format 1.4; ksyms.h) */
	PF_SEC_PERFMAP = 0x000c,   /* pid, time, raw /tmp/perf-PID.map text (JIT symbols; format 1.4) */

	/* resolved profile: format/profile.md, encoders/decoders in profile.h */
	PF_SEC_STRINGS = 0x0100,   /* resolved profile: string table chunk */
	PF_SEC_FRAMES = 0x0101,    /* resolved profile: frame table chunk (40-byte entries) */
	PF_SEC_STACKS = 0x0102,    /* resolved profile: stack tree chunk (parent, frame) */
	PF_SEC_SAMPLES = 0x0103,   /* resolved profile: samples (40-byte entries) */
	PF_SEC_SYMINFO = 0x0104,   /* resolved profile: key/value; first one marks a resolved file */
};

/* Section flags (section header bytes 6-7). */
#define PF_SECF_MUST_UNDERSTAND 0x0001u /* a reader that does not know the type must stop */

/* Section compression (section header byte 24). */
enum pf_compression { PF_COMP_NONE = 0, PF_COMP_ZSTD = 1 };

/* Section transform (section header byte 25, format/pfile.md 3.6): applied to
 * the raw payload before compression, undone by the reader after it.
 * PF_TRANSFORM_COLUMNS (format 1.1) is defined for RECORDS only: sample
 * fields as delta-coded columns, call chains and user stack copies coded
 * against the previous ones of the same thread, other records verbatim.
 * PF_TRANSFORM_COLUMNS_NEXT (format 1.2, 3.6.7) is the same coding continued
 * from the state the previous RECORDS section left, its zstd frame able to
 * refer back into that section's transformed payload: small sections (a
 * recorder's flush timer) then cost little more than large ones, and a
 * section is readable only after the ones it continues. */
enum pf_transform_id { PF_TRANSFORM_NONE = 0, PF_TRANSFORM_COLUMNS = 1, PF_TRANSFORM_COLUMNS_NEXT = 2 };

/* Decoded file header (format/pfile.md 2.1). */
struct pf_file_header {
	uint16_t version_major;
	uint16_t version_minor;
	uint16_t header_size; /* bytes, >= 32; a reader skips bytes past those it knows */
	uint8_t endian;       /* enum pf_endian: byte order of kernel-written data */
	uint8_t word_size;    /* 4 or 8: pointer size of the recorded user space */
	uint16_t e_machine;   /* ELF e_machine of the recorded machine (EM_X86_64 = 62, EM_AARCH64 = 183) */
	uint16_t reserved;
	uint32_t flags;       /* none defined in 1.0; readers ignore unknown bits */
};

/* One section as handed out by the reader. */
struct pf_section {
	uint16_t type;          /* enum pf_section_type, or unknown */
	uint16_t flags;         /* PF_SECF_* */
	uint8_t compression;    /* enum pf_compression, as stored */
	uint8_t transform;      /* enum pf_transform_id, as stored; `data` is always
	                           the restored (untransformed) payload */
	uint32_t stored_size;   /* bytes of payload in the file */
	uint32_t raw_size;      /* bytes of payload after decompression */
	uint64_t offset;        /* file offset of the section header, bytes */
	uint64_t index;         /* 0-based position of the section in the file */
	uint8_t *data;          /* raw payload (decompressed, kernel data in host order
	                           for RECORDS/EVENT); owned by the reader, valid until
	                           the next pf_reader_next() or pf_reader_close() */
	size_t size;            /* == raw_size */
};

/* ------------------------------------------------------------------------ */
/* Writer (format/pfile.md sections 2-3)                                     */
/* ------------------------------------------------------------------------ */

typedef struct pf_writer pf_writer;

/* Options for pf_writer_open_fd(). `sz` must be sizeof(struct pf_writer_opts):
 * it lets a caller compiled against an older header keep working. */
struct pf_writer_opts {
	size_t sz;
	int zstd_level;           /* 1..19 (zstd's levels); 0 = default 3; <0 = store uncompressed */
	uint8_t endian;           /* byte order of the kernel data to be written; 0 = host */
	uint8_t word_size;        /* 4 or 8; 0 = host */
	uint16_t e_machine;       /* ELF machine; 0 = host's */
	uint32_t records_frame_bytes; /* raw bytes per RECORDS section; 0 = 1 MiB; else
	                             64 KiB .. PF_SECTION_MAX_RAW (-EINVAL) */
	uint32_t transform;       /* enum pf_transform_id for RECORDS sections; 0 = none.
	                             PF_TRANSFORM_COLUMNS makes files of format 1.1
	                             that 1.0 readers cannot read the records of.
	                             PF_TRANSFORM_COLUMNS_NEXT (format 1.2): every
	                             section written by pf_writer_flush() before a
	                             batch is full continues the previous RECORDS
	                             section (transform 2), until the sections of
	                             such a chain add up to records_frame_bytes of
	                             records; then a chain starts afresh with a
	                             transform 1 section. Damage then loses at most
	                             one chain, as it loses one section otherwise */
	/* since format 1.3 (a caller built with the smaller struct gets 0): */
	uint16_t min_minor;       /* the least format minor version to write in the file
	                             header: 3 for a file that will hold RUN sections and
	                             END's run table (format/pfile.md 4.10); the header gets
	                             the larger of this and what `transform` needs. Above
	                             PF_FORMAT_MINOR: -EINVAL */
};
#define PF_WRITER_OPTS_INIT { sizeof(struct pf_writer_opts), 0, 0, 0, 0, 0, 0, 0 }

/* Creates a writer on an open file descriptor (file, pipe or socket) and writes
 * the 32-byte file header at once. The writer never seeks: output is a stream,
 * except after a failed write to a regular file (ENOSPC on a full disk, EDQUOT,
 * EIO): it then cuts the file back (ftruncate(2)) to the end of its last whole
 * section, so that what stays is a valid incomplete file (format/pfile.md 5.4)
 * whatever tool wrote it; a pipe keeps what was written.
 * `fd` stays owned by the caller. `opts` may be NULL for the defaults.
 * @return 0 and *out set, or -EINVAL, -ENOMEM, or a write(2) error (-EPIPE, -ENOSPC...). */
int pf_writer_open_fd(pf_writer **out, int fd, const struct pf_writer_opts *opts);

/* Writes one whole section: `size` bytes from `raw` (copied; caller keeps ownership),
 * zstd-compressed at the writer's level when that makes it smaller, with its
 * checksum. Pending RECORDS data is flushed first, so sections keep their order.
 * `size` must be <= PF_SECTION_MAX_RAW.
 * @return 0, or -E2BIG, -ENOMEM, or a write(2) error. After a write error the
 * writer refuses further writes with the same error; what was written before
 * stays a readable file of whole sections (missing only END; a regular file is
 * cut back to its last whole section, see pf_writer_open_fd()). */
int pf_writer_section(pf_writer *w, uint16_t type, uint16_t flags, const void *raw, size_t size);

/* Appends perf records (whole records, each starting with struct
 * perf_event_header, in the recording machine's byte order) to the current
 * RECORDS batch. A batch is written as one section when it reaches
 * records_frame_bytes; a record is never split across sections.
 * @return 0, -EBADMSG if `data` does not hold whole records (a header size
 * below 8 or not a multiple of 8, or a record running past `size`), or as
 * pf_writer_section(). */
int pf_writer_records(pf_writer *w, const void *data, size_t size);

/* Writes the pending RECORDS batch, if any, as a section, and the sections
 * held back (pf_writer_hold()) when holding is off.
 * @return 0 or as pf_writer_section(). */
int pf_writer_flush(pf_writer *w);

/* With on = 1, the sections written from now on are assembled in memory
 * instead of written (their bytes are copied); with on = 0 they go out
 * together with the next section written, or at pf_writer_flush() or
 * pf_writer_close(): one writev(2) for a group of sections, so that a reader
 * at the other end of a pipe wakes once for them. The file's bytes are the
 * same either way. @return 0, -EINVAL (w NULL). */
int pf_writer_hold(pf_writer *w, int on);

/* Copies a section unchanged: `stored` holds sec->stored_size bytes exactly as
 * a file stores them (compressed as sec->compression says, e.g. from
 * pf_reader_stored()); sec->type, flags, raw_size, compression and transform
 * go into the new header, the checksum is computed again. Nothing is
 * decompressed or compressed, so the section must already be in the writer's
 * byte order (pf_reader_needs_swap() == 0 for a reader of a file written with
 * the same order). Pending RECORDS data is flushed first.
 * @return 0, -EINVAL (NULL arguments, or sizes over the format's limits), or a
 * write(2) error as pf_writer_section(). */
int pf_writer_section_stored(pf_writer *w, const struct pf_section *sec, const void *stored);

/* Bytes written to the fd so far (file header + sections). */
uint64_t pf_writer_bytes(const pf_writer *w);

/* Flushes, then frees the writer. Does not write END (the caller does, with
 * its totals) and does not close the fd. NULL is a no-op.
 * @return 0 or the first write error met. */
int pf_writer_close(pf_writer *w);

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct pf_reader pf_reader;

/* Opens `path` ("-" = standard input) and reads the file header.
 * The reader uses memory bounded by the largest section (<= 128 MiB worst
 * case under the limits, 192 MiB plus about 5 MiB of transform state for a
 * transformed section; about 3 MiB for pfrec's -g files, 20 MiB for its dwarf
 * ones), whatever the file size.
 * @return 0 and *out set; or -ENOENT etc. from open(2); -ENODATA (shorter than
 * a header); -EILSEQ (bad magic); -EPROTONOSUPPORT (future major); -EBADMSG
 * (header checksum). On error *out is still set (when not -ENOMEM) so that
 * pf_reader_errmsg() can be read; pf_reader_close() it. */
int pf_reader_open(pf_reader **out, const char *path);

/* As pf_reader_open() on an already open fd (not closed by the reader).
 * `name` is used in messages ("-" or "<stdin>" for pipes). */
int pf_reader_open_fd(pf_reader **out, int fd, const char *name);

/* The decoded file header. */
const struct pf_file_header *pf_reader_header(const pf_reader *r);

/* Reads the next section into *sec.
 * @return 1 with *sec filled; 0 at a clean end of file; or a negative code with
 * a message in pf_reader_errmsg():
 *  -EBADMSG: the section's payload is damaged (checksum mismatch, zstd error,
 *            raw size differs). Its header was intact, so the next call
 *            continues with the section after it: one bad frame loses only itself.
 *  -EBADMSG: a section header is damaged; the next call scans forward for the
 *            next intact section header and continues there (message says so).
 *  -ENODATA: the file ends inside a section header or payload (truncated).
 *  -EPROTONOSUPPORT: an unknown section type with PF_SECF_MUST_UNDERSTAND
 *            (the reader cannot continue), or a section stored with a
 *            transform this reader does not know ("unsupported transform N";
 *            that section is skipped and the reader continues).
 *  -EBADMSG: a transformed section whose payload does not decode (checksum
 *            right, content wrong); skipped, the reader continues.
 *  -EBADMSG: with pf_reader_set_stop_at_end(), bytes after the END section
 *            ("offset N: data after the END section (another file
 *            appended?): ignored"); the reader cannot continue.
 *  -EIO etc.: read(2) failed.
 * Unknown section types without that flag are returned as they are (callers skip them).
 * Transformed RECORDS are restored (sec->data holds the original records;
 * sec->transform says how they were stored). RECORDS and EVENT payloads are
 * byte-swapped to host order when the file's byte order differs. */
int pf_reader_next(pf_reader *r, struct pf_section *sec);

/* 1 if pf_reader_next() may be called again after the last error (damaged
 * section or header), 0 if the reader cannot go on (truncation, I/O error,
 * must-understand section). */
int pf_reader_can_continue(const pf_reader *r);

/* The last error's one-line message, "" if none. Owned by the reader. */
const char *pf_reader_errmsg(const pf_reader *r);

/* File offset of the first bad byte of the first damage met, or UINT64_MAX if none. */
uint64_t pf_reader_first_bad_offset(const pf_reader *r);

/* 1 once an intact END section was returned (the file is complete, format/
 * pfile.md 5.4, if the input also ends there), else 0. Since 0.2. */
int pf_reader_complete(const pf_reader *r);

/* The samples the file says it holds: the `samples` field of the intact END
 * section returned (PERF_RECORD_SAMPLE records written, all runs and events
 * together), or UINT64_MAX when none was (an incomplete file claims no
 * count). Since 0.2. */
uint64_t pf_reader_samples_claimed(const pf_reader *r);

/* The one line a tool prints, once, on standard error when its input was
 * not whole (format/pfile.md 5.4): incomplete (no END), damaged (an error
 * met), or fewer samples `used` than END claims (samples the tool could not
 * decode). Written into buf (size bytes, always NUL-terminated when size >
 * 0), without the tool's name or a newline, for example
 * "run.pf: incomplete (no END section: the recorder was stopped or the file
 * was cut short): 812 samples used" or
 * "run.pf: damaged: 950 samples used of the 1000 END counts".
 * `used` is the number of samples the caller read from the file (every
 * event, before its own filters). Call it after the last pf_reader_next().
 * @return 1 with the line written, 0 (buf "") when the file was complete
 * and every sample END claims was used (damage elsewhere, such as bytes
 * after END, is the caller's to tell), -EINVAL for r NULL. Since 0.2. */
int pf_reader_input_note(const pf_reader *r, uint64_t used, char *buf, size_t size);

/* As pf_reader_input_note() for a caller that read the file through
 * another reader or more than one pass: `name` as messages show it,
 * `complete` (an intact END read), `damaged` (any error met), `claimed`
 * (pf_reader_samples_claimed(), UINT64_MAX unknown). Same return values
 * (never -EINVAL). Since 0.2. */
int pf_input_note(const char *name, int complete, int damaged, uint64_t used, uint64_t claimed, char *buf,
		  size_t size);

/* Number of errors met so far (0 = the file was intact so far). */
unsigned pf_reader_errors(const pf_reader *r);

/* 1 if the file's kernel data is in the other byte order than the host's. */
int pf_reader_needs_swap(const pf_reader *r);

/* The name given at open ("-" for stdin). */
const char *pf_reader_name(const pf_reader *r);

/* Bytes consumed from the file so far. */
uint64_t pf_reader_offset(const pf_reader *r);

/* The stored payload (sec->stored_size bytes as in the file: a zstd frame or
 * plain bytes, never byte-swapped) of the section that the last successful
 * pf_reader_next() returned, for pf_writer_section_stored(). Owned by the
 * reader, valid until the next pf_reader_next() or pf_reader_close().
 * @return the bytes, or NULL when the last call returned no section. */
const uint8_t *pf_reader_stored(const pf_reader *r);

/* Lets a caller skip the decompression of payloads it does not need: from
 * now on a section whose type `want(arg, type)` returns 0 for is still read,
 * checksummed and returned by pf_reader_next(), but with data NULL and size 0
 * (its header fields and pf_reader_stored() as usual). EVENT payloads are
 * always decoded (the reader needs them to convert byte order). want NULL
 * (the default) decodes every payload. */
void pf_reader_set_want(pf_reader *r, int (*want)(void *arg, uint16_t type), void *arg);

/* A writer writes nothing after END (format/pfile.md 3.4), and what follows
 * it is most often another recording appended (`cat a.pf b.pf`), whose
 * string, frame and stack ids start again at 0. From now on (stop != 0), the
 * call of pf_reader_next() after an intact END section returns 0 if the
 * input ends there, else -EBADMSG naming the offset just past END, and the
 * reader stops: a tool that builds one profile from the file calls this
 * first. stop 0 (the default) reads on, as a dump does. */
void pf_reader_set_stop_at_end(pf_reader *r, int stop);

/* Exchanges the buffer that holds the payload of the last section returned
 * (sec->data, malloc'd) with the caller's *buf of *cap bytes (malloc'd, or
 * NULL and 0): afterwards *buf and *cap are that payload's buffer, now owned
 * by the caller (free() it), and the reader decodes the next payloads into
 * the buffer it was given (growing it as needed). Lets a caller keep a
 * payload past the next pf_reader_next() without copying it. An uncompressed
 * STRINGS, FRAMES, STACKS or SAMPLES payload is handed out where it lies in
 * the reader's input buffer: it is copied into the exchanged buffer first.
 * @return 0; -ENOMEM (that copy: nothing is exchanged, *buf is unchanged);
 * -EINVAL (NULL arguments). */
int pf_reader_swap_data(pf_reader *r, uint8_t **buf, size_t *cap);

/* Closes the fd if the reader opened it, frees everything. NULL is a no-op. */
void pf_reader_close(pf_reader *r);

/* ------------------------------------------------------------------------ */
/* Byte-order helpers and growable buffers (used to build section payloads)  */
/* ------------------------------------------------------------------------ */

/* A growable byte buffer. Zero-initialise it; free with pf_buf_free(). */
struct pf_buf {
	uint8_t *data;
	size_t len; /* bytes used */
	size_t cap; /* bytes allocated */
};
/* Append `n` bytes (`p` may point into b's own bytes); @return 0 or -ENOMEM. */
int pf_buf_put(struct pf_buf *b, const void *p, size_t n);
/* Append a little-endian integer; @return 0 or -ENOMEM. */
int pf_buf_put_le16(struct pf_buf *b, uint16_t v);
int pf_buf_put_le32(struct pf_buf *b, uint32_t v);
int pf_buf_put_le64(struct pf_buf *b, uint64_t v);
void pf_buf_free(struct pf_buf *b);

/* Little-endian loads/stores of unaligned bytes. */
uint16_t pf_le16(const void *p);
uint32_t pf_le32(const void *p);
uint64_t pf_le64(const void *p);
void pf_put_le16(void *p, uint16_t v);
void pf_put_le32(void *p, uint32_t v);
void pf_put_le64(void *p, uint64_t v);

/* Host byte order as enum pf_endian. */
uint8_t pf_host_endian(void);

/* ELF e_machine of the machine this library was built for (EM_X86_64 = 62,
 * EM_AARCH64 = 183, ... from <elf.h>; ELF gABI), from the compiler's target
 * macros, else read from /proc/self/exe's ELF header; 0 if unknown. */
uint16_t pf_host_e_machine(void);

/* XXH3-64 of `n` bytes (seed 0), the checksum used by the container. */
uint64_t pf_xxh3(const void *p, size_t n);

/* ------------------------------------------------------------------------ */
/* META and key/value payloads (format/pfile.md 4.1)                         */
/* ------------------------------------------------------------------------ */

/* A key/value payload is a sequence of pairs, each: u16 key length, u32 value
 * length (little-endian), key bytes, value bytes (no terminators; values may
 * hold any bytes, including newlines). Used by META, SYMINFO. */

/* Appends one pair; @return 0, -ENOMEM, or -E2BIG (key > 65535 bytes). */
int pf_kv_add(struct pf_buf *b, const char *key, const char *value);
/* Appends a pair with a formatted decimal value. */
int pf_kv_add_u64(struct pf_buf *b, const char *key, uint64_t value);

/* Iterates pairs of a key/value payload. Initialise *pos to 0.
 * @return 1 with key/value pointers into `data` (not NUL-terminated) and their
 * lengths; 0 at the end; -EBADMSG if a length runs past `size`. */
int pf_kv_next(const uint8_t *data, size_t size, size_t *pos,
	       const char **key, size_t *key_len, const char **val, size_t *val_len);

/* Finds `key` in a key/value payload and copies its value as a NUL-terminated
 * string into out[out_size] (truncated if needed).
 * @return value length (>= 0), -ENOENT if absent, -EBADMSG if malformed. */
int pf_kv_get(const uint8_t *data, size_t size, const char *key, char *out, size_t out_size);

/* ------------------------------------------------------------------------ */
/* Other section payloads (format/pfile.md 4.3-4.8)                          */
/* ------------------------------------------------------------------------ */

/* MAPS: u32 pid, u32 reserved, u64 time (ns, perf clock; 0 = before start),
 * then the raw text of /proc/PID/maps. PERFMAP (format/pfile.md 4.12) has
 * the same layout with the text of /tmp/perf-PID.map: use these two for it. */
int pf_maps_encode(struct pf_buf *out, uint32_t pid, uint64_t time, const char *text, size_t len);
/* @return 0 with pointers into `data`, -EBADMSG if shorter than 16 bytes. */
int pf_maps_decode(const uint8_t *data, size_t size, uint32_t *pid, uint64_t *time,
		   const char **text, size_t *len);

/* BUILDID: a sequence of entries, each: u8 build_id_size (<= 64), u8 reserved,
 * u16 path_len, u32 reserved, u64 file_size (bytes), u64 mtime_ns (ns since the
 * Unix epoch), build-id bytes, path bytes; the byte after build_id_size holds
 * the flags (format/pfile.md 4.5). */
#define PF_BUILDID_DELETED  0x01u /* the mapped file was deleted: `path` is as /proc
                                     showed it, " (deleted)" included; the
                                     build-id is the mapped file's own */
#define PF_BUILDID_REPLACED 0x02u /* `path` now names another file than the one
                                     mapped; the build-id (if any) is the mapped
                                     file's own, never the path's */
#define PF_BUILDID_INODE    0x04u /* the build-id was not recorded with the mapping:
                                     read later from the file at `path` on the
                                     recording machine, in the same boot, whose
                                     device and inode were the mapping's and whose
                                     change time preceded the recording
                                     (format/pfile.md 4.5; pfimport, pfsym) */
struct pf_buildid {
	uint8_t build_id[64];
	uint8_t build_id_size;   /* bytes, 0 = none found */
	uint8_t flags;           /* PF_BUILDID_*; readers ignore unknown bits */
	uint64_t file_size;      /* bytes */
	uint64_t mtime_ns;
	const char *path;        /* points into the payload, not NUL-terminated */
	size_t path_len;
};
int pf_buildid_encode(struct pf_buf *out, const struct pf_buildid *e);
/* Iterates entries; *pos starts at 0. @return 1, 0 at end, -EBADMSG. */
int pf_buildid_next(const uint8_t *data, size_t size, size_t *pos, struct pf_buildid *e);

/* DSO_IMAGE: u32 pid, u16 path_len, u8 build_id_size, u8 reserved, u64 load
 * address (where it was mapped in `pid`), build-id (build_id_size bytes),
 * path bytes, then the file's bytes to the end. */
struct pf_dso_image {
	uint32_t pid;
	uint64_t addr;
	uint8_t build_id[64];
	uint8_t build_id_size;
	const char *path; size_t path_len;     /* into the payload */
	const uint8_t *image; size_t image_size; /* into the payload */
};
int pf_dso_image_encode(struct pf_buf *out, const struct pf_dso_image *d);
int pf_dso_image_decode(const uint8_t *data, size_t size, struct pf_dso_image *d);

/* THREADS: entries of u32 pid, u32 tid, u16 comm_len, comm bytes. */
int pf_thread_encode(struct pf_buf *out, uint32_t pid, uint32_t tid, const char *comm);
int pf_thread_next(const uint8_t *data, size_t size, size_t *pos, uint32_t *pid, uint32_t *tid,
		   const char **comm, size_t *comm_len);

/* END totals (format/pfile.md 4.6). */
struct pf_end {
	uint64_t start_time;      /* ns, perf clock, first record (0 = unknown) */
	uint64_t stop_time;       /* ns, perf clock */
	uint64_t duration_ns;     /* wall time of the recording */
	uint64_t samples;         /* PERF_RECORD_SAMPLE records written */
	uint64_t lost_samples;    /* sum of PERF_RECORD_LOST.lost + LOST_SAMPLES.lost */
	uint64_t throttle_events; /* PERF_RECORD_THROTTLE records */
	uint64_t records;         /* all records written */
	uint64_t records_by_type[32]; /* indexed by PERF_RECORD_* type (< 32) */
};
/* Encodes: the first seven u64 fields in order, then u32 n (number of type
 * counts, 32), u32 reserved, then n u64 counts. Readers accept any n. */
int pf_end_encode(struct pf_buf *out, const struct pf_end *e);
int pf_end_decode(const uint8_t *data, size_t size, struct pf_end *e);

/* ------------------------------------------------------------------------ */
/* Runs (format 1.3, format/pfile.md 4.10): a recording of a command run      */
/* several times (pfrec --repeat N)                                           */
/* ------------------------------------------------------------------------ */

/* HowTo. A writer writes a RUN section (pf_run_mark_encode()) before the
 * first record of each run, with the perf-clock time at which the run began,
 * and appends the run table to END (pf_end_encode(), then
 * pf_end_runs_encode()). Run k spans the perf-clock times
 * [start_time of k, start_time of k+1); the last run has no upper bound and
 * samples before the first run's start belong to run 1. A reader assigns a
 * sample to a run by its time alone: pf_run_of() with the starts of the RUN
 * sections read so far (a RUN section precedes every record of its run, and
 * a resolved profile's SAMPLES never come before the RUN section of their
 * run, so a reader that streams the file knows each sample's run when it
 * meets it). Runs are numbered from 1. */

/* The RUN section's payload (*LE*): u32 run, u32 reserved (0), u64
 * start_time. Readers ignore bytes after them (later minor versions). */
struct pf_run_mark {
	uint32_t run;             /* 1, 2, ...: the run that begins */
	uint64_t start_time;      /* perf-clock ns when it began (before its command ran) */
};
/* @return 0, or -ENOMEM. */
int pf_run_mark_encode(struct pf_buf *out, const struct pf_run_mark *m);
/* @return 0, or -EBADMSG when `size` < 16 or `run` is 0. */
int pf_run_mark_decode(const uint8_t *data, size_t size, struct pf_run_mark *m);

/* One entry of END's run table. `sz` must be sizeof(struct pf_run) (set by
 * PF_RUN_INIT): a caller compiled against an older header, with a smaller
 * struct, gets the fields it knows. */
struct pf_run {
	size_t sz;
	uint64_t start_time;      /* perf-clock ns when the run began (as its RUN section) */
	uint64_t stop_time;       /* perf-clock ns when its command had ended and its
	                             records were written */
	uint64_t duration_ns;     /* wall-clock ns of the run */
	uint64_t samples;         /* PERF_RECORD_SAMPLE records of the run */
	uint64_t lost_samples;    /* samples lost in the run (as END's lost_samples) */
	int32_t exit_status;      /* the command's exit status as a shell shows it:
	                             0-255, or 128+N when signal N ended it; -1 unknown */
};
#define PF_RUN_INIT { sizeof(struct pf_run), 0, 0, 0, 0, 0, -1 }

/* Appends the run table (u32 n, u32 entry_size = 48, then n entries) to an
 * END payload that pf_end_encode() just wrote into `out`.
 * @return 0, -EINVAL (a `sz` of 0 or larger than this library's struct), or -ENOMEM. */
int pf_end_runs_encode(struct pf_buf *out, const struct pf_run *runs, uint32_t n);
/* The number of runs in an END payload's run table into *n (0 when the
 * payload has none: a file of format 1.2 or earlier, or a single recording).
 * @return 0, or -EBADMSG when the END payload or its table is damaged. */
int pf_end_runs_count(const uint8_t *data, size_t size, uint32_t *n);
/* Entry `i` (0-based; run i+1) of the run table into *r (r->sz set by the
 * caller). @return 0, -EINVAL (i out of range, bad r->sz), or -EBADMSG. */
int pf_end_run(const uint8_t *data, size_t size, uint32_t i, struct pf_run *r);

/* The run (1-based) of a sample taken at perf-clock time `time`, given the
 * start times of runs 1..n (`starts[k-1]` for run k, ascending): the last
 * run whose start is at or before `time`, or 1 when `time` precedes them
 * all; 0 when n is 0 (a file without runs). */
uint32_t pf_run_of(const uint64_t *starts, uint32_t n, uint64_t time);

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

/* The release of libpfile (and of the tools built with it) as a static
 * string, "0.1.0": the Makefile's VERSION, the one place it is written. */
const char *pf_version(void);

/* What a section type says of a file (format/profile.md 1): 1 for a section
 * of a resolved profile that marks a file as symbolized when it comes before
 * the first RECORDS section (SYMINFO, SAMPLES, STRINGS), -1 for RECORDS (a
 * raw recording, unless one of those came first), 0 for the others. Every
 * reader that must tell a symbolized file from a raw one decides so, from the
 * first section that is not 0. */
int pf_section_resolved_mark(uint16_t type);

#ifdef __cplusplus
}
#endif

/* records.h was part of this header before the headers had a folder: a
 * program that includes "pfile.h" alone still finds the record decoders. */
#include "records.h"

#endif /* PFILE_H */
