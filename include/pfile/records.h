/*
 * pfile/records.h - libpfile: the perf records of a recording.
 *
 * A RECORDS section holds perf records exactly as the kernel wrote them into
 * its ring buffers (include/uapi/linux/perf_event.h, enum perf_event_type);
 * which fields a PERF_RECORD_SAMPLE holds, and whether other records end in
 * a sample_id trailer, depends on the perf_event_attr of its event (an EVENT
 * section). This header is what a program needs to read records:
 *
 *    struct pf_events *evs; pf_events_new(&evs);
 *    for every EVENT section: pf_events_add(evs, &sec);
 *    for every record of a RECORDS section (pf_rec_iter_next()):
 *        const struct pf_event *ev = pf_events_find(evs, h);
 *        switch (h->type) {
 *        case PERF_RECORD_SAMPLE: pf_sample_decode(ev, h, &s); ...
 *        case PERF_RECORD_MMAP2:  pf_mmap_decode(ev, h, &m); ...
 *        }
 *    pf_events_delete(evs);
 *
 * Errors are negative errno values (pfile.h); sizes and offsets are in bytes,
 * times in nanoseconds of the recording's perf clock.
 */
#ifndef PFILE_RECORDS_H
#define PFILE_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "pfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* EVENT sections (format/pfile.md 4.2)                                      */
/* ------------------------------------------------------------------------ */

/* One event (an EVENT section decoded). `attr` is in host order and zero-filled
 * past the size stored in the file (or cut to this header's size: trailing
 * fields beyond config3 (PERF_ATTR_SIZE_VER8, 136 bytes) must be zero for
 * decoding to be exact, else -EPROTONOSUPPORT). */
struct pf_event {
	struct perf_event_attr attr;
	uint32_t attr_size;     /* the size stored in the file */
	uint32_t index;         /* order of its EVENT section, from 0 */
	uint32_t n_ids;
	uint64_t *ids;          /* sample ids (PERF_FORMAT_ID / IDENTIFIER values), owned */
	char name[128];         /* human name: "cpu-clock", "cycles" ... */
	uint64_t config3;       /* attr bytes 128-135 (config3, Linux 6.3+), 0 when the
				   file's attr is shorter; set also where this system's
				   <linux/perf_event.h> has no config3 field (Linux < 6.3 headers) */
};

/* Encodes an EVENT payload (format/pfile.md 4.2): u32 attr_size, u32 n_ids,
 * u16 name_len, u16 reserved, then attr (attr_size bytes, in the recording
 * machine's byte order; pfrec passes host order), ids (n_ids u64, recording
 * machine's order), name bytes. @return 0 or -ENOMEM. */
int pf_event_encode(struct pf_buf *out, const struct perf_event_attr *attr, uint32_t attr_size,
		    const uint64_t *ids, uint32_t n_ids, const char *name);

/* As pf_event_encode(), with the attr given as `attr_size` bytes at `attr`
 * (all of them readable): for an attr longer than this system's struct
 * perf_event_attr, such as one with config3 (136 bytes) built against Linux
 * headers older than 6.3, whose fields past the struct pf_event_encode()
 * would write as zeros. @return 0, -EINVAL (attr_size < 64, NULL pointers) or -ENOMEM. */
int pf_event_encode_bytes(struct pf_buf *out, const void *attr, uint32_t attr_size, const uint64_t *ids,
			  uint32_t n_ids, const char *name);

/* Swaps an EVENT payload in place (the attr and ids) to host order.
 * @return 0, -EBADMSG (lengths run past the payload). */
int pf_event_payload_swap(uint8_t *data, size_t size);

/* The set of events of a file, for finding the event that describes a
 * record. Opaque (its id lookup table is internal; advanced.h has it). */
struct pf_events;

/* A new, empty set. @return 0 and *out set, or -ENOMEM. */
int pf_events_new(struct pf_events **out);

/* Frees the set and its events; NULL is a no-op. */
void pf_events_delete(struct pf_events *evs);

