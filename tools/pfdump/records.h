/*
 * pfdump/records.h - pfdump's printer of one perf record (pfdump/records.c),
 * pfdump-private.
 */
#ifndef PFDUMP_RECORDS_H
#define PFDUMP_RECORDS_H

#include <pfile/records.h>
#include "pfdump/tracepoint.h"

/* Prints one record (host byte order) of section sec as one line or object.
 * @return 0, or -1 if its body is damaged (what was printed stays). */
int pfd_print_record(const struct pf_section *sec, const struct pf_events *evs, const struct perf_event_header *h);

/* In pfdump.c: the parsed tp_format of EVENT index and its "sys:name" in
 * *tpname, or NULL when the EVENT has none. */
const struct pfd_tp *pfd_event_tp(uint32_t index, const char **tpname);

#endif
