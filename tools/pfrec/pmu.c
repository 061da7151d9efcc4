/*
 * pfrec/pmu.c - event specifications resolved against the PMUs of sysfs
 * (pmu.h says the syntax and the sources).
 *
 * The model: each folder of the sysfs root is a PMU with a `type` file
 * (attr.type), a `format/` folder (one file per field: "config:0-7",
 * "config1:0-15", "config:0-7,32-35"), an `events/` folder (one file per
 * named event holding terms of those fields, "event=0xc5,umask=0x01",
 * with NAME.scale and NAME.unit beside it) and `caps/max_precise`. A PMU
 * named "cpu" or with a `cpus` file is a CPU PMU (several of them: a hybrid
 * machine). Formats, events and caps of a PMU are read the first time a spec
 * needs them.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
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

#define SYSFS_DEFAULT "/sys/bus/event_source/devices"
#define FILE_MAX 4096 /* a sysfs attribute is at most a page */

#ifndef PERF_ATTR_SIZE_VER8
_Static_assert(sizeof(struct perf_event_attr) == PERF_ATTR_SIZE_VER7,
	       "perf_event_attr without config3 should end at sig_data");
#endif
_Static_assert(sizeof(struct pmu_attr) >= 136, "pmu_attr must reach config3");

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

/* ---- small helpers ------------------------------------------------------------ */

static void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* one line, whatever a file or a spec held */
	for (char *p = err; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

static int join_path(char *buf, size_t size, const char *a, const char *b, const char *c)
{
	int n = snprintf(buf, size, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");
	return (n < 0 || (size_t)n >= size) ? -ENAMETOOLONG : 0;
}

/* Reads a small text file whole, trailing white space cut.
 * @return its length, or -errno (-EFBIG beyond FILE_MAX - 1 bytes). */
static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	for (;;) {
		if (n == size - 1) {
			char c;
			ssize_t r = read(fd, &c, 1);
			close(fd);
			return r > 0 ? -EFBIG : (int)n;
		}
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
	return (int)n;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Decimal, or hex after 0x. @return 0 or -EINVAL (not a number), -ERANGE. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0)
		return -EINVAL;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (size_t i = 2; i < n; i++) {
			int d = isdigit((unsigned char)s[i]) ? s[i] - '0'
				: (s[i] >= 'a' && s[i] <= 'f') ? s[i] - 'a' + 10
				: (s[i] >= 'A' && s[i] <= 'F') ? s[i] - 'A' + 10 : -1;
			if (d < 0)
				return -EINVAL;
			if (v >> 60)
				return -ERANGE;
			v = v << 4 | (uint64_t)d;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			if (!isdigit((unsigned char)s[i]))
				return -EINVAL;
			uint64_t d = (uint64_t)(s[i] - '0');
			if (v > (UINT64_MAX - d) / 10)
				return -ERANGE;
			v = v * 10 + d;
		}
	}
	*out = v;
	return 0;
}

static int popcount64(uint64_t v)
{
	return __builtin_popcountll(v);
}

/* The value's low bits spread over the set bits of mask, lowest first (the
 * kernel's format bitmaps: "config:0-7,32-35" takes value bits 0-7 into
 * config bits 0-7 and value bits 8-11 into 32-35). */
static uint64_t deposit(uint64_t v, uint64_t mask)
{
	uint64_t r = 0, bit = 1;
	while (mask) {
		uint64_t low = mask & (~mask + 1);
		if (v & bit)
			r |= low;
		mask &= mask - 1;
		bit <<= 1;
	}
	return r;
}

static uint64_t field_max(uint64_t mask)
{
	int w = popcount64(mask);
	return w >= 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
}

