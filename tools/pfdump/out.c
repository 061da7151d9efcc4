/*
 * pfdump/out.c - pfdump's printer: one object per line, "TYPE key=value ..."
 * as text or {"type":"TYPE","key":value,...} as JSON Lines, and the names
 * of section types, machines, sample_type bits and call-chain contexts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pfile/pfile.h>
#include <pfile/records.h>
#include "pfdump/out.h"
#include "text.h"

struct pfd_printer pfd_pr;

void pfd_json_str(const char *s, size_t n)
{
	pf_json_str(pfd_pr.out, s, n, PF_JSON_BAD_LATIN1);
}

/* Text form of a string: printable bytes as they are, others escaped. */
void pfd_text_str(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n')
			fputs("\\n", pfd_pr.out);
		else if (c == '\t')
			fputs("\\t", pfd_pr.out);
		else if (c == '\\')
			fputs("\\\\", pfd_pr.out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(pfd_pr.out, "\\x%02x", c);
		else
			putc(c, pfd_pr.out);
	}
}

void pfd_obj_begin(const char *type)
{
	if (pfd_pr.json) {
		fprintf(pfd_pr.out, "{\"type\":\"%s\"", type);
		pfd_pr.first_member = 0;
	} else {
		fputs(type, pfd_pr.out);
	}
}

void pfd_item_begin(const char *type, const char *label)
{
	if (pfd_pr.json)
		pfd_obj_begin(type);
	else
		fputs(label, pfd_pr.out);
}

void pfd_obj_end(void)
{
	fputs(pfd_pr.json ? "}\n" : "\n", pfd_pr.out);
}

void pfd_key(const char *k)
{
	if (pfd_pr.json)
		fprintf(pfd_pr.out, ",\"%s\":", k);
	else
		fprintf(pfd_pr.out, " %s=", k);
}

void pfd_u64(const char *k, uint64_t v)
{
	if (pfd_pr.rename_task_ids && (!strcmp(k, "pid") || !strcmp(k, "tid"))) {
		fprintf(pfd_pr.out, ",\"rec_%s\":%" PRIu64, k, v);
		return;
	}
	pfd_key(k);
	fprintf(pfd_pr.out, "%" PRIu64, v);
}

void pfd_hex(const char *k, uint64_t v)
{
	pfd_key(k);
	fprintf(pfd_pr.out, pfd_pr.json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v);
}

void pfd_hex_nz(const char *k, uint64_t v)
{
	if (v)
		pfd_hex(k, v);
}

void pfd_str(const char *k, const char *s, size_t n)
{
	pfd_key(k);
	if (pfd_pr.json)
		pfd_json_str(s, n);
	else
		pfd_text_str(s, n);
}

void pfd_cstr(const char *k, const char *s)
{
	pfd_str(k, s, strlen(s));
}

FILE *pfd_file(void) { return pfd_pr.out; }

void pfd_bytes(const char *k, const uint8_t *b, size_t n)
{
	pfd_key(k);
	if (pfd_pr.json)
		putc('"', pfd_pr.out);
	for (size_t i = 0; i < n; i++)
		fprintf(pfd_pr.out, "%02x", b[i]);
	if (pfd_pr.json)
		putc('"', pfd_pr.out);
	else if (n == 0)
		fputs("-", pfd_pr.out);
}

/* A list of u64 values: JSON array, or comma-separated text. */
void pfd_list(const char *k, const uint64_t *v, size_t n, int hex)
{
	pfd_key(k);
	if (pfd_pr.json)
		putc('[', pfd_pr.out);
	for (size_t i = 0; i < n; i++) {
		uint64_t x;
		memcpy(&x, v + i, 8);
		if (i)
			putc(',', pfd_pr.out);
		if (hex)
			fprintf(pfd_pr.out, pfd_pr.json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, x);
		else
			fprintf(pfd_pr.out, "%" PRIu64, x);
	}
	if (pfd_pr.json)
		putc(']', pfd_pr.out);
	else if (n == 0)
		fputs("-", pfd_pr.out);
}