/* Adds the event in an EVENT section (payload already in host order, as
 * pf_reader_next() hands it out; only sec->data and sec->size are read).
 * Pointers from pf_events_get() and pf_events_find() stay valid until the
 * next call. @return 0, -EBADMSG (lengths run past the payload or attr_size <
 * PERF_ATTR_SIZE_VER0), -EPROTONOSUPPORT (attr fields past this header's
 * struct are set), -ENOMEM. */
int pf_events_add(struct pf_events *evs, const struct pf_section *sec);

/* Number of events added. */
uint32_t pf_events_count(const struct pf_events *evs);

/* The event of index i (its EVENT section's order), or NULL if i >= count. */
const struct pf_event *pf_events_get(const struct pf_events *evs, uint32_t i);

/* 1 if the samples of `ev` carry a group read (perf's leader sampling,
 * {A,B}:S: PERF_SAMPLE_READ with PERF_FORMAT_GROUP and PERF_FORMAT_ID in
 * the attr, include/uapi/linux/perf_event.h), else 0 (also for NULL). The
 * sample builder (build.h) weighs each member's sample by what its counter
 * counted since that counter's previous sample: the periods then include
 * what lost samples would have held, and a lost sample weighs no period. */
int pf_event_reads_group(const struct pf_event *ev);

/* The event a host-order record belongs to: by its sample id (IDENTIFIER) when
 * the events carry PERF_SAMPLE_IDENTIFIER, else the first event. NULL if the
 * file has no event. For non-sample records without sample_id_all, the first event. */
const struct pf_event *pf_events_find(const struct pf_events *evs, const struct perf_event_header *rec);

/* ------------------------------------------------------------------------ */
/* Iteration and byte order                                                  */
/* ------------------------------------------------------------------------ */

/* Iterator over whole perf records in a RECORDS payload. */
struct pf_rec_iter {
	const uint8_t *p, *end;
	size_t offset;          /* byte offset of the next record in the payload */
};
void pf_rec_iter_init(struct pf_rec_iter *it, const void *data, size_t size);
/* @return 1 with *rec pointing at the next record (8-byte header + body,
 * rec->size bytes, all within the payload); 0 at the end; -EBADMSG when a
 * header's size is < 8, not a multiple of 8 (the kernel pads records to 8
 * bytes), or runs past the payload (the rest is lost; it->offset says where). */
int pf_rec_iter_next(struct pf_rec_iter *it, const struct perf_event_header **rec);

/* Swaps every record in a RECORDS payload in place from the other byte order
 * to host order, field by field as each record type lays them out (u32/u64
 * fields swapped, strings and raw bytes left as they are, callchains and regs
 * swapped as u64). Needs the events to know sample_type/read_format.
 * @return 0 or -EBADMSG (a record's size field is inconsistent: the payload
 * after it is left unswapped). */
int pf_records_swap(const struct pf_events *evs, uint8_t *data, size_t size);

/* "SAMPLE", "MMAP2", "COMM", ... for a PERF_RECORD_* type, or NULL if unknown. */
const char *pf_record_type_name(uint32_t type);

/* The time of any record: the sample's TIME or the trailer's, or 0 if it has none. */
uint64_t pf_record_time(const struct pf_event *ev, const struct perf_event_header *rec);

/* ------------------------------------------------------------------------ */
/* PERF_RECORD_SAMPLE and the sample_id trailer                              */
/* ------------------------------------------------------------------------ */

/* The fields of a PERF_RECORD_SAMPLE, decoded in the kernel's order for every
 * sample_type bit. Pointers point into the record (host order). `present` holds
 * the sample_type bits that were decoded. */
struct pf_sample {
	uint64_t present;        /* sample_type of the event */
	uint64_t id;             /* IDENTIFIER or ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;           /* ns, perf clock */
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu, cpu_res;
	uint64_t period;         /* events (e.g. ns for cpu-clock) */
	const uint64_t *read;    /* PERF_SAMPLE_READ values, read_size u64s */
	uint32_t read_size;      /* number of u64 */
	uint64_t callchain_nr;
	const uint64_t *callchain; /* callchain_nr entries, PERF_CONTEXT_* markers kept */
	uint32_t raw_size;
	const uint8_t *raw;
	uint64_t branch_nr;
	uint64_t branch_hw_idx;  /* only if attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX */
	const struct perf_branch_entry *branch;
	uint64_t user_regs_abi;  /* PERF_SAMPLE_REGS_ABI_* */
	uint64_t user_regs_mask; /* attr.sample_regs_user */
	const uint64_t *user_regs; /* popcount(mask) values when abi != 0 */
	uint64_t user_stack_size; /* bytes copied (the size field) */
	const uint8_t *user_stack;
	uint64_t user_stack_dyn_size; /* bytes of it that are valid */
	uint64_t weight;         /* WEIGHT, or WEIGHT_STRUCT's full u64 */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t intr_regs_abi;
	uint64_t intr_regs_mask;
	const uint64_t *intr_regs;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const uint8_t *aux;
};

