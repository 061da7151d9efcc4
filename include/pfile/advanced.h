/*
 * pfile/advanced.h - libpfile: what a program needs only when it handles
 * the library's internals itself. NO ABI PROMISE: the structures and
 * functions here may change in any release, also in a minor one, and a
 * program that uses them must be built against the exact libpfile it runs
 * with (link it statically, as pftools' tests and fuzz targets do).
 *
 *  - the RECORDS transforms (format/pfile.md 3.6): the writer and the reader
 *    use them; a program never needs them to read or write a file;
 *  - the structures behind the opaque types of the other headers (struct
 *    pf_events, struct pf_maps, struct pf_prof), so that tests can place
 *    them on the stack and look at their tables; their _init and _free
 *    functions handle such a struct's contents.
 *
 * Test hooks: the environment variable PF_TX_SLOW (any value) makes the
 * transform decoder take its generic path for every record, so that tests
 * can compare it with the fast path (tests/c/tx-cross.c).
 */
#ifndef PFILE_ADVANCED_H
#define PFILE_ADVANCED_H

#include <stddef.h>
#include <stdint.h>
#include "pfile.h"
#include "records.h"
#include "maps.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* RECORDS transforms 1 and 2, "columns" (format/pfile.md 3.6)              */
/* ------------------------------------------------------------------------ */

/* The writer and the reader use these; tools never need them (the reader
 * hands out restored records). They are public for tests and for programs
 * that handle stored payloads themselves.
 *
 * A pf_tx holds the events of a file (in EVENT section order) and the
 * per-thread state of one section's coding. Memory: about 60 KiB, plus 64 KiB
 * of scratch on the first decode and 128 KiB on the first encode, up to 64
 * kept stack copies and call chains (<= 65528 and 8192 bytes each; the
 * decoder keeps them from the end of a section for the next one), plus the
 * streams of the last encoded section (about its raw size). */
typedef struct pf_tx pf_tx;

/* Creates a coder. `e_machine` (ELF machine of the recorded machine) picks
 * the stack-pointer register the encoder aligns stack copies by; the decoder
 * reads it from each payload. @return 0, -EINVAL, -ENOMEM. */
int pf_tx_new(pf_tx **out, uint16_t e_machine);

/* Frees a coder; NULL is a no-op. */
void pf_tx_free(pf_tx *t);

/* Adds the next EVENT section's payload (`size` bytes, host order, as
 * pf_reader_next() hands it out). Every call takes the next event index, even
 * when the payload is malformed (-EBADMSG: samples of that event are then
 * stored verbatim by the encoder and refused by the decoder). Events after the
 * 255th are not used. @return 0, -EBADMSG, -ENOMEM, -EINVAL. */
int pf_tx_add_event(pf_tx *t, const uint8_t *data, size_t size);

/* Transforms one RECORDS payload (`size` bytes of whole records in the
 * recording machine's byte order; `swap` = 1 when that is not the host's)
 * into out (reset, then filled; caller frees with pf_buf_free()). The output
 * is at most about size * 1.13 + 76 bytes. @return 0, -EBADMSG (not whole
 * records), -ENOMEM, -E2BIG. */
int pf_tx_encode(pf_tx *t, int swap, const uint8_t *raw, size_t size, struct pf_buf *out);

/* As pf_tx_encode(), but the coding starts from the state the previous
 * successful pf_tx_encode() or pf_tx_encode_next() on `t` left, for a
 * transform 2 section (format/pfile.md 3.6.7) that follows that one.
 * @return as pf_tx_encode(); -EINVAL also when the previous call on `t` was
 * not a successful encode. */
int pf_tx_encode_next(pf_tx *t, int swap, const uint8_t *raw, size_t size, struct pf_buf *out);

/* Restores a transformed payload (`n` bytes at `in`) into out[raw_size]
 * (records in the recording machine's byte order). Never reads or writes
 * outside the buffers and allocates at most the bounded per-thread state,
 * whatever the input. @return 0; -EBADMSG with *why set to a static
 * one-line reason when the payload is malformed, refers to an undefined
 * event, does not restore exactly raw_size bytes, or fails its checksum;
 * -ENOMEM (its scratch, on the first call); -EINVAL. */
int pf_tx_decode(pf_tx *t, int swap, const uint8_t *in, size_t n, uint8_t *out, size_t raw_size,
		 const char **why);

