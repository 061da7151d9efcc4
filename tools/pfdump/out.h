/*
 * pfdump/out.h - pfdump's output helpers (pfdump.c), shared with its other
 * files (pfdump-private): one object per line, "TYPE key=value ..." as
 * text or {"type":"TYPE","key":value,...} as JSON.
 */
#ifndef PFDUMP_OUT_H
#define PFDUMP_OUT_H

#include <stdint.h>
#include <stdio.h>

/* The output stream (standard output). */
FILE *pfd_file(void);

void pfd_obj_begin(const char *type);
void pfd_obj_end(void);
/* The separator and key of a member; its value is printed next. */
void pfd_key(const char *k);
void pfd_u64(const char *k, uint64_t v);
void pfd_cstr(const char *k, const char *s);

#endif