/* The compiled layout of one event's PERF_RECORD_SAMPLE (a "plan"): where
 * each fixed-position field lies and what sizes the variable ones. The
 * fields up to PERIOD always sit at the same offsets for one sample_type;
 * READ (with PERF_FORMAT_GROUP), CALLCHAIN, RAW, BRANCH_STACK, the register
 * sets, STACK_USER and AUX vary per record, and everything after the first
 * of them is found by walking (include/uapi/linux/perf_event.h, enum
 * perf_event_type, PERF_RECORD_SAMPLE; the kernel's perf_output_sample()
 * order). Compile it once per event with pf_sample_plan_compile(); every
 * decoder of pftools reads samples through one. Plain data: copy it freely. */
struct pf_sample_plan {
	uint64_t sample_type;        /* attr.sample_type it was compiled for */
	uint64_t read_format;        /* attr.read_format (sizes READ) */
	uint64_t branch_sample_type; /* attr.branch_sample_type (HW_INDEX, COUNTERS) */
	uint64_t regs_user, regs_intr; /* attr.sample_regs_user / _intr (size the register sets) */
	/* byte offsets from the start of the record (its 8-byte header
	 * included) of the fixed-position fields, -1 when absent; tid and cpu
	 * are two u32 each (pid, tid / cpu, reserved) */
	int16_t identifier, ip, tid, time, addr, id, stream_id, cpu, period;
	uint16_t fixed_end;  /* bytes of the header and the fixed-position fields */
	uint16_t read_bytes; /* READ's size when it is fixed (no PERF_FORMAT_GROUP), else 0 */
	int16_t callchain;   /* offset of CALLCHAIN's nr when nothing of variable size
				precedes it, else -1 (also when absent) */
	uint8_t tail;        /* 1 if a field follows CALLCHAIN (RAW ... AUX) */
	uint8_t reserved[5];
};

/* Compiles the plan of samples of an event opened with `attr` into *plan
 * (sizes from sample_type, read_format, branch_sample_type and the register
 * masks; nothing else is read). Unknown sample_type bits are kept in
 * plan->sample_type; pf_sample_plan_decode() ignores them, as the sequential
 * reading of perf_event.h's order does. No errors. */
void pf_sample_plan_compile(struct pf_sample_plan *plan, const struct perf_event_attr *attr);

/* Decodes a host-order PERF_RECORD_SAMPLE by a compiled plan, as
 * pf_sample_decode() does (which compiles the event's plan on each call).
 * @return 0, -EINVAL (NULL pointers, rec->size < 8) or -EBADMSG if a field or
 * an array runs past rec->size (nothing past the record is ever read). */
int pf_sample_plan_decode(const struct pf_sample_plan *plan, const struct perf_event_header *rec,
			  struct pf_sample *out);

/* Decodes a host-order PERF_RECORD_SAMPLE described by `ev`.
 * @return 0, or -EBADMSG if a field or an array runs past rec->size (nothing
 * past the record is ever read). */
int pf_sample_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_sample *out);

/* The sample_id_all trailer of a non-sample record (pid/tid, time, id,
 * stream_id, cpu as selected by sample_type). */
struct pf_sample_id {
	uint64_t present;       /* sample_type bits present in the trailer */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu, cpu_res;
};

/* Size in bytes of the sample_id trailer for `ev` (0 without sample_id_all). */
size_t pf_sample_id_size(const struct pf_event *ev);

/* Decodes the trailer of a non-sample record. @return 0 (out->present = 0 if
 * the event has no sample_id_all), -EBADMSG if the record is too short. */
