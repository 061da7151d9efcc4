/*
 * pfdump/sections.h - pfdump's section printers (pfdump/sections.c) and
 * what they use from pfdump.c (pfdump-private).
 */
#ifndef PFDUMP_SECTIONS_H
#define PFDUMP_SECTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <pfile/records.h>

void pfd_print_file_header(const struct pf_file_header *fh);
void pfd_print_section_line(const struct pf_section *sec);
void pfd_print_meta(const struct pf_section *sec);
void pfd_print_event(const struct pf_event *ev);
/* THREADS: names every thread alive at the start; prints them if show. */
void pfd_do_threads(const struct pf_section *sec, int show);
/* BUILDID: one "BUILDID PATH" line per new file if list (--build-ids),
 * else one buildid line per entry if show. */
void pfd_buildid_sec(const struct pf_section *sec, int list, int show);
/* KSYMS (pfdump/ksyms.c): the build-ids of the kernel and its modules if
 * list (--build-ids), else a summary line and one line per module if show. */
void pfd_ksyms_sec(const struct pf_section *sec, int list, int show);
void pfd_print_maps(const struct pf_section *sec);
void pfd_print_maps(const struct pf_section *sec); /* MAPS and PERFMAP */
void pfd_print_dso(const struct pf_section *sec);
void pfd_print_run_mark(const struct pf_run_mark *m);
void pfd_print_end(const struct pf_end *e);
/* END's run table (format 1.3), one end_run line per run */
void pfd_print_end_runs(const uint8_t *data, size_t size);

/* In pfdump.c: */
/* Thread tid is named comm[0..len) from time_ns on. */
void pfd_comm_note(uint32_t tid, uint64_t time_ns, const char *comm, size_t len);
/* "BUILDID PATH", once per pair (--build-ids) */
void pfd_print_buildid(const uint8_t *id, size_t idn, const char *path, size_t pn);
/* The same, with how the build-id was proven when it was not recorded with
 * the mapping ("inode": BUILDID flag INODE), NULL otherwise: a tab and
 * "proof=PROOF" after the path (JSON: "proof"). */
void pfd_print_buildid_proof(const uint8_t *id, size_t idn, const char *path, size_t pn, const char *proof);
/* The EVENT description's keys on an "event" line. */
void pfd_print_desc(uint32_t index);

#endif