/* As pf_tx_decode(), for a transform 2 payload: the coding continues from the
 * state the previous successful pf_tx_decode() or pf_tx_decode_next() on `t`
 * left (after a success the coder keeps copies of the threads' last call
 * chains and stack copies, at most 64 x (8 KiB + 64 KiB), so `out` of the
 * previous call may be reused). @return as pf_tx_decode(); -EBADMSG with
 * *why set when the previous call on `t` was not a successful decode (the
 * section it continues was damaged, skipped or not transformed). */
int pf_tx_decode_next(pf_tx *t, int swap, const uint8_t *in, size_t n, uint8_t *out, size_t raw_size,
		      const char **why);

/* ------------------------------------------------------------------------ */
/* The structures behind the opaque types                                    */
/* ------------------------------------------------------------------------ */

/* struct pf_events (records.h). Zero it, then pf_events_add(); free its
 * contents with pf_events_free(). */
struct pf_events {
	struct pf_event *ev;
	uint32_t n;
	uint32_t cap;
	/* id -> event lookup (open addressing) */
	uint64_t *id_keys;
	uint32_t *id_vals;
	uint32_t id_cap;
	uint32_t id_n;
};

/* Frees what pf_events_add() allocated; the struct can be reused zeroed. */
void pf_events_free(struct pf_events *evs);

/* A process created by another one (PERF_RECORD_FORK). */
struct pf_maps_kid {
	uint32_t pid;
	uint64_t time;           /* ns, perf clock */
};

struct pf_maps_proc {
	uint32_t pid;
	uint32_t n, cap;
	struct pf_map *maps;     /* sorted by start */
	uint64_t *max_end;       /* max_end[i] = max(maps[0..i].end) */
	uint32_t gen;            /* changes whenever the timeline of pid changes */
	uint32_t bounds_gen;     /* gen for which `bounds` was built */
	uint32_t n_bounds, cap_bounds;
	uint64_t *bounds;        /* sorted distinct t_start/t_end values (ns) */
	uint64_t *execs;         /* times of its execs (ns), sorted */
	uint32_t n_execs, cap_execs;
	struct pf_maps_kid *kids; /* processes it forked */
	uint32_t n_kids, cap_kids;
};

/* struct pf_maps (maps.h). Zero it or pf_maps_init() it; pf_maps_free()
 * frees its contents (not the `user` pointers of DSOs). */
struct pf_maps {
	struct pf_maps_proc *procs;
	uint32_t n_procs, cap_procs;
	uint32_t *proc_hash;     /* open addressing, pid -> index+1 */
	uint32_t proc_hash_cap;
	struct pf_dso *dsos;
	uint32_t n_dsos, cap_dsos;
	uint32_t *dso_hash;      /* (path, build-id) -> id+1 */
	uint32_t dso_hash_cap;
	/* path -> build-id from BUILDID sections, for mappings without one */
	struct pf_maps_bid { char *path; uint32_t path_len; uint8_t size, flags; uint8_t id[64]; } *bids;
	uint32_t n_bids, cap_bids;
	uint32_t gen_next;       /* last timeline generation handed out */
	/* pf_maps_time_key()'s last answer: valid while gen_next is tk_gen
	 * (no timeline changed), for tk_pid and times in [tk_lo, tk_hi) */
	uint32_t tk_pid, tk_gen;
	int tk_ok;
	uint64_t tk_lo, tk_hi, tk_key;
};

void pf_maps_init(struct pf_maps *m);
void pf_maps_free(struct pf_maps *m);

/* struct pf_prof (profile.h). Zero it or pf_prof_init() it; pf_prof_free()
 * frees its contents. */
struct pf_prof {
	char *blob;           /* string bytes, each NUL-terminated */
	size_t blob_len, blob_cap;
	uint64_t *str_off;    /* offset of string i in blob */
	uint32_t *str_len;    /* bytes of string i (no NUL) */
	uint32_t n_str, cap_str;
	struct pf_prof_frame *frames;
	uint32_t n_frames, cap_frames;
	struct pf_prof_stack *stacks;
	uint32_t n_stacks, cap_stacks;
	/* interning hashes (id+1; 0 = empty), built lazily by the intern calls */
	uint32_t *str_hash, *frame_hash, *stack_hash;
	uint32_t str_hash_cap, frame_hash_cap, stack_hash_cap;
	/* how many entries of each table were encoded by pf_prof_encode_tables() */
	uint32_t enc_str, enc_frames, enc_stacks;
};

void pf_prof_init(struct pf_prof *p);
void pf_prof_free(struct pf_prof *p);

#ifdef __cplusplus
}
#endif
#endif /* PFILE_ADVANCED_H */