int pf_sample_id_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_sample_id *out);

/* Decoders of the non-sample records pftools reads, one per record kind, after
 * the struct layouts documented in enum perf_event_type
 * (include/uapi/linux/perf_event.h). Common rules:
 *  - `rec` is a whole host-order record (rec->size bytes), as pf_rec_iter_next()
 *    hands them out of a pf_reader_next() payload, or as the kernel writes
 *    them into a ring buffer on this machine;
 *  - `ev` is the record's event (pf_events_find()) or NULL: its
 *    pf_sample_id_size() trailer bytes at the end of the record are not part of
 *    the body (NULL: no trailer, the body runs to rec->size);
 *  - pointers in `out` point into the record (valid while it is);
 *  - @return 0; -EINVAL if `rec` is not of the kind the decoder reads (or a
 *    pointer is NULL); -EBADMSG if the fixed fields or the trailer do not fit in
 *    rec->size, or a string has no NUL before the trailer. On error `out` is
 *    zeroed. Nothing past rec->size is read. Sizes and offsets are in bytes. */

/* PERF_RECORD_MMAP and PERF_RECORD_MMAP2 (header.misc: PERF_RECORD_MISC_USER,
 * _KERNEL, _MMAP_DATA, _MMAP_BUILD_ID). */
struct pf_mmap {
	uint32_t pid, tid;        /* pid UINT32_MAX (-1): kernel maps */
	uint64_t addr;            /* start address of the mapping */
	uint64_t len;             /* bytes */
	uint64_t pgoff;           /* file offset of `addr`, in bytes (not pages) */
	uint8_t mmap2;            /* 1 for MMAP2: the fields below are set */
	uint8_t has_build_id;     /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID:
				   * build_id*, else maj, min, ino, ino_generation */
	uint8_t build_id_size;    /* bytes, as stored (the kernel writes <= 20;
				   * a larger value is kept: callers clamp) */
	uint8_t build_id[20];     /* the record's 20 build-id bytes */
	uint32_t maj, min;        /* device numbers */
	uint64_t ino, ino_generation;
	uint32_t prot, flags;     /* PROT_*, MAP_* (MMAP2 only) */
	const char *filename;     /* into the record, NUL-terminated there */
	size_t filename_len;      /* bytes before the NUL */
};
int pf_mmap_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_mmap *out);

/* PERF_RECORD_COMM: u32 pid, tid, char comm[] (NUL-terminated, padded to 8). */
struct pf_comm {
	uint32_t pid, tid;
	const char *comm;         /* into the record, NUL-terminated there */
	size_t comm_len;          /* bytes before the NUL */
	uint8_t exec;             /* header.misc has PERF_RECORD_MISC_COMM_EXEC */
};
int pf_comm_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_comm *out);

/* PERF_RECORD_FORK and PERF_RECORD_EXIT: u32 pid, ppid, tid, ptid, u64 time. */
struct pf_task {
	uint32_t pid, ppid;       /* process and parent process */
	uint32_t tid, ptid;       /* thread and parent thread */
	uint64_t time;            /* ns, perf clock (the event's clock) */
};
int pf_task_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_task *out);

/* PERF_RECORD_LOST (u64 id, u64 lost: records the kernel dropped for a full
 * ring) and PERF_RECORD_LOST_SAMPLES (u64 lost: samples dropped, e.g. by BPF). */
struct pf_lost {
	uint64_t id;              /* event id (LOST only; 0 for LOST_SAMPLES) */
	uint64_t lost;            /* records (LOST) or samples (LOST_SAMPLES) */
};
int pf_lost_decode(const struct pf_event *ev, const struct perf_event_header *rec, struct pf_lost *out);

/* PERF_RECORD_THROTTLE and PERF_RECORD_UNTHROTTLE: u64 time, id, stream_id. */
struct pf_throttle {
	uint64_t time;            /* ns, perf clock */
	uint64_t id;              /* event id */
	uint64_t stream_id;
};
int pf_throttle_decode(const struct pf_event *ev, const struct perf_event_header *rec,
		       struct pf_throttle *out);


#ifdef __cplusplus
}
#endif
#endif /* PFILE_RECORDS_H */
