/*
 * pfile/profile.h - libpfile: the resolved profile (pfsym's output sections)
 * and the rules that show its frames.
 *
 * A resolved profile is a set of interned tables appended to a recording
 * (format/profile.md): STRINGS, FRAMES, STACKS, SAMPLES and SYMINFO sections,
 * types 0x0100-0x0104. Ids are dense and global across chunks: the first
 * STRINGS chunk defines strings 0..n-1, the next continues at n, and so on.
 * Every chunk is written before the first section that refers to its ids, so
 * a reader builds the tables as it streams.
 *
 * struct pf_prof holds the tables in memory (opaque; advanced.h has it):
 * intern strings, frames and stack nodes, read them back by id, encode and
 * decode their sections. The stages that fill and read them have headers of
 * their own: build.h (raw records -> samples), fold.h (folded stacks), and
 * libpfsym's sym.h (names from ELF files, unwinding, resolved stacks).
 *
 * Errors are negative errno values as in pfile.h; messages come from the
 * functions that take an errmsg buffer.
 */
#ifndef PFILE_PROFILE_H
#define PFILE_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include "pfile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PF_PROF_NONE UINT32_MAX /* "no id" in every table reference */

/* Frame flags (format/profile.md 3.2). */
#define PF_FRAME_KERNEL     0x01u /* kernel address; name may be NONE: shown "[kernel]" */
#define PF_FRAME_UNRESOLVED 0x02u /* the DSO is known, the symbol is not: "[dso+0xoff]" */
#define PF_FRAME_MISMATCH   0x04u /* the binary found has another build-id than recorded */
#define PF_FRAME_UNKNOWN    0x08u /* no mapping holds the address: "[unknown]" */
#define PF_FRAME_INLINE     0x10u /* a function inlined at this address (format 1.2):
				   * its depth is PF_FRAME_DEPTH(flags) */
#define PF_FRAME_HAS_ADDR   0x20u /* `addr` holds the ELF virtual address */
#define PF_FRAME_TRUNCATED  0x40u /* not code: the root of a stack whose call chain a
				   * depth limit cut, named "[truncated]" */
#define PF_FRAME_HAS_SYMOFF 0x80u /* `sym_off` holds the offset in the named function
				   * (profile format 1.1; files of 1.0 never set it) */

/* The inline depth of a PF_FRAME_INLINE frame (format/profile.md 3.2,
 * format 1.2): flag bits 8-15, 1 for a function inlined directly into the
 * outer (real) function, 2 for one inlined into that, and so on (at most
 * 255); 0 in every other frame. */
#define PF_FRAME_DEPTH_SHIFT 8
#define PF_FRAME_DEPTH_MASK  0xff00u
#define PF_FRAME_DEPTH(flags) (((flags) & PF_FRAME_DEPTH_MASK) >> PF_FRAME_DEPTH_SHIFT)

/* Sample flags. */
#define PF_SAMPLE_LOST 0x01u /* not a sample: `period` samples were lost here */

/* One frame: a code address in a DSO, with what is known of it. */
struct pf_prof_frame {
	uint32_t name;      /* string id of the function name, or NONE */
	uint32_t dso;       /* string id of the DSO path as recorded, or NONE */
	uint64_t file_off;  /* byte offset in the DSO file (kernel: the address) */
	uint64_t addr;      /* ELF virtual address (if PF_FRAME_HAS_ADDR), else 0 */
	uint32_t flags;     /* PF_FRAME_* */
	uint32_t src_file;  /* string id of the source file, or NONE */
	uint32_t line;      /* source line, 0 = unknown */
	uint32_t sym_off;   /* bytes from the start of the function symbol `name` to
			     * `addr` (if PF_FRAME_HAS_SYMOFF), else 0; added in
			     * profile format 1.1 (format/profile.md 3.1) */
};

/* One stack node: stacks are a tree (a trie of call paths). A sample's stack
 * is a leaf node; its frames are read by following `parent` to the root
 * (NONE). `parent` is always a smaller id than the node's own. */
struct pf_prof_stack {
	uint32_t parent;    /* stack id of the caller's node, or NONE at the root */
	uint32_t frame;     /* frame id of this node */
};

/* One sample (or one LOST entry). */
struct pf_prof_sample {
	uint64_t time;      /* ns, perf clock */
	uint64_t period;    /* events (ns for cpu-clock); for LOST: samples lost */
	uint32_t pid, tid, cpu;
	uint32_t stack;     /* leaf stack node, or NONE (no frames) */
	uint32_t comm;      /* string id of the thread's name, or NONE */
	uint16_t event;     /* index of the EVENT section (0-based, file order) */
	uint16_t flags;     /* PF_SAMPLE_* */
};

/* The tables: opaque. */
struct pf_prof;

/* New, empty tables. @return 0 and *out set, or -ENOMEM. */
int pf_prof_new(struct pf_prof **out);