void pfd_error_line(const char *msg)
{
	fflush(pfd_pr.out);
	fprintf(stderr, "pfdump: %s\n", msg);
	pfd_pr.n_errors++;
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */
/* ------------------------------------------------------------------------ */

const char *pfd_section_name(uint16_t t)
{
	switch (t) {
	case PF_SEC_META: return "META";
	case PF_SEC_EVENT: return "EVENT";
	case PF_SEC_RECORDS: return "RECORDS";
	case PF_SEC_MAPS: return "MAPS";
	case PF_SEC_BUILDID: return "BUILDID";
	case PF_SEC_END: return "END";
	case PF_SEC_DSO_IMAGE: return "DSO_IMAGE";
	case PF_SEC_THREADS: return "THREADS";
	case PF_SEC_COUNTS: return "COUNTS";
	case PF_SEC_RUN: return "RUN";
	case PF_SEC_KSYMS: return "KSYMS";
	case PF_SEC_PERFMAP: return "PERFMAP";
	case PF_SEC_STRINGS: return "STRINGS";
	case PF_SEC_FRAMES: return "FRAMES";
	case PF_SEC_STACKS: return "STACKS";
	case PF_SEC_SAMPLES: return "SAMPLES";
	case PF_SEC_SYMINFO: return "SYMINFO";
	}
	return NULL;
}

const char *pfd_machine_name(uint16_t m)
{
	switch (m) {
	case 3: return "i386";
	case 8: return "mips";
	case 20: return "ppc";
	case 21: return "ppc64";
	case 22: return "s390";
	case 40: return "arm";
	case 62: return "x86_64";
	case 183: return "aarch64";
	case 243: return "riscv";
	}
	return "unknown";
}

const char *const pfd_sample_bits[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID", "RAW",
	"BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER", "TRANSACTION",
	"REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};
const char *const pfd_format_bits[] = { "TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST" };
const char *const pfd_attr_bits[] = {
	"disabled", "inherit", "pinned", "exclusive", "exclude_user", "exclude_kernel", "exclude_hv",
	"exclude_idle", "mmap", "comm", "freq", "inherit_stat", "enable_on_exec", "task", "watermark",
	"precise_ip", "precise_ip", "mmap_data", "sample_id_all", "exclude_host", "exclude_guest",
	"exclude_callchain_kernel", "exclude_callchain_user", "mmap2", "comm_exec", "use_clockid",
	"context_switch", "write_backward", "namespaces", "ksymbol", "bpf_event", "aux_output", "cgroup",
	"text_poke", "build_id", "inherit_thread", "remove_on_exec", "sigtrap",
};

const unsigned pfd_n_sample_bits = sizeof(pfd_sample_bits) / sizeof(pfd_sample_bits[0]);
const unsigned pfd_n_format_bits = sizeof(pfd_format_bits) / sizeof(pfd_format_bits[0]);
const unsigned pfd_n_attr_bits = sizeof(pfd_attr_bits) / sizeof(pfd_attr_bits[0]);

void pfd_bits(const char *k, uint64_t v, const char *const *names, unsigned n)
{
	char buf[512];
	size_t len = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < 64; i++) {
		if (!(v & (1ull << i)))
			continue;
		char tmp[32];
		const char *nm = i < n ? names[i] : NULL;
		if (!nm) {
			snprintf(tmp, sizeof(tmp), "bit%u", i);
			nm = tmp;
		}
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "|" : "", nm);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	if (!len)
		snprintf(buf, sizeof(buf), "0");
	pfd_cstr(k, buf);
}

const char *pfd_cpumode_name(uint16_t misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL: return "kernel";
	case PERF_RECORD_MISC_USER: return "user";
	case PERF_RECORD_MISC_HYPERVISOR: return "hypervisor";
	case PERF_RECORD_MISC_GUEST_KERNEL: return "guest-kernel";
	case PERF_RECORD_MISC_GUEST_USER: return "guest-user";
	}
	return "unknown";
}

const char *pfd_context_name(uint64_t a)
{
	switch (a) {
	case PERF_CONTEXT_HV: return "hv";
	case PERF_CONTEXT_KERNEL: return "kernel";
	case PERF_CONTEXT_USER: return "user";
	case PERF_CONTEXT_GUEST: return "guest";
	case PERF_CONTEXT_GUEST_KERNEL: return "guest-kernel";
	case PERF_CONTEXT_GUEST_USER: return "guest-user";
	}
	return NULL;
}

/* "FILE: section N at offset O: malformed WHAT payload" */
void pfd_payload_error(const struct pf_section *sec, const char *what)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%s: section %" PRIu64 " at offset %" PRIu64 ": malformed %s payload", pfd_pr.fname,
		 sec->index, sec->offset, what);
	pfd_error_line(msg);
}
