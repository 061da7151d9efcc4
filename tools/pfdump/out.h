/*
 * pfdump/out.h - pfdump's printer (pfdump/out.c), shared by its files
 * (pfdump-private): one object per line, "TYPE key=value ..." as text or
 * {"type":"TYPE","key":value,...} as JSON, and the names of things.
 */
#ifndef PFDUMP_OUT_H
#define PFDUMP_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The printer's state: one for the run, set up by main(). */
struct pfd_printer {
	FILE *out;           /* standard output */
	const char *fname;   /* the file read, for messages */
	int json;            /* JSON Lines, else text */
	int first_member;
	int rename_task_ids; /* JSON: the record prefix already has "pid"/"tid" */
	unsigned n_errors;   /* error lines printed: the exit status */
};
extern struct pfd_printer pfd_pr;

/* The output stream (standard output). */
FILE *pfd_file(void);

void pfd_obj_begin(const char *type);
/* An item of a section: in JSON the object {"type":TYPE...; in text its
 * LABEL (indent and name) at the start of its line. */
void pfd_item_begin(const char *type, const char *label);
void pfd_obj_end(void);
/* The separator and key of a member; its value is printed next. */
void pfd_key(const char *k);
void pfd_u64(const char *k, uint64_t v);
/* "0x..." (a JSON string) */
void pfd_hex(const char *k, uint64_t v);
/* pfd_hex(k, v) when v is not 0 (an optional field), else nothing */
void pfd_hex_nz(const char *k, uint64_t v);
/* n bytes of s: escaped JSON string, or text with control bytes escaped */
void pfd_str(const char *k, const char *s, size_t n);
void pfd_cstr(const char *k, const char *s);
/* hex digits ("-" in text when n is 0) */
void pfd_bytes(const char *k, const uint8_t *b, size_t n);
/* a JSON array, or comma-separated text ("-" when n is 0) */
void pfd_list(const char *k, const uint64_t *v, size_t n, int hex);
/* the set bits of v by name (names[i] for bit i, "bitN" past n), '|'-joined */
void pfd_bits(const char *k, uint64_t v, const char *const *names, unsigned n);
/* n bytes of s as a JSON string (no key) */
void pfd_json_str(const char *s, size_t n);
/* a string's text form alone (no key) */
void pfd_text_str(const char *s, size_t n);
/* "pfdump: MSG" on standard error after flushing the output; counts an error */
void pfd_error_line(const char *msg);
struct pf_section;
/* an error line "FILE: section N at offset O: malformed WHAT payload" */
void pfd_payload_error(const struct pf_section *sec, const char *what);

/* Names, or NULL when unknown. */
const char *pfd_section_name(uint16_t t);
const char *pfd_machine_name(uint16_t m);
const char *pfd_cpumode_name(uint16_t misc);
const char *pfd_context_name(uint64_t a);
extern const char *const pfd_sample_bits[], *const pfd_format_bits[], *const pfd_attr_bits[];
extern const unsigned pfd_n_sample_bits, pfd_n_format_bits, pfd_n_attr_bits;

#endif