/* Frees the tables; NULL is a no-op. */
void pf_prof_delete(struct pf_prof *p);

/* Number of entries of each table: strings, frames, stack nodes. Ids of a
 * table run from 0 to its count - 1. */
uint32_t pf_prof_n_strings(const struct pf_prof *p);
uint32_t pf_prof_n_frames(const struct pf_prof *p);
uint32_t pf_prof_n_stacks(const struct pf_prof *p);

/* The frame or stack node with id `id` (owned by p, valid until the next
 * call that adds to its table), or NULL if out of range. */
const struct pf_prof_frame *pf_prof_frame_get(const struct pf_prof *p, uint32_t id);
const struct pf_prof_stack *pf_prof_stack_get(const struct pf_prof *p, uint32_t id);

/* The longest string a table holds: what one STRINGS section of
 * PF_SECTION_MAX_RAW bytes carries (8 bytes of header, 4 of length). */
#define PF_PROF_STR_MAX (PF_SECTION_MAX_RAW - 12u)

/* Interns `len` bytes as a string. `s` may point into p's own strings (e.g.
 * a part of one from pf_prof_str_get()). @return its id (>= 0), -ENOMEM, or
 * -E2BIG (len over PF_PROF_STR_MAX: refused before anything is copied; the
 * caller bounds what it reads, as pfsym's --max-name does). */
int64_t pf_prof_str(struct pf_prof *p, const char *s, size_t len);
/* The string with id `id` (NUL-terminated, owned by p) or NULL if out of range.
 * *len (may be NULL) gets its length. Valid until the next intern call. */
const char *pf_prof_str_get(const struct pf_prof *p, uint32_t id, size_t *len);
/* Interns a frame (all fields compared). @return its id or -ENOMEM. */
int64_t pf_prof_frame(struct pf_prof *p, const struct pf_prof_frame *f);
/* Replaces the fields of frame `id` with *f, for a frame whose details
 * came later than its first use (pfsym: a kernel address met before the
 * recording's KSYMS section, named when it arrives). Only a frame not yet
 * encoded by pf_prof_encode_tables() can change: the file's frames are
 * written once. Stack nodes and samples keep referring to the id. If *f
 * equals another frame, both stay (ids are not merged).
 * @return 0, -EINVAL (no such frame) or -EBUSY (already encoded). */
int pf_prof_frame_set(struct pf_prof *p, uint32_t id, const struct pf_prof_frame *f);
/* Interns the stack node (parent, frame). @return its id or -ENOMEM. */
int64_t pf_prof_stack(struct pf_prof *p, uint32_t parent, uint32_t frame);

/* Appends to the three buffers the STRINGS, FRAMES and STACKS payloads of the
 * entries added since the last call (a buffer is left empty when its table
 * has nothing new). Each payload is at most `max_bytes` bytes (<=
 * PF_SECTION_MAX_RAW); when more is pending, the call encodes what fits and
 * returns 1: write the payloads and call again. @return 0 (all encoded), 1
 * (more pending), -E2BIG (a string longer than max_bytes - 12: strings are
 * never cut) or -ENOMEM. */
int pf_prof_encode_tables(struct pf_prof *p, struct pf_buf *strings, struct pf_buf *frames,
			  struct pf_buf *stacks, size_t max_bytes);

/* Samples payload: a u32 count, u32 entry size (40), then the entries.
 * pf_prof_samples_begin() starts one in `b` (cleared first),
 * pf_prof_samples_add() appends an entry and bumps the count. */
int pf_prof_samples_begin(struct pf_buf *b);
int pf_prof_samples_add(struct pf_buf *b, const struct pf_prof_sample *s);
#define PF_PROF_SAMPLE_SIZE 40u
#define PF_PROF_FRAME_SIZE 40u
#define PF_PROF_STACK_SIZE 8u

/* Loads a STRINGS, FRAMES or STACKS section into the tables (appending; no
 * interning hash is built). The chunk's first id must equal the table's
 * current size and every reference must be to an id already defined.
 * @return 0, -EBADMSG (with a message in errmsg[errmsg_size]), -ENOMEM.
 * Other section types: 0, nothing done. */
int pf_prof_load_section(struct pf_prof *p, const struct pf_section *sec, char *errmsg, size_t errmsg_size);

/* Iterates a SAMPLES payload. *pos starts at 0. @return 1 with *s filled, 0 at
 * the end, -EBADMSG if the header or an entry runs past `size`. */
int pf_prof_samples_next(const uint8_t *data, size_t size, size_t *pos, struct pf_prof_sample *s);

#ifdef __cplusplus
}
#endif

/* The builder and the folding engine were part of this header before the
 * headers had a folder: a program that includes "profile.h" still finds them. */
#include "build.h"
#include "fold.h"

#endif /* PFILE_PROFILE_H */
