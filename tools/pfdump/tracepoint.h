/*
 * pfdump/tracepoint.h - the description pfrec appends to an EVENT section
 * (format/pfile.md 4.2.1) and the raw data of tracepoint samples decoded
 * with the tracepoint's format file stored there (pfdump-private).
 *
 * The format file is the kernel's tracefs events/SUBSYS/NAME/format
 * (Documentation/trace/events.rst): lines
 *   field:TYPE NAME[N];	offset:O;	size:S;	signed:0|1;
 * give each field of the record that PERF_SAMPLE_RAW carries.
 */
#ifndef PFDUMP_TRACEPOINT_H
#define PFDUMP_TRACEPOINT_H

#include <stddef.h>
#include <stdint.h>

/* The key/value description after an EVENT payload's name, or NULL (*len 0)
 * when the payload has none (files of older pfrec). `payload` is the EVENT
 * payload as pf_reader_next() hands it out, `size` its bytes. */
const uint8_t *pfd_event_desc(const uint8_t *payload, size_t size, size_t *len);

enum pfd_tp_kind {
	PFD_TP_SIGNED,   /* a signed integer of 1, 2, 4 or 8 bytes: v.s */
	PFD_TP_UNSIGNED, /* unsigned: v.u */
	PFD_TP_POINTER,  /* a pointer (TYPE has '*'): v.u, shown in hex */
	PFD_TP_STRING,   /* char[N], __data_loc char[], __rel_loc char[]: str, len (up to the NUL) */
	PFD_TP_BYTES,    /* anything else: str holds the field's bytes, len of them */
};

struct pfd_tp_field {
	char name[64];
	uint32_t offset, size;   /* bytes, in the raw record */
	int is_signed;
	int is_pointer;
	int is_char;             /* TYPE names char (strings) */
	int array;               /* NAME[N] */
	int loc;                 /* 0 plain, 1 __data_loc, 2 __rel_loc (u32: length << 16 | offset) */
};

struct pfd_tp {
	char name[128];          /* "sched_switch", from the "name:" line */
	int n;
	struct pfd_tp_field *f;  /* the fields after the common_ ones, in order */
};

/* Parses a format file's text (len bytes, need not end in NUL).
 * @return 0, -EBADMSG (no field line), -ENOMEM. Free with pfd_tp_free(). */
int pfd_tp_parse(const char *text, size_t len, struct pfd_tp *out);
void pfd_tp_free(struct pfd_tp *tp);

/* Calls emit() for each field of a raw record (n bytes) in order. A field
 * that runs past the record ends the walk. @return the fields emitted, or
 * -EBADMSG when one ran past the record. */
typedef void (*pfd_tp_emit)(void *ctx, const char *name, enum pfd_tp_kind kind, int64_t s, uint64_t u,
			    const char *str, size_t len);
int pfd_tp_decode(const struct pfd_tp *tp, const uint8_t *raw, size_t n, pfd_tp_emit emit, void *ctx);

#endif
