/*
 * pfrec/pmu_internal.h - what the parts of pfrec's event parser share (not
 * installed): the model of sysfs PMUs, the attrs being built, and the
 * helpers across pmu_model.c (loading sysfs), pmu_parse.c (event
 * specifications) and pmu_list.c (--list-events). pmu.h is the interface.
 */
#ifndef PFREC_PMU_INTERNAL_H
#define PFREC_PMU_INTERNAL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/hw_breakpoint.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu.h"

#define FILE_MAX 4096 /* a sysfs attribute is at most a page */

/* ---- the model -------------------------------------------------------------- */

struct field {
	char *name;
	char *text;     /* the format file, trimmed: "config:8-15" */
	int word;       /* 0: config, 1-3: config1-config3; -1: text not understood */
	uint64_t mask;  /* the bits of that word */
};

struct alias {
	char *name;
	char *terms;    /* events/NAME, trimmed; NULL when unreadable */
	int read_err;   /* errno when terms is NULL */
	double scale;
	char unit[32];
};

struct pmu_desc {
	char *name;
	uint32_t type;
	bool core;
	bool loaded;
	int max_precise; /* caps/max_precise, or -1 without it */
	struct field *fields;
	int nfields;
	struct alias *aliases;
	int naliases;
};

struct pmu_model {
	char *sysfs_root;
	char *tracefs_root;
	struct pmu_desc *pmus;
	int npmus;
	int ncore;
};

struct generic {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *what;
};

/* ---- parsing ------------------------------------------------------------------------- */

struct mods {
	unsigned bits;
	int precise;
};

/* One attr being built, before group and modifiers are settled. */
struct proto {
	struct pmu_attr pa;
	struct pmu_desc *desc;  /* the sysfs PMU it opens on, if any */
	const char *pmu_name;   /* desc->name or a fixed name */
	unsigned flags;
	double scale;
	char unit[32];
	char *tp_format;
	char *name;             /* name= */
};

struct protos {
	struct proto *v;
	int n, cap;
};

struct term {
	const char *name;       /* into the ctx's scratch copy */
	const char *val;        /* NULL: a bare term */
};

struct ctx {
	struct pmu_model *m;
	char *err;
	size_t errlen;
	const char *ev;         /* the event text the error names */
	bool in_group;          /* parsing a member of {...} */
};


/* pmu_model.c */
void pmu_set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int pmu_read_small(const char *path, char *buf, size_t size);
int pmu_join_path(char *buf, size_t size, const char *a, const char *b, const char *c);
int pmu_list_dir(const char *path, char ***out);
void pmu_free_names(char **v, int n);
bool pmu_is_dir(const char *path);
int pmu_parse_u64(const char *s, size_t n, uint64_t *out);
int pmu_popcount64(uint64_t v);
uint64_t pmu_deposit(uint64_t v, uint64_t mask);
uint64_t pmu_field_max(uint64_t mask);
int pmu_load(struct pmu_model *m, struct pmu_desc *p, char *err, size_t errlen);
const struct field *pmu_find_field(const struct pmu_desc *p, const char *name);
const struct alias *pmu_find_alias(const struct pmu_desc *p, const char *name);
size_t pmu_base_len(const char *name);
const struct generic *pmu_find_generic(const char *name);

/* Hardware cache events (PERF_TYPE_HW_CACHE), named as perf names them:
 * CACHE[-OP][-RESULT], OP and RESULT in either order, each from perf's
 * aliases (L1-dcache l1-d l1d L1-data, ..., load loads read, ..., misses
 * miss); OP defaults to load (read), RESULT to the accesses. The config is
 * the kernel's: cache id | op << 8 | result << 16
 * (include/uapi/linux/perf_event.h, PERF_COUNT_HW_CACHE_*). A combination
 * perf refuses (L1-icache stores) is refused. @return 1 and *config set, 0
 * when `name` is not a cache event's name. */
int pmu_parse_cache(const char *name, uint64_t *config);
/* The n-th name of perf's cache event list (its --list, `perf list cache`
 * order: each cache, each op it has, accesses then misses), or NULL past
 * the last; *config gets its encoding. buf holds the name. */
const char *pmu_cache_name(size_t n, char *buf, size_t size, uint64_t *config);
extern const struct generic pmu_generics[];
extern const size_t pmu_ngeneric;

/* pmu_parse.c */
void pmu_protos_free(struct protos *ps);
int pmu_resolve_on_pmu(struct ctx *c, struct protos *ps, struct pmu_desc *d, char *terms_text, const struct alias *a);

#endif