/* "configN:A-B,C,..." (sysfs-bus-event_source-devices-format). */
static int parse_format(const char *s, int *word, uint64_t *mask)
{
	if (strncmp(s, "config", 6) != 0)
		return -EINVAL;
	s += 6;
	int w = 0;
	if (*s >= '1' && *s <= '3') {
		w = *s - '0';
		s++;
	}
	if (*s++ != ':')
		return -EINVAL;
	uint64_t m = 0;
	for (;;) {
		unsigned a = 0, b;
		int digits = 0;
		while (isdigit((unsigned char)*s) && digits < 3) {
			a = a * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (!digits || a > 63)
			return -EINVAL;
		b = a;
		if (*s == '-') {
			s++;
			b = 0;
			digits = 0;
			while (isdigit((unsigned char)*s) && digits < 3) {
				b = b * 10 + (unsigned)(*s++ - '0');
				digits++;
			}
			if (!digits || b > 63 || b < a)
				return -EINVAL;
		}
		m |= (~UINT64_C(0) >> (63 - b)) & ~((UINT64_C(1) << a) - 1);
		if (*s == ',') {
			s++;
			continue;
		}
		if (*s)
			return -EINVAL;
		break;
	}
	*word = w;
	*mask = m;
	return 0;
}

/* ---- loading ------------------------------------------------------------------- */

static int cmp_pmu(const void *a, const void *b)
{
	return strcmp(((const struct pmu_desc *)a)->name, ((const struct pmu_desc *)b)->name);
}
static int cmp_field(const void *a, const void *b)
{
	return strcmp(((const struct field *)a)->name, ((const struct field *)b)->name);
}
static int cmp_alias(const void *a, const void *b)
{
	return strcmp(((const struct alias *)a)->name, ((const struct alias *)b)->name);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The names of a folder's entries (no hidden ones), sorted.
 * @return count, or -errno (-ENOENT when the folder is absent). */
static int list_dir(const char *path, char ***out)
{
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	char **v = NULL;
	int n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			int ncap = cap ? cap * 2 : 32;
			char **nv = realloc(v, (size_t)ncap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
			cap = ncap;
		}
		if (!(v[n] = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	closedir(d);
	for (int i = 1; i < n; i++) /* insertion sort: folders are small */
		for (int j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*out = v;
	return n;
nomem:
	closedir(d);
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return -ENOMEM;
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void desc_free(struct pmu_desc *p)
{
	for (int i = 0; i < p->nfields; i++) {
		free(p->fields[i].name);
		free(p->fields[i].text);
	}
	free(p->fields);
	for (int i = 0; i < p->naliases; i++) {
		free(p->aliases[i].name);
		free(p->aliases[i].terms);
	}
	free(p->aliases);
	free(p->name);
}

/* Reads format/, events/ and caps/max_precise of a PMU once.
 * @return 0 or -errno with err set. */
static int pmu_load(struct pmu_model *m, struct pmu_desc *p, char *err, size_t errlen)
{
	if (p->loaded)
		return 0;
	char path[PATH_MAX], buf[FILE_MAX];
	char **names = NULL;
	int n = 0, rc;

	/* format/ */
	if ((rc = join_path(path, sizeof(path), m->sysfs_root, p->name, "format")) < 0)
		goto path_err;
	n = list_dir(path, &names);
	if (n < 0 && n != -ENOENT) {
		rc = n;
		goto dir_err;
	}
	if (n > 0) {
		p->fields = calloc((size_t)n, sizeof(*p->fields));
		if (!p->fields)
			goto nomem;
		for (int i = 0; i < n; i++) {
			char fp[PATH_MAX];
			struct field *f = &p->fields[p->nfields];
			if (join_path(fp, sizeof(fp), path, names[i], NULL) < 0)
				continue;
			int r = read_small(fp, buf, sizeof(buf));
			if (r == -EISDIR)
				continue;
			f->name = names[i];
			names[i] = NULL;
			f->text = strdup(r >= 0 ? buf : "(unreadable)");
			p->nfields++;
			if (!f->text)
				goto nomem;
			if (r < 0 || parse_format(buf, &f->word, &f->mask) < 0)
				f->word = -1;
		}
		free_names(names, n);
		names = NULL;
		qsort(p->fields, (size_t)p->nfields, sizeof(*p->fields), cmp_field);
	}

	/* events/ */
	if ((rc = join_path(path, sizeof(path), m->sysfs_root, p->name, "events")) < 0)
		goto path_err;
	n = list_dir(path, &names);
	if (n < 0 && n != -ENOENT) {
		rc = n;
		goto dir_err;
	}
	if (n > 0) {
		p->aliases = calloc((size_t)n, sizeof(*p->aliases));
		if (!p->aliases)
			goto nomem;
		for (int i = 0; i < n; i++) {
			const char *nm = names[i];
			if (ends_with(nm, ".scale") || ends_with(nm, ".unit") || ends_with(nm, ".per-pkg") ||
			    ends_with(nm, ".snapshot"))
				continue;
			char fp[PATH_MAX];
			struct alias *a = &p->aliases[p->naliases];
			if (join_path(fp, sizeof(fp), path, nm, NULL) < 0)
				continue;
			int r = read_small(fp, buf, sizeof(buf));
			if (r == -EISDIR)
				continue;
			a->name = names[i];
			names[i] = NULL;
			a->scale = 1.0;
			p->naliases++;
			if (r >= 0) {
				if (!(a->terms = strdup(buf)))
					goto nomem;
			} else {
				a->read_err = -r;
			}
			char sp[PATH_MAX];
			if (snprintf(sp, sizeof(sp), "%s.scale", fp) < (int)sizeof(sp) &&
			    read_small(sp, buf, sizeof(buf)) > 0) {
				char *end;
				double s = strtod(buf, &end);
				if (end != buf && !*end && s > 0 && s < 1e300)
					a->scale = s;
			}
			if (snprintf(sp, sizeof(sp), "%s.unit", fp) < (int)sizeof(sp) &&
			    read_small(sp, buf, sizeof(buf)) > 0)
				snprintf(a->unit, sizeof(a->unit), "%.31s", buf);
		}
		free_names(names, n);
		names = NULL;
		qsort(p->aliases, (size_t)p->naliases, sizeof(*p->aliases), cmp_alias);
	}

	/* caps/max_precise */
	p->max_precise = -1;
	if (join_path(path, sizeof(path), m->sysfs_root, p->name, "caps/max_precise") == 0 &&
	    read_small(path, buf, sizeof(buf)) > 0) {
		uint64_t v;
		if (parse_u64(buf, strlen(buf), &v) == 0 && v <= 3)
			p->max_precise = (int)v;
	}
	p->loaded = true;
	return 0;
nomem:
	free_names(names, n);
	rc = -ENOMEM;
	set_err(err, errlen, "out of memory");
	goto undo;
path_err:
	set_err(err, errlen, "PMU %s: path too long under %s", p->name, m->sysfs_root);
	goto undo;
dir_err:
	set_err(err, errlen, "PMU %s: cannot read %s: %s", p->name, path, strerror(-rc));
undo: /* as before: the next use tries again */
	for (int i = 0; i < p->nfields; i++) {
		free(p->fields[i].name);
		free(p->fields[i].text);
	}
	for (int i = 0; i < p->naliases; i++) {
		free(p->aliases[i].name);
		free(p->aliases[i].terms);
	}
	free(p->fields);
	free(p->aliases);
	p->fields = NULL;
	p->aliases = NULL;
	p->nfields = p->naliases = 0;
	return rc;
}

int pmu_model_open(struct pmu_model **out, const struct pmu_env *env, char *err, size_t errlen)
{
	*out = NULL;
	const char *sys = env && env->sysfs_root ? env->sysfs_root : getenv("PFREC_SYSFS_ROOT");
	const char *tfs = env && env->tracefs_root ? env->tracefs_root : getenv("PFREC_TRACEFS_ROOT");
	bool sys_given = sys && *sys;
	if (!sys_given)
		sys = SYSFS_DEFAULT;
	if (tfs && !*tfs)
		tfs = NULL;
	if (sys_given && !is_dir(sys)) {
		set_err(err, errlen, "%s: not a folder (the sysfs root that replaces %s)", sys, SYSFS_DEFAULT);
		return -ENOTDIR;
	}
	struct pmu_model *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (!(m->sysfs_root = strdup(sys)))
		goto nomem;
	if (!tfs) {
		if (is_dir("/sys/kernel/tracing/events"))
			tfs = "/sys/kernel/tracing";
		else if (is_dir("/sys/kernel/debug/tracing/events"))
			tfs = "/sys/kernel/debug/tracing";
	}
	if (tfs && !(m->tracefs_root = strdup(tfs)))
		goto nomem;

	char **names = NULL;
	int n = list_dir(sys, &names);
	if (n < 0 && n != -ENOENT) {
		set_err(err, errlen, "%s: %s", sys, strerror(-n));
		pmu_model_close(m);
		return n;
	}
	if (n > 0) {
		m->pmus = calloc((size_t)n, sizeof(*m->pmus));
		if (!m->pmus) {
			free_names(names, n);
			goto nomem;
		}
		for (int i = 0; i < n; i++) {
			char path[PATH_MAX], buf[64];
			uint64_t type;
			if (join_path(path, sizeof(path), sys, names[i], "type") < 0)
				continue;
			int r = read_small(path, buf, sizeof(buf));
			if (r <= 0 || parse_u64(buf, (size_t)r, &type) < 0 || type > UINT32_MAX)
				continue; /* not a PMU */
			struct pmu_desc *p = &m->pmus[m->npmus++];
			p->name = names[i];
			names[i] = NULL;
			p->type = (uint32_t)type;
			p->max_precise = -1;
			p->core = strcmp(p->name, "cpu") == 0 ||
				  (join_path(path, sizeof(path), sys, p->name, "cpus") == 0 && access(path, F_OK) == 0);
			m->ncore += p->core;
		}
		free_names(names, n);
		qsort(m->pmus, (size_t)m->npmus, sizeof(*m->pmus), cmp_pmu);
	}
	*out = m;
	return 0;
nomem:
	pmu_model_close(m);
	set_err(err, errlen, "out of memory");
	return -ENOMEM;
}

void pmu_model_close(struct pmu_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->npmus; i++)
		desc_free(&m->pmus[i]);
	free(m->pmus);
	free(m->sysfs_root);
	free(m->tracefs_root);
	free(m);
}

const char *pmu_model_sysfs_root(const struct pmu_model *m)
{
	return m->sysfs_root;
}

const char *pmu_model_tracefs_root(const struct pmu_model *m)
{
	return m->tracefs_root;
}

static const struct field *find_field(const struct pmu_desc *p, const char *name)
{
	for (int i = 0; i < p->nfields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return &p->fields[i];
	return NULL;
}

/* sysfs event names are matched without regard to case, as perf does */
static const struct alias *find_alias(const struct pmu_desc *p, const char *name)
{
	for (int i = 0; i < p->naliases; i++)
		if (strcasecmp(p->aliases[i].name, name) == 0)
			return &p->aliases[i];
	return NULL;
}

/* The length of name without a "_N" suffix (N decimal digits). */
static size_t base_len(const char *name)
{
	size_t n = strlen(name), i = n;
	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	if (i < n && i > 1 && name[i - 1] == '_')
		return i - 1;
	return n;
}

/* ---- generic names ----------------------------------------------------------------- */

struct generic {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *what;
};

/* The names pfrec has always taken (perf's legacy names). */
static const struct generic generics[] = {
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "PERF_COUNT_HW_CPU_CYCLES"},
	{"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "PERF_COUNT_HW_CPU_CYCLES"},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "PERF_COUNT_HW_INSTRUCTIONS"},
	{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "PERF_COUNT_HW_CACHE_REFERENCES"},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "PERF_COUNT_HW_CACHE_MISSES"},
	{"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "PERF_COUNT_HW_BRANCH_INSTRUCTIONS"},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "PERF_COUNT_HW_BRANCH_INSTRUCTIONS"},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "PERF_COUNT_HW_BRANCH_MISSES"},
	{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "PERF_COUNT_HW_BUS_CYCLES"},
	{"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND"},
	{"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "PERF_COUNT_HW_STALLED_CYCLES_BACKEND"},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "PERF_COUNT_HW_REF_CPU_CYCLES"},
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "PERF_COUNT_SW_CPU_CLOCK"},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "PERF_COUNT_SW_TASK_CLOCK"},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS"},
	{"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS"},
	{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "PERF_COUNT_SW_PAGE_FAULTS_MIN"},
	{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "PERF_COUNT_SW_PAGE_FAULTS_MAJ"},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "PERF_COUNT_SW_CONTEXT_SWITCHES"},
	{"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "PERF_COUNT_SW_CONTEXT_SWITCHES"},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "PERF_COUNT_SW_CPU_MIGRATIONS"},
	{"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "PERF_COUNT_SW_CPU_MIGRATIONS"},
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "PERF_COUNT_SW_ALIGNMENT_FAULTS"},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "PERF_COUNT_SW_EMULATION_FAULTS"},
};
#define NGENERIC (sizeof(generics) / sizeof(generics[0]))

static const struct generic *find_generic(const char *name)
{
	for (size_t i = 0; i < NGENERIC; i++)
		if (strcmp(generics[i].name, name) == 0)
			return &generics[i];
	return NULL;
}

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
};

static int fail(struct ctx *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ctx *c, int rc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	set_err(c->err, c->errlen, "%s: %s", c->ev, msg);
	return rc;
}

static void protos_free(struct protos *ps)
{
	for (int i = 0; i < ps->n; i++) {
		free(ps->v[i].tp_format);
		free(ps->v[i].name);
	}
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}

static struct proto *proto_new(struct ctx *c, struct protos *ps)
{
	if (ps->n == ps->cap) {
		int ncap = ps->cap ? ps->cap * 2 : 4;
		struct proto *nv = realloc(ps->v, (size_t)ncap * sizeof(*nv));
		if (!nv) {
			fail(c, -ENOMEM, "out of memory");
			return NULL;
		}
		ps->v = nv;
		ps->cap = ncap;
	}
	struct proto *p = &ps->v[ps->n++];
	memset(p, 0, sizeof(*p));
	p->pa.attr.size = sizeof(struct pmu_attr);
	p->scale = 1.0;
	return p;
}

static uint64_t *attr_word(struct proto *p, int w)
{
	switch (w) {
	case 0:
		return (uint64_t *)&p->pa.attr.config;
	case 1:
		return (uint64_t *)&p->pa.attr.config1;
	case 2:
		return (uint64_t *)&p->pa.attr.config2;
	default:
		return (uint64_t *)&PMU_CONFIG3(&p->pa);
	}
}

static const char *word_name(int w)
{
	static const char *const n[] = {"config", "config1", "config2", "config3"};
	return n[w & 3];
}

/* "a, b, c" of a PMU's field names, cut to fit. */
static void field_names(const struct pmu_desc *p, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < p->nfields && o + 1 < size; i++) {
		int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", p->fields[i].name);
		if (w < 0 || (size_t)w >= size - o) {
			snprintf(buf + (o < size - 5 ? o : size - 5), 5, "...");
			return;
		}
		o += (size_t)w;
	}
}

/* Splits "a=1,b,c=0x2" (in place: the text is the ctx's scratch) into terms.
 * @return count or -errno. */
static int split_terms(struct ctx *c, char *s, struct term *t, int max, const char *where)
{
	int n = 0;
	if (!*s)
		return 0;
	for (;;) {
		char *comma = strchr(s, ',');
		if (comma)
			*comma = 0;
		if (!*s)
			return fail(c, -EINVAL, "%sempty term", where);
		if (n == max)
			return fail(c, -E2BIG, "%smore than %d terms", where, max);
		char *eq = strchr(s, '=');
		if (eq)
			*eq = 0;
		for (const char *q = s; *q; q++)
			if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-' && *q != '.')
				return fail(c, -EINVAL, "%sterm '%s': unexpected character '%c'", where, s, *q);
		if (!*s)
			return fail(c, -EINVAL, "%sterm with no name", where);
		if (eq && !eq[1])
			return fail(c, -EINVAL, "%sterm '%s=' has no value", where, s);
		t[n].name = s;
		t[n].val = eq ? eq + 1 : NULL;
		n++;
		if (!comma)
			return n;
		s = comma + 1;
	}
}

static bool is_special(const char *n)
{
	return !strcmp(n, "period") || !strcmp(n, "freq") || !strcmp(n, "name");
}

/* period=, freq=, name=. @return 0, or -errno. */
static int apply_special(struct ctx *c, struct proto *p, const struct term *t)
{
	uint64_t v;
	int rc;
	if (!t->val)
		return fail(c, -EINVAL, "%s needs a value (%s=...)", t->name, t->name);
	if (!strcmp(t->name, "name")) {
		for (const char *q = t->val; *q; q++)
			if (!isgraph((unsigned char)*q))
				return fail(c, -EINVAL, "name= holds a space or control character");
		free(p->name);
		if (!(p->name = strdup(t->val)))
			return fail(c, -ENOMEM, "out of memory");
		return 0;
	}
	rc = parse_u64(t->val, strlen(t->val), &v);
	if (rc == -EINVAL)
		return fail(c, rc, "%s=%s: not a number (decimal or 0x-hex)", t->name, t->val);
	if (!strcmp(t->name, "period")) {
		if (rc < 0 || v == 0 || v > INT64_MAX)
			return fail(c, -ERANGE, "period=%s: not a period from 1 to 2^63-1 events", t->val);
		if (p->flags & PMU_EV_FREQ)
			return fail(c, -EINVAL, "period= and freq= together");
		p->pa.attr.freq = 0;
		p->pa.attr.sample_period = v;
		p->flags |= PMU_EV_PERIOD;
	} else {
		if (rc < 0 || v == 0 || v > 10000000)
			return fail(c, -ERANGE, "freq=%s: not a frequency from 1 to 10000000 Hz", t->val);
		if (p->flags & PMU_EV_PERIOD)
			return fail(c, -EINVAL, "period= and freq= together");
		p->pa.attr.freq = 1;
		p->pa.attr.sample_freq = v;
		p->flags |= PMU_EV_FREQ;
	}
	return 0;
}

/* A field or config word term of a PMU. `where` prefixes errors of terms
 * that come from an events/ file. */
static int apply_term(struct ctx *c, struct proto *p, const struct pmu_desc *d, const struct term *t,
		      const char *where)
{
	uint64_t v = 1;
	int rc;
	if (is_special(t->name))
		return apply_special(c, p, t);
	if (t->val && !strcmp(t->val, "?"))
		return fail(c, -EINVAL, "%s%s=?: '?' is not a value", where, t->name);
	if (t->val) {
		rc = parse_u64(t->val, strlen(t->val), &v);
		if (rc == -EINVAL)
			return fail(c, rc, "%s%s=%s: not a number (decimal or 0x-hex)", where, t->name, t->val);
		if (rc < 0)
			return fail(c, rc, "%s%s=%s: more than 64 bits", where, t->name, t->val);
	}
	for (int w = 0; w < 4; w++) {
		if (!strcmp(t->name, word_name(w))) {
			if (!t->val)
				return fail(c, -EINVAL, "%s%s needs a value", where, t->name);
			*attr_word(p, w) = v;
			return 0;
		}
	}
	const struct field *f = find_field(d, t->name);
	if (!f) {
		char names[200];
		field_names(d, names, sizeof(names));
		if (*where)
			return fail(c, -ENOENT, "%sunknown field '%s' (fields of %s: %s)", where, t->name, d->name,
				    names[0] ? names : "none");
		return fail(c, -ENOENT, "unknown term '%s' of PMU %s (its fields: %s; its events: pfrec --list %s)",
			    t->name, d->name, names[0] ? names : "none", d->name);
	}
	if (f->word < 0)
		return fail(c, -EINVAL, "%sformat/%s of PMU %s is not understood: '%s'", where, f->name, d->name, f->text);
	if (v > field_max(f->mask))
		return fail(c, -ERANGE, "%s%s=%s does not fit in %s (%s: %d bits, at most 0x%" PRIx64 ")",
			    where, t->name, t->val ? t->val : "1", f->name, f->text, popcount64(f->mask),
			    field_max(f->mask));
	uint64_t *wp = attr_word(p, f->word);
	*wp = (*wp & ~f->mask) | deposit(v, f->mask);
	return 0;
}

#define MAX_TERMS 64

/* PMU/TERMS/ on one PMU: the terms of its events/NAME (if a term names one)
 * then the user's, in order. forced: a bare event name resolved already. */
static int resolve_on_pmu(struct ctx *c, struct protos *ps, struct pmu_desc *d, char *terms_text,
			  const struct alias *forced)
{
	struct term t[MAX_TERMS];
	int nt = 0, rc;
	if ((rc = pmu_load(c->m, d, c->err, c->errlen)) < 0)
		return rc;
	if (terms_text && (nt = split_terms(c, terms_text, t, MAX_TERMS, "")) < 0)
		return nt;
	const struct alias *al = forced;
	const struct generic *legacy = NULL;
	int event_term = -1;
	for (int i = 0; i < nt && !forced; i++) {
		if (t[i].val || is_special(t[i].name) || find_field(d, t[i].name))
			continue;
		bool word = false;
		for (int w = 0; w < 4; w++)
			word |= !strcmp(t[i].name, word_name(w));
		if (word)
			continue;
		const struct alias *a = find_alias(d, t[i].name);
		const struct generic *g = a ? NULL : find_generic(t[i].name);
		if (g && !(d->core && g->type == PERF_TYPE_HARDWARE))
			g = NULL;
		if (!a && !g)
			continue; /* apply_term names it */
		if (event_term >= 0)
			return fail(c, -EINVAL, "two events named: %s and %s", t[event_term].name, t[i].name);
		event_term = i;
		al = a;
		legacy = g;
	}
	if (!nt && !al)
		return fail(c, -EINVAL, "no event and no terms for PMU %s", d->name);

	struct proto *p = proto_new(c, ps);
	if (!p)
		return -ENOMEM;
	p->desc = d;
	p->pmu_name = d->name;
	p->pa.attr.type = d->type;

	/* the '?' of an events/ file: a term the user must give */
	if (legacy) {
		p->pa.attr.type = PERF_TYPE_HARDWARE;
		p->pa.attr.config = legacy->config;
		if (c->m->ncore > 1)
			p->pa.attr.config |= (uint64_t)d->type << PERF_PMU_TYPE_SHIFT;
	} else if (al) {
		if (!al->terms)
			return fail(c, -al->read_err, "cannot read events/%s of PMU %s: %s", al->name, d->name,
				    strerror(al->read_err));
		char copy[FILE_MAX], where[320];
		struct term at[MAX_TERMS];
		snprintf(copy, sizeof(copy), "%s", al->terms);
		snprintf(where, sizeof(where), "events/%s of PMU %s: ", al->name, d->name);
		int na = split_terms(c, copy, at, MAX_TERMS, where);
		if (na < 0)
			return na;
		for (int i = 0; i < na; i++) {
			if (at[i].val && !strcmp(at[i].val, "?")) {
				bool given = false;
				for (int j = 0; j < nt; j++)
					given |= j != event_term && !strcmp(t[j].name, at[i].name);
				if (!given)
					return fail(c, -EINVAL, "event %s needs %s=VALUE (events/%s has %s=?)", al->name,
						    at[i].name, al->name, at[i].name);
				continue;
			}
			if (is_special(at[i].name))
				continue; /* not the kernel's business; perf ignores them too */
			if ((rc = apply_term(c, p, d, &at[i], where)) < 0)
				return rc;
		}
		p->scale = al->scale;
		snprintf(p->unit, sizeof(p->unit), "%s", al->unit);
	}
	for (int i = 0; i < nt; i++) {
		if (i == event_term)
			continue;
		if (legacy && !is_special(t[i].name))
			return fail(c, -EINVAL, "term '%s' does not apply to the generic event %s (period=, freq=, name= do)",
				    t[i].name, legacy->name);
		if ((rc = apply_term(c, p, d, &t[i], "")) < 0)
			return rc;
	}
	if (legacy)
		p->flags |= PMU_EV_GENERIC;
	return 0;
}

/* Terms after a generic name, raw code or tracepoint: period=, freq=, name=. */
static int apply_specials(struct ctx *c, struct protos *ps, int first, char *terms_text, const char *what)
{
	struct term t[MAX_TERMS];
	if (!terms_text)
		return 0;
	int nt = split_terms(c, terms_text, t, MAX_TERMS, "");
	if (nt < 0)
		return nt;
	if (nt == 0)
		return fail(c, -EINVAL, "empty terms '//'");
	for (int i = 0; i < nt; i++) {
		if (!is_special(t[i].name))
			return fail(c, -EINVAL, "term '%s' does not apply to %s (period=, freq=, name= do)", t[i].name, what);
		for (int k = first; k < ps->n; k++) {
			int rc = apply_special(c, &ps->v[k], &t[i]);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int resolve_generic(struct ctx *c, struct protos *ps, const struct generic *g)
{
	struct pmu_model *m = c->m;
	if (g->type == PERF_TYPE_HARDWARE && m->ncore > 1) {
		for (int i = 0; i < m->npmus; i++) {
			struct pmu_desc *d = &m->pmus[i];
			if (!d->core)
				continue;
			int rc = pmu_load(m, d, c->err, c->errlen);
			if (rc < 0)
				return rc;
			struct proto *p = proto_new(c, ps);
			if (!p)
				return -ENOMEM;
			p->pa.attr.type = PERF_TYPE_HARDWARE;
			p->pa.attr.config = g->config | (uint64_t)d->type << PERF_PMU_TYPE_SHIFT;
			p->desc = d;
			p->pmu_name = d->name;
			p->flags = PMU_EV_GENERIC | PMU_EV_EXPANDED;
		}
		return 0;
	}
	struct proto *p = proto_new(c, ps);
	if (!p)
		return -ENOMEM;
	p->pa.attr.type = g->type;
	p->pa.attr.config = g->config;
	p->flags = PMU_EV_GENERIC;
	p->pmu_name = g->type == PERF_TYPE_SOFTWARE ? "software" : "hardware";
	if (g->type == PERF_TYPE_HARDWARE && m->ncore == 1) {
		for (int i = 0; i < m->npmus; i++)
			if (m->pmus[i].core) {
				int rc = pmu_load(m, &m->pmus[i], c->err, c->errlen);
				if (rc < 0)
					return rc;
				p->desc = &m->pmus[i];
				p->pmu_name = p->desc->name;
			}
	}
	return 0;
}

static bool is_raw(const char *s)
{
	size_t n = strlen(s);
	if (n < 2 || n > 17 || s[0] != 'r')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* rHEX: the CPU PMU's config (PERF_TYPE_RAW); on a hybrid machine one attr
 * per CPU PMU, with that PMU's type. */
static int resolve_raw(struct ctx *c, struct protos *ps, const char *s)
{
	struct pmu_model *m = c->m;
	uint64_t v = 0;
	for (const char *q = s + 1; *q; q++)
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : (tolower((unsigned char)*q) - 'a' + 10));
	bool found = false;
	for (int i = 0; i < m->npmus; i++) {
		struct pmu_desc *d = &m->pmus[i];
		if (!d->core)
			continue;
		int rc = pmu_load(m, d, c->err, c->errlen);
		if (rc < 0)
			return rc;
		struct proto *p = proto_new(c, ps);
		if (!p)
			return -ENOMEM;
		p->pa.attr.type = m->ncore > 1 ? d->type : PERF_TYPE_RAW;
		p->pa.attr.config = v;
		p->desc = d;
		p->pmu_name = d->name;
		p->flags = PMU_EV_RAW | (m->ncore > 1 ? PMU_EV_EXPANDED : 0);
		found = true;
	}
	if (!found) {
		struct proto *p = proto_new(c, ps);
		if (!p)
			return -ENOMEM;
		p->pa.attr.type = PERF_TYPE_RAW;
		p->pa.attr.config = v;
		p->pmu_name = "raw";
		p->flags = PMU_EV_RAW;
	}
	return 0;
}

static bool tp_name_ok(const char *s)
{
	if (!*s || *s == '.' || strlen(s) > 255)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

static int resolve_tracepoint(struct ctx *c, struct protos *ps, const char *sys, const char *name)
{
	const char *root = c->m->tracefs_root;
	char path[PATH_MAX], buf[64];
	if (!tp_name_ok(sys))
		return fail(c, -EINVAL, "'%s' is not a tracepoint subsystem name (letters, digits, _ - .)", sys);
	if (!tp_name_ok(name))
		return fail(c, -EINVAL, "'%s' is not a tracepoint name (letters, digits, _ - .)", name);
	if (!root)
		return fail(c, -ENOENT, "no tracefs (not mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing; "
			    "PFREC_TRACEFS_ROOT names another)");
	if (snprintf(path, sizeof(path), "%s/events/%s", root, sys) >= (int)sizeof(path))
		return fail(c, -ENAMETOOLONG, "path too long");
	if (!is_dir(path)) {
		int e = errno == ENOTDIR ? ENOENT : errno;
		if (e == ENOENT)
			return fail(c, -ENOENT, "unknown event or tracepoint subsystem '%s' (no %s)", sys, path);
		return fail(c, -e, "%s: %s", path, strerror(e));
	}
	if (snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sys, name) >= (int)sizeof(path))
		return fail(c, -ENAMETOOLONG, "path too long");
	int r = read_small(path, buf, sizeof(buf));
	if (r == -ENOENT || r == -ENOTDIR)
		return fail(c, -ENOENT, "no tracepoint '%s' in subsystem %s (no %s)", name, sys, path);
	if (r < 0)
		return fail(c, r, "cannot read %s: %s", path, strerror(-r));
	uint64_t id;
	if (parse_u64(buf, (size_t)r, &id) < 0)
		return fail(c, -EINVAL, "%s holds '%s', not a tracepoint id", path, buf);
	struct proto *p = proto_new(c, ps);
	if (!p)
		return -ENOMEM;
	p->pa.attr.type = PERF_TYPE_TRACEPOINT;
	p->pa.attr.config = id;
	p->pa.attr.sample_type = PERF_SAMPLE_RAW;
	p->pmu_name = "tracepoint";
	p->flags = PMU_EV_TRACEPOINT;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, sys, name);
	if (access(path, R_OK) == 0 && !(p->tp_format = strdup(path)))
		return fail(c, -ENOMEM, "out of memory");
	return 0;
}

/* A bare name that is no generic name and no raw code: an event of the
 * sysfs PMUs. Taken when one PMU has it, or one family of them (the CPU
 * PMUs of a hybrid machine; PMU_0, PMU_1, ...): then on each. */
static int resolve_bare(struct ctx *c, struct protos *ps, const char *name)
{
	struct pmu_model *m = c->m;
	struct pmu_desc *hit[64];
	int nhit = 0, more = 0;
	for (int i = 0; i < m->npmus; i++) {
		int rc = pmu_load(m, &m->pmus[i], c->err, c->errlen);
		if (rc < 0)
			return rc;
		if (find_alias(&m->pmus[i], name)) {
			if (nhit < 64)
				hit[nhit++] = &m->pmus[i];
			else
				more++;
		}
	}
	if (!nhit)
		return fail(c, -ENOENT, "unknown event (not a generic name, rHEX, PMU event or SUBSYS:TRACEPOINT; "
			    "see pfrec --list)");
	bool all_core = true, one_family = true;
	for (int i = 0; i < nhit; i++) {
		all_core &= hit[i]->core;
		one_family &= base_len(hit[i]->name) == base_len(hit[0]->name) &&
			      !strncmp(hit[i]->name, hit[0]->name, base_len(hit[0]->name));
	}
	if (nhit > 1 && !all_core && !one_family) {
		char list[256];
		size_t o = 0;
		list[0] = 0;
		for (int i = 0; i < nhit && o < sizeof(list) - 1; i++) {
			int w = snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", hit[i]->name);
			if (w < 0)
				break;
			o += (size_t)w;
		}
		return fail(c, -EINVAL, "event of several PMUs (%s%s): name one as PMU/%s/", list, more ? ", ..." : "",
			    name);
	}
	for (int i = 0; i < nhit; i++) {
		int first = ps->n;
		int rc = resolve_on_pmu(c, ps, hit[i], NULL, find_alias(hit[i], name));
		if (rc < 0)
			return rc;
		if (nhit > 1)
			for (int k = first; k < ps->n; k++)
				ps->v[k].flags |= PMU_EV_EXPANDED;
	}
	return 0;
}

/* The PMUs a name given before '/' means: the one of that name, else those
 * named NAME_N (armv8_pmuv3 for armv8_pmuv3_0; uncore_imc for uncore_imc_0,
 * uncore_imc_1, ...). @return count. */
static int match_pmus(struct pmu_model *m, const char *name, struct pmu_desc **out, int max)
{
	int n = 0;
	size_t len = strlen(name);
	for (int i = 0; i < m->npmus; i++)
		if (!strcmp(m->pmus[i].name, name)) {
			out[0] = &m->pmus[i];
			return 1;
		}
	for (int i = 0; i < m->npmus && n < max; i++) {
		const char *pn = m->pmus[i].name;
		if (strncmp(pn, name, len) == 0 && pn[len] == '_' && pn[len + 1] && base_len(pn) == len)
			out[n++] = &m->pmus[i];
	}
	return n;
}

static void pmu_names(const struct pmu_model *m, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < m->npmus; i++) {
		int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", m->pmus[i].name);
		if (w < 0 || (size_t)w >= size - o) {
			snprintf(buf + (o < size - 5 ? o : size - 5), 5, "...");
			return;
		}
		o += (size_t)w;
	}
}

static bool is_mod_char(char ch)
{
	return ch && strchr("ukhGHpSD", ch) != NULL;
}

static int parse_mods(struct ctx *c, const char *s, struct mods *md)
{
	for (; *s; s++) {
		switch (*s) {
		case 'u': md->bits |= PMU_MOD_USER; break;
		case 'k': md->bits |= PMU_MOD_KERNEL; break;
		case 'h': md->bits |= PMU_MOD_HV; break;
		case 'G': md->bits |= PMU_MOD_GUEST; break;
		case 'H': md->bits |= PMU_MOD_HOST; break;
		case 'S': md->bits |= PMU_MOD_SAMPLE_READ; break;
		case 'D': md->bits |= PMU_MOD_PINNED; break;
		case 'p':
			if (++md->precise > 3)
				return fail(c, -EINVAL, "more than three p modifiers (precise levels are 0-3)");
			break;
		default:
			if (isgraph((unsigned char)*s))
				return fail(c, -EINVAL, "unknown modifier '%c' (modifiers: u k h G H p pp ppp S D)", *s);
			return fail(c, -EINVAL, "unknown modifier 0x%02x (modifiers: u k h G H p pp ppp S D)",
				    (unsigned char)*s);
		}
	}
	return 0;
}

static bool tp_subsystem_exists(const struct pmu_model *m, const char *sys)
{
	char path[PATH_MAX];
	return m->tracefs_root && tp_name_ok(sys) &&
	       snprintf(path, sizeof(path), "%s/events/%s", m->tracefs_root, sys) < (int)sizeof(path) && is_dir(path);
}

/* A generic name, raw code or event of a sysfs PMU. */
static bool known_event(struct pmu_model *m, const char *name)
{
	if (find_generic(name) || is_raw(name))
		return true;
	for (int i = 0; i < m->npmus; i++)
		if (pmu_load(m, &m->pmus[i], NULL, 0) == 0 && find_alias(&m->pmus[i], name))
			return true;
	return false;
}

/* One event (no group), text NUL-terminated and writable: fills protos and
 * its own modifiers. */
static int parse_event(struct ctx *c, char *text, struct protos *ps, struct mods *md)
{
	char *slash = strchr(text, '/');
	char *terms = NULL, *modtext = NULL, *head = text;
	memset(md, 0, sizeof(*md));
	if (!*text)
		return fail(c, -EINVAL, "empty event");
	if (slash) {
		char *close = strchr(slash + 1, '/');
		if (!close)
			return fail(c, -EINVAL, "no closing '/' after the terms");
		*slash = 0;
		*close = 0;
		terms = slash + 1;
		modtext = close + 1;
		if (*modtext == ':') {
			modtext++;
			if (!*modtext)
				return fail(c, -EINVAL, "nothing after ':'");
		}
		if (!*head)
			return fail(c, -EINVAL, "no PMU name before '/'");
	} else {
		char *colon = strchr(text, ':');
		if (colon) {
			*colon = 0;
			char *rest = colon + 1;
			bool all_mods = *rest != 0;
			for (const char *q = rest; *q; q++)
				all_mods &= is_mod_char(*q);
			if (!*rest)
				return fail(c, -EINVAL, "nothing after ':'");
			if (all_mods) {
				modtext = rest;
			} else if (!tp_subsystem_exists(c->m, head) && known_event(c->m, head)) {
				/* cycles:x is a bad modifier, not a tracepoint */
				return parse_mods(c, rest, md);
			} else {
				/* SUBSYS:NAME[:MODS] */
				char *c2 = strchr(rest, ':');
				if (c2) {
					*c2 = 0;
					modtext = c2 + 1;
					if (!*modtext)
						return fail(c, -EINVAL, "nothing after ':'");
				}
				int rc = resolve_tracepoint(c, ps, head, rest);
				if (rc < 0)
					return rc;
				return modtext ? parse_mods(c, modtext, md) : 0;
			}
		}
		if (!*head)
			return fail(c, -EINVAL, "no event before ':'");
	}
	int rc;
	if (modtext && (rc = parse_mods(c, modtext, md)) < 0)
		return rc;

	if (slash) {
		struct pmu_desc *pm[64];
		int npm = match_pmus(c->m, head, pm, 64);
		if (npm > 0) {
			if (!*terms)
				return fail(c, -EINVAL, "no event and no terms for PMU %s", head);
			char copy[PMU_SPEC_MAX + 1];
			for (int i = 0; i < npm; i++) {
				int first = ps->n;
				snprintf(copy, sizeof(copy), "%s", terms);
				if ((rc = resolve_on_pmu(c, ps, pm[i], copy, NULL)) < 0)
					return rc;
				if (npm > 1)
					for (int k = first; k < ps->n; k++)
						ps->v[k].flags |= PMU_EV_EXPANDED;
			}
			return 0;
		}
		const struct generic *g = find_generic(head);
		char *colon = strchr(head, ':');
		if (g)
			rc = resolve_generic(c, ps, g);
		else if (is_raw(head))
			rc = resolve_raw(c, ps, head);
		else if (colon) {
			*colon = 0;
			rc = resolve_tracepoint(c, ps, head, colon + 1);
			*colon = ':';
		} else {
			char names[240];
			pmu_names(c->m, names, sizeof(names));
			return fail(c, -ENOENT, "unknown PMU '%s' (PMUs in %s: %s)", head, c->m->sysfs_root,
				    names[0] ? names : "none");
		}
		if (rc < 0)
			return rc;
		return apply_specials(c, ps, 0, terms, head);
	}
	const struct generic *g = find_generic(head);
	if (g)
		return resolve_generic(c, ps, g);
	if (is_raw(head))
		return resolve_raw(c, ps, head);
	for (const char *q = head; *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-' && *q != '.')
			return fail(c, -EINVAL, "unexpected character '%c'", *q);
	return resolve_bare(c, ps, head);
}

/* Modifiers (an event's own, merged with its group's) into its attr. */
static int apply_mods(struct ctx *c, struct proto *p, const struct mods *md)
{
	struct perf_event_attr *a = &p->pa.attr;
	unsigned b = md->bits;
	if (b & (PMU_MOD_USER | PMU_MOD_KERNEL | PMU_MOD_HV)) {
		a->exclude_user = !(b & PMU_MOD_USER);
		a->exclude_kernel = !(b & PMU_MOD_KERNEL);
		a->exclude_hv = !(b & PMU_MOD_HV);
	}
	if (b & (PMU_MOD_GUEST | PMU_MOD_HOST)) {
		a->exclude_guest = !(b & PMU_MOD_GUEST);
		a->exclude_host = !(b & PMU_MOD_HOST);
	}
	if (md->precise && p->desc && p->desc->max_precise >= 0 && md->precise > p->desc->max_precise)
		return fail(c, -EOPNOTSUPP, "precise level %d (:%.*s) is more than PMU %s offers (caps/max_precise %d)",
			    md->precise, md->precise, "ppp", p->desc->name, p->desc->max_precise);
	a->precise_ip = (unsigned)md->precise & 3;
	if (md->precise && !(p->desc && p->desc->max_precise >= 0))
		p->flags |= PMU_EV_PRECISE_UNCHECKED;
	return 0;
}

static int events_reserve(struct ctx *c, struct pmu_events *out, int more)
{
	if (more > PMU_EVENTS_MAX - out->n)
		return fail(c, -E2BIG, "more than %d events", PMU_EVENTS_MAX);
	if (out->n + more <= out->cap)
		return 0;
	int ncap = out->cap ? out->cap : 8;
	while (ncap < out->n + more)
		ncap *= 2;
	struct pmu_event *nv = realloc(out->ev, (size_t)ncap * sizeof(*nv));
	if (!nv)
		return fail(c, -ENOMEM, "out of memory");
	out->ev = nv;
	out->cap = ncap;
	return 0;
}

static void event_free(struct pmu_event *e)
{
	free(e->spec);
	free(e->text);
	free(e->name);
	free(e->pmu);
	free(e->tp_format);
}

/* Appends a proto as an event; takes its tp_format and name. */
static int emit(struct ctx *c, struct pmu_events *out, struct proto *p, const char *item, const char *text,
		int leader, unsigned mods)
{
	int rc = events_reserve(c, out, 1);
	if (rc < 0)
		return rc;
	struct pmu_event *e = &out->ev[out->n];
	memset(e, 0, sizeof(*e));
	e->pa = p->pa;
	e->spec = strdup(item);
	e->text = strdup(text);
	e->name = p->name ? p->name : strdup(text);
	e->pmu = strdup(p->pmu_name);
	e->tp_format = p->tp_format;
	p->name = NULL;
	p->tp_format = NULL;
	e->leader = leader < 0 ? out->n : leader;
	e->nr_members = leader < 0 ? 1 : 0;
	e->mods = mods;
	e->flags = p->flags;
	e->scale = p->scale;
	snprintf(e->unit, sizeof(e->unit), "%s", p->unit);
	out->n++;
	if (!e->spec || !e->text || !e->name || !e->pmu)
		return fail(c, -ENOMEM, "out of memory");
	return 0;
}

struct member {
	char *text;       /* own text, as typed */
	struct protos ps;
	struct mods md;
};

/* A group: the members' attrs, one group per CPU PMU (or PMU instance) when
 * a member opens on several. */
static int build_group(struct ctx *c, struct pmu_events *out, const char *item, struct member *mb, int nm,
		       const struct mods *gm)
{
	int split = -1;
	for (int i = 0; i < nm; i++) {
		if (mb[i].ps.n > 1) {
			if (split < 0) {
				split = i;
				continue;
			}
			/* a second multi-PMU member must open on the same PMUs */
			bool same = mb[i].ps.n == mb[split].ps.n;
			for (int k = 0; same && k < mb[i].ps.n; k++)
				same = mb[i].ps.v[k].desc == mb[split].ps.v[k].desc;
			if (!same) {
				c->ev = mb[i].text;
				return fail(c, -EINVAL, "opens on other PMUs than %s in the same group", mb[split].text);
			}
		}
	}
	int copies = split < 0 ? 1 : mb[split].ps.n;
	for (int k = 0; k < copies; k++) {
		const struct pmu_desc *dk = split < 0 ? NULL : mb[split].ps.v[k].desc;
		int leader = -1, count = 0;
		for (int i = 0; i < nm; i++) {
			struct proto *p;
			if (mb[i].ps.n > 1) {
				p = &mb[i].ps.v[k];
			} else {
				p = &mb[i].ps.v[0];
				/* a member fixed on another CPU PMU joins the copy of its PMU only */
				if (dk && p->desc && p->desc != dk && (p->desc->core || base_len(p->desc->name) == base_len(dk->name)))
					continue;
			}
			struct mods md = mb[i].md;
			c->ev = mb[i].text;
			if (md.bits & PMU_MOD_SAMPLE_READ)
				return fail(c, -EINVAL, "modifier S belongs to the whole group ({...}:S)");
			if ((md.bits & PMU_MOD_PINNED) && i > 0)
				return fail(c, -EINVAL, "modifier D on a group member: only a group leader can be pinned");
			md.bits |= gm->bits;
			if (gm->precise > md.precise)
				md.precise = gm->precise;
			struct proto q = *p;
			q.name = NULL;
			q.tp_format = NULL;
			if ((p->name && !(q.name = strdup(p->name))) || (p->tp_format && !(q.tp_format = strdup(p->tp_format)))) {
				free(q.name);
				return fail(c, -ENOMEM, "out of memory");
			}
			int rc = apply_mods(c, &q, &md);
			struct perf_event_attr *a = &q.pa.attr;
			if (rc == 0 && (md.bits & PMU_MOD_SAMPLE_READ)) {
				a->sample_type |= PERF_SAMPLE_READ;
				a->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID;
				if (leader >= 0) {
					if (q.flags & (PMU_EV_PERIOD | PMU_EV_FREQ))
						rc = fail(c, -EINVAL, "period= or freq= on a member of a sample-read group "
							  "(only its leader samples)");
					a->sample_period = 0;
					a->freq = 0;
					q.flags |= PMU_EV_NO_SAMPLE;
				}
			}
			if (rc == 0 && leader < 0 && (md.bits & PMU_MOD_PINNED))
				a->pinned = 1;
			if (rc == 0)
				rc = emit(c, out, &q, item, mb[i].text, leader, md.bits);
			free(q.name);
			free(q.tp_format);
			if (rc < 0)
				return rc;
			if (leader < 0)
				leader = out->n - 1;
			count++;
		}
		if (leader >= 0)
			out->ev[leader].nr_members = count;
	}
	return 0;
}

/* Length of the next item or member: up to a comma outside '/.../' and
 * '{...}'. @return its length, or -1 with *why set. */
static long next_item(const char *s, bool in_group, const char **why)
{
	bool slash = false, brace = false;
	size_t i;
	for (i = 0; s[i]; i++) {
		char ch = s[i];
		if (ch == '/') {
			slash = !slash;
		} else if (slash) {
			continue;
		} else if (ch == '{') {
			if (brace || in_group) {
				*why = "groups cannot nest";
				return -1;
			}
			if (i != 0) {
				*why = "'{' must begin a group";
				return -1;
			}
			brace = true;
		} else if (ch == '}') {
			if (!brace) {
				*why = "'}' without '{'";
				return -1;
			}
			brace = false;
		} else if (ch == ',' && !brace) {
			break;
		}
	}
	if (slash) {
		*why = "no closing '/' after the terms";
		return -1;
	}
	if (brace) {
		*why = "no closing '}'";
		return -1;
	}
	return (long)i;
}

static int parse_item(struct ctx *c, const char *item, struct pmu_events *out)
{
	int rc = 0;
	char text[PMU_SPEC_MAX + 1];
	c->ev = item;
	if (item[0] != '{') {
		struct protos ps = {0};
		struct mods md;
		snprintf(text, sizeof(text), "%s", item);
		rc = parse_event(c, text, &ps, &md);
		for (int k = 0; rc == 0 && k < ps.n; k++) {
			c->ev = item;
			if ((rc = apply_mods(c, &ps.v[k], &md)) < 0)
				break;
			if (md.bits & PMU_MOD_SAMPLE_READ)
				ps.v[k].pa.attr.sample_type |= PERF_SAMPLE_READ;
			if (md.bits & PMU_MOD_PINNED)
				ps.v[k].pa.attr.pinned = 1;
			rc = emit(c, out, &ps.v[k], item, item, -1, md.bits);
		}
		protos_free(&ps);
		return rc;
	}
	/* {A,B,...}[:MODS]: next_item() saw the braces balance */
	const char *close = strrchr(item, '}');
	struct mods gm = {0};
	if (close[1]) {
		if (close[1] != ':')
			return fail(c, -EINVAL, "'%s' after a group: modifiers follow ':'", close + 1);
		if (!close[2])
			return fail(c, -EINVAL, "nothing after ':'");
		if ((rc = parse_mods(c, close + 2, &gm)) < 0)
			return rc;
	}
	char inner[PMU_SPEC_MAX + 1];
	snprintf(inner, sizeof(inner), "%.*s", (int)(close - item - 1), item + 1);
	if (!inner[0])
		return fail(c, -EINVAL, "empty group");
	enum { MAX_MEMBERS = 64 };
	struct member *mb = calloc(MAX_MEMBERS, sizeof(*mb));
	if (!mb)
		return fail(c, -ENOMEM, "out of memory");
	int nm = 0;
	for (char *s = inner;;) {
		const char *why = NULL;
		long len = next_item(s, true, &why);
		c->ev = item;
		if (len < 0) {
			rc = fail(c, -EINVAL, "%s", why);
			break;
		}
		if (nm == MAX_MEMBERS) {
			rc = fail(c, -E2BIG, "more than %d events in a group", MAX_MEMBERS);
			break;
		}
		bool last = s[len] == 0;
		s[len] = 0;
		struct member *m = &mb[nm++];
		m->text = s;
		if (!*s) {
			rc = fail(c, -EINVAL, "empty event in the group");
			break;
		}
		snprintf(text, sizeof(text), "%s", s);
		c->ev = s;
		if ((rc = parse_event(c, text, &m->ps, &m->md)) < 0)
			break;
		if (last)
			break;
		s += len + 1;
	}
	if (rc == 0)
		rc = build_group(c, out, item, mb, nm, &gm);
	for (int i = 0; i < nm; i++)
		protos_free(&mb[i].ps);
	free(mb);
	return rc;
}

int pmu_parse(struct pmu_model *m, const char *spec, struct pmu_events *out, char *err, size_t errlen)
{
	struct ctx c = {.m = m, .err = err, .errlen = errlen, .ev = spec};
	int start = out->n, rc = 0;
	if (err && errlen)
		err[0] = 0;
	size_t len = strnlen(spec, PMU_SPEC_MAX + 1);
	if (len > PMU_SPEC_MAX) {
		set_err(err, errlen, "%.40s...: longer than %d bytes", spec, PMU_SPEC_MAX);
		return -E2BIG;
	}
	if (!len) {
		set_err(err, errlen, "empty event spec");
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if (!isgraph((unsigned char)spec[i])) {
			if (spec[i] == ' ')
				return fail(&c, -EINVAL, "unexpected space");
			return fail(&c, -EINVAL, "unexpected character 0x%02x", (unsigned char)spec[i]);
		}
	char item[PMU_SPEC_MAX + 1];
	for (const char *s = spec;;) {
		const char *why = NULL;
		long n = next_item(s, false, &why);
		c.ev = spec; /* syntax errors name the whole spec */
		if (n < 0) {
			rc = fail(&c, -EINVAL, "%s", why);
			break;
		}
		memcpy(item, s, (size_t)n);
		item[n] = 0;
		if (!n) {
			rc = fail(&c, -EINVAL, "empty event between commas");
			break;
		}
		if ((rc = parse_item(&c, item, out)) < 0)
			break;
		if (!s[n])
			break;
		s += n + 1;
		if (!*s) {
			c.ev = spec;
			rc = fail(&c, -EINVAL, "empty event after the last comma");
			break;
		}
	}
	if (rc < 0) {
		for (int i = start; i < out->n; i++)
			event_free(&out->ev[i]);
		out->n = start;
	}
	return rc;
}

void pmu_events_free(struct pmu_events *evs)
{
	for (int i = 0; i < evs->n; i++)
		event_free(&evs->ev[i]);
	free(evs->ev);
	memset(evs, 0, sizeof(*evs));
}

/* ---- listing ------------------------------------------------------------------------- */

static bool has_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

static bool pat_match(const char *pat, const char *s)
{
	if (!pat)
		return true;
	if (has_glob(pat))
		return fnmatch(pat, s, FNM_CASEFOLD) == 0;
	return strcasestr(s, pat) != NULL;
}

/* The config words an events/ entry gives, or why not ("needs umask="). */
static void alias_encoding(struct pmu_model *m, struct pmu_desc *d, const struct alias *a, char *buf,
			   size_t size)
{
	char err[512];
	struct ctx c = {.m = m, .err = err, .errlen = sizeof(err), .ev = a->name};
	struct protos ps = {0};
	const char *q = a->terms ? strstr(a->terms, "=?") : NULL;
	if (q) {
		/* the first field the user must give */
		const char *b = q;
		while (b > a->terms && b[-1] != ',')
			b--;
		snprintf(buf, size, "(needs %.*s=VALUE)", (int)(q - b), b);
	} else if (resolve_on_pmu(&c, &ps, d, NULL, a) < 0) {
		const char *why = strchr(err, ':');
		snprintf(buf, size, "(%s)", why ? why + 2 : err);
	} else {
		const struct proto *p = &ps.v[0];
		int o = snprintf(buf, size, "config=0x%" PRIx64, (uint64_t)p->pa.attr.config);
		uint64_t w[3] = {p->pa.attr.config1, p->pa.attr.config2, PMU_CONFIG3(&p->pa)};
		for (int i = 0; i < 3; i++)
			if (w[i] && o > 0 && (size_t)o < size)
				o += snprintf(buf + o, size - (size_t)o, " config%d=0x%" PRIx64, i + 1, w[i]);
		if ((a->scale != 1.0 || a->unit[0]) && o > 0 && (size_t)o < size)
			snprintf(buf + o, size - (size_t)o, " scale=%.10g%s%s", a->scale, a->unit[0] ? " unit=" : "",
				 a->unit);
	}
	protos_free(&ps);
}

int pmu_list(struct pmu_model *m, const char *pattern, FILE *f)
{
	int count = 0, rc;
	char err[512], line[600];
	if (pattern && !*pattern)
		pattern = NULL;

	bool head = false;
	for (size_t i = 0; i < NGENERIC; i++) {
		const struct generic *g = &generics[i];
		if (!pat_match(pattern, g->name))
			continue;
		if (!head)
			fprintf(f, "Generic events:\n");
		head = true;
		fprintf(f, "  %-40s %s event (%s)\n", g->name, g->type == PERF_TYPE_HARDWARE ? "hardware" : "software",
			g->what);
		count++;
	}

	for (int i = 0; i < m->npmus; i++) {
		struct pmu_desc *d = &m->pmus[i];
		if ((rc = pmu_load(m, d, err, sizeof(err))) < 0) {
			fprintf(f, "PMU %s: %s\n", d->name, err);
			continue;
		}
		if (!d->naliases && !d->nfields)
			continue;
		bool all = pattern && pat_match(pattern, d->name);
		head = false;
		for (int k = 0; k < d->naliases; k++) {
			const struct alias *a = &d->aliases[k];
			char full[300];
			snprintf(full, sizeof(full), "%s/%s/", d->name, a->name);
			if (!all && !pat_match(pattern, full))
				continue;
			if (!head) {
				fprintf(f, "PMU %s (type %u%s", d->name, d->type, d->core ? ", CPU PMU" : "");
				if (d->max_precise >= 0)
					fprintf(f, ", max_precise %d", d->max_precise);
				fprintf(f, "):\n");
				head = true;
			}
			alias_encoding(m, d, a, line, sizeof(line));
			fprintf(f, "  %-40s %s  %s\n", full, a->terms ? a->terms : "(unreadable)", line);
			count++;
		}
		if (d->nfields && (head || !pattern || all)) {
			if (!head) {
				/* a PMU of terms only (uprobe): its formats are its entry */
				fprintf(f, "PMU %s (type %u%s):\n", d->name, d->type, d->core ? ", CPU PMU" : "");
				count++;
			}
			fprintf(f, "  formats:");
			for (int k = 0; k < d->nfields; k++)
				fprintf(f, " %s=%s", d->fields[k].name, d->fields[k].text);
			fprintf(f, "\n");
		}
	}

	if (!m->tracefs_root)
		return count;
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/events", m->tracefs_root) >= (int)sizeof(path))
		return count;
	char **subs = NULL;
	int ns = list_dir(path, &subs);
	if (ns < 0)
		return count;
	head = false;
	for (int i = 0; i < ns; i++) {
		char sp[PATH_MAX];
		if (join_path(sp, sizeof(sp), path, subs[i], NULL) < 0 || !is_dir(sp))
			continue;
		char **evs = NULL;
		int ne = list_dir(sp, &evs);
		if (ne < 0)
			continue;
		int nev = 0;
		for (int k = 0; k < ne; k++) {
			char ep[PATH_MAX];
			if (join_path(ep, sizeof(ep), sp, evs[k], NULL) < 0 || !is_dir(ep))
				continue;
			nev++;
			if (!pattern)
				continue;
			char full[600];
			snprintf(full, sizeof(full), "%s:%s", subs[i], evs[k]);
			if (!pat_match(pattern, full))
				continue;
			if (!head)
				fprintf(f, "Tracepoints (%s):\n", path);
			head = true;
			fprintf(f, "  %s\n", full);
			count++;
		}
		if (!pattern && nev) {
			if (!head)
				fprintf(f, "Tracepoint subsystems (%s; pfrec --list SUBSYS lists their tracepoints):\n", path);
			head = true;
			fprintf(f, "  %-40s %d tracepoint%s\n", subs[i], nev, nev == 1 ? "" : "s");
			count++;
		}
		free_names(evs, ne);
	}
	free_names(subs, ns);
	return count;
}
