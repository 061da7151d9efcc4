/*
 * pfrec/pmu_model.c - the model of sysfs PMUs that event specifications are
 * resolved against (pmu_parse.c; pmu.h says the syntax and the sources).
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
#include "pmu_internal.h"

#define SYSFS_DEFAULT "/sys/bus/event_source/devices"

#ifndef PERF_ATTR_SIZE_VER8
_Static_assert(sizeof(struct perf_event_attr) == PERF_ATTR_SIZE_VER7,
	       "perf_event_attr without config3 should end at sig_data");
#endif
_Static_assert(sizeof(struct pmu_attr) >= 136, "pmu_attr must reach config3");

/* ---- small helpers ------------------------------------------------------------ */

void pmu_set_err(char *err, size_t errlen, const char *fmt, ...)
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

int pmu_join_path(char *buf, size_t size, const char *a, const char *b, const char *c)
{
	int n = snprintf(buf, size, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");
	return (n < 0 || (size_t)n >= size) ? -ENAMETOOLONG : 0;
}

/* Reads a small text file whole, trailing white space cut.
 * @return its length, or -errno (-EFBIG beyond FILE_MAX - 1 bytes). */
int pmu_read_small(const char *path, char *buf, size_t size)
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

bool pmu_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Decimal, or hex after 0x. @return 0 or -EINVAL (not a number), -ERANGE. */
int pmu_parse_u64(const char *s, size_t n, uint64_t *out)
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

int pmu_popcount64(uint64_t v)
{
	return __builtin_popcountll(v);
}

/* The value's low bits spread over the set bits of mask, lowest first (the
 * kernel's format bitmaps: "config:0-7,32-35" takes value bits 0-7 into
 * config bits 0-7 and value bits 8-11 into 32-35). */
uint64_t pmu_deposit(uint64_t v, uint64_t mask)
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

uint64_t pmu_field_max(uint64_t mask)
{
	int w = pmu_popcount64(mask);
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
int pmu_list_dir(const char *path, char ***out)
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

void pmu_free_names(char **v, int n)
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

/* Lists the PMU's subdirectory SUB (format or events) into *names, its
 * path into path. @return the number of names (0 when SUB is missing), or
 * -errno with err set. */
static int list_sub(struct pmu_model *m, struct pmu_desc *p, const char *sub, char path[PATH_MAX], char ***names,
		    char *err, size_t errlen)
{
	*names = NULL;
	if (pmu_join_path(path, PATH_MAX, m->sysfs_root, p->name, sub) < 0) {
		pmu_set_err(err, errlen, "PMU %s: path too long under %s", p->name, m->sysfs_root);
		return -ENAMETOOLONG;
	}
	int n = pmu_list_dir(path, names);
	if (n == -ENOENT)
		return 0;
	if (n < 0)
		pmu_set_err(err, errlen, "PMU %s: cannot read %s: %s", p->name, path, strerror(-n));
	return n;
}

static int nomem(char *err, size_t errlen)
{
	pmu_set_err(err, errlen, "out of memory");
	return -ENOMEM;
}

/* list_sub(), and *arr zeroed for one element of elem_size bytes per name.
 * @return the number of names (0: none, *arr left alone), or -errno with err
 * set (*names freed). */
static int list_sub_for(struct pmu_model *m, struct pmu_desc *p, const char *sub, char path[PATH_MAX],
			char ***names, void **arr, size_t elem_size, char *err, size_t errlen)
{
	int n = list_sub(m, p, sub, path, names, err, errlen);
	if (n <= 0)
		return n;
	if (!(*arr = calloc((size_t)n, elem_size))) {
		pmu_free_names(*names, n);
		return nomem(err, errlen);
	}
	return n;
}

/* Reads the file `name` of directory `dir` into buf, its path into fp.
 * @return false for an entry to pass over (its path too long, a directory),
 * else true with pmu_read_small()'s result in *r. */
static bool read_entry(const char *dir, const char *name, char fp[PATH_MAX], char *buf, size_t size, int *r)
{
	if (pmu_join_path(fp, PATH_MAX, dir, name, NULL) < 0)
		return false;
	*r = pmu_read_small(fp, buf, size);
	return *r != -EISDIR;
}

/* format/: one field per file, sorted by name. @return 0 or -errno. */
static int load_formats(struct pmu_model *m, struct pmu_desc *p, char *err, size_t errlen)
{
	char path[PATH_MAX], buf[FILE_MAX];
	char **names;
	int n = list_sub_for(m, p, "format", path, &names, (void **)&p->fields, sizeof(*p->fields), err, errlen);
	if (n <= 0)
		return n;
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char fp[PATH_MAX];
		struct field *f = &p->fields[p->nfields];
		int r;
		if (!read_entry(path, names[i], fp, buf, sizeof(buf), &r))
			continue;
		f->name = names[i];
		names[i] = NULL;
		f->text = strdup(r >= 0 ? buf : "(unreadable)");
		p->nfields++;
		if (!f->text) {
			rc = nomem(err, errlen);
			goto out;
		}
		if (r < 0 || parse_format(buf, &f->word, &f->mask) < 0)
			f->word = -1;
	}
	qsort(p->fields, (size_t)p->nfields, sizeof(*p->fields), cmp_field);
out:
	pmu_free_names(names, n);
	return rc;
}

/* events/: one alias per file with its .scale and .unit, sorted by name.
 * @return 0 or -errno. */
static int load_aliases(struct pmu_model *m, struct pmu_desc *p, char *err, size_t errlen)
{
	char path[PATH_MAX], buf[FILE_MAX];
	char **names;
	int n = list_sub_for(m, p, "events", path, &names, (void **)&p->aliases, sizeof(*p->aliases), err, errlen);
	if (n <= 0)
		return n;
	int rc = 0;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i];
		if (ends_with(nm, ".scale") || ends_with(nm, ".unit") || ends_with(nm, ".per-pkg") ||
		    ends_with(nm, ".snapshot"))
			continue;
		char fp[PATH_MAX];
		struct alias *a = &p->aliases[p->naliases];
		int r;
		if (!read_entry(path, nm, fp, buf, sizeof(buf), &r))
			continue;
		a->name = names[i];
		names[i] = NULL;
		a->scale = 1.0;
		p->naliases++;
		if (r >= 0) {
			if (!(a->terms = strdup(buf))) {
				rc = nomem(err, errlen);
				goto out;
			}
		} else {
			a->read_err = -r;
		}
		char sp[PATH_MAX];
		if (snprintf(sp, sizeof(sp), "%s.scale", fp) < (int)sizeof(sp) &&
		    pmu_read_small(sp, buf, sizeof(buf)) > 0) {
			char *end;
			double sc = strtod(buf, &end);
			if (end != buf && !*end && sc > 0 && sc < 1e300)
				a->scale = sc;
		}
		if (snprintf(sp, sizeof(sp), "%s.unit", fp) < (int)sizeof(sp) &&
		    pmu_read_small(sp, buf, sizeof(buf)) > 0)
			snprintf(a->unit, sizeof(a->unit), "%.31s", buf);
	}
	qsort(p->aliases, (size_t)p->naliases, sizeof(*p->aliases), cmp_alias);
out:
	pmu_free_names(names, n);
	return rc;
}

/* Reads format/, events/ and caps/max_precise of a PMU once.
 * @return 0 or -errno with err set. */
int pmu_load(struct pmu_model *m, struct pmu_desc *p, char *err, size_t errlen)
{
	if (p->loaded)
		return 0;
	int rc = load_formats(m, p, err, errlen);
	if (rc == 0)
		rc = load_aliases(m, p, err, errlen);
	if (rc < 0) { /* as before: the next use tries again */
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
	/* caps/max_precise */
	char path[PATH_MAX], buf[FILE_MAX];
	p->max_precise = -1;
	if (pmu_join_path(path, sizeof(path), m->sysfs_root, p->name, "caps/max_precise") == 0 &&
	    pmu_read_small(path, buf, sizeof(buf)) > 0) {
		uint64_t v;
		if (pmu_parse_u64(buf, strlen(buf), &v) == 0 && v <= 3)
			p->max_precise = (int)v;
	}
	p->loaded = true;
	return 0;
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
	if (sys_given && !pmu_is_dir(sys)) {
		pmu_set_err(err, errlen, "%s: not a folder (the sysfs root that replaces %s)", sys, SYSFS_DEFAULT);
		return -ENOTDIR;
	}
	struct pmu_model *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (!(m->sysfs_root = strdup(sys)))
		goto nomem;
	if (!tfs) {
		if (pmu_is_dir("/sys/kernel/tracing/events"))
			tfs = "/sys/kernel/tracing";
		else if (pmu_is_dir("/sys/kernel/debug/tracing/events"))
			tfs = "/sys/kernel/debug/tracing";
	}
	if (tfs && !(m->tracefs_root = strdup(tfs)))
		goto nomem;

	char **names = NULL;
	int n = pmu_list_dir(sys, &names);
	if (n < 0 && n != -ENOENT) {
		pmu_set_err(err, errlen, "%s: %s", sys, strerror(-n));
		pmu_model_close(m);
		return n;
	}
	if (n > 0) {
		m->pmus = calloc((size_t)n, sizeof(*m->pmus));
		if (!m->pmus) {
			pmu_free_names(names, n);
			goto nomem;
		}
		for (int i = 0; i < n; i++) {
			char path[PATH_MAX], buf[64];
			uint64_t type;
			if (pmu_join_path(path, sizeof(path), sys, names[i], "type") < 0)
				continue;
			int r = pmu_read_small(path, buf, sizeof(buf));
			if (r <= 0 || pmu_parse_u64(buf, (size_t)r, &type) < 0 || type > UINT32_MAX)
				continue; /* not a PMU */
			struct pmu_desc *p = &m->pmus[m->npmus++];
			p->name = names[i];
			names[i] = NULL;
			p->type = (uint32_t)type;
			p->max_precise = -1;
			p->core = strcmp(p->name, "cpu") == 0 ||
				  (pmu_join_path(path, sizeof(path), sys, p->name, "cpus") == 0 && access(path, F_OK) == 0);
			m->ncore += p->core;
		}
		pmu_free_names(names, n);
		qsort(m->pmus, (size_t)m->npmus, sizeof(*m->pmus), cmp_pmu);
	}
	*out = m;
	return 0;
nomem:
	pmu_model_close(m);
	pmu_set_err(err, errlen, "out of memory");
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

const struct field *pmu_find_field(const struct pmu_desc *p, const char *name)
{
	for (int i = 0; i < p->nfields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return &p->fields[i];
	return NULL;
}

/* sysfs event names are matched without regard to case, as perf does */
const struct alias *pmu_find_alias(const struct pmu_desc *p, const char *name)
{
	for (int i = 0; i < p->naliases; i++)
		if (strcasecmp(p->aliases[i].name, name) == 0)
			return &p->aliases[i];
	return NULL;
}

/* The length of name without a "_N" suffix (N decimal digits). */
size_t pmu_base_len(const char *name)
{
	size_t n = strlen(name), i = n;
	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	if (i < n && i > 1 && name[i - 1] == '_')
		return i - 1;
	return n;
}

/* ---- generic names ----------------------------------------------------------------- */

/* The names pfrec has always taken (perf's legacy names). */
const struct generic pmu_generics[] = {
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
	/* counts nothing: an event for the side-band records alone */
	{"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "PERF_COUNT_SW_DUMMY"},
};
const size_t pmu_ngeneric = sizeof(pmu_generics) / sizeof(pmu_generics[0]);

/* perf's names of the hardware cache events (tools/perf/util/evsel.c
 * evsel__hw_cache, evsel__hw_cache_op, evsel__hw_cache_result; the first
 * name of each is the one perf lists), by the kernel's ids. */
#define CACHE_ALIASES 5
static const char *const cache_names[PERF_COUNT_HW_CACHE_MAX][CACHE_ALIASES] = {
	[PERF_COUNT_HW_CACHE_L1D] = { "L1-dcache", "l1-d", "l1d", "L1-data" },
	[PERF_COUNT_HW_CACHE_L1I] = { "L1-icache", "l1-i", "l1i", "L1-instruction" },
	[PERF_COUNT_HW_CACHE_LL] = { "LLC", "L2" },
	[PERF_COUNT_HW_CACHE_DTLB] = { "dTLB", "d-tlb", "Data-TLB" },
	[PERF_COUNT_HW_CACHE_ITLB] = { "iTLB", "i-tlb", "Instruction-TLB" },
	[PERF_COUNT_HW_CACHE_BPU] = { "branch", "branches", "bpu", "btb", "bpc" },
	[PERF_COUNT_HW_CACHE_NODE] = { "node" },
};
static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][CACHE_ALIASES] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "load", "loads", "read" },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "store", "stores", "write" },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_results[PERF_COUNT_HW_CACHE_RESULT_MAX][CACHE_ALIASES] = {
	[PERF_COUNT_HW_CACHE_RESULT_ACCESS] = { "refs", "Reference", "ops", "access" },
	[PERF_COUNT_HW_CACHE_RESULT_MISS] = { "misses", "miss" },
};
/* the ops perf takes for each cache (evsel__hw_cache_stat) */
#define OPS_R (1u << PERF_COUNT_HW_CACHE_OP_READ)
#define OPS_RWP (OPS_R | 1u << PERF_COUNT_HW_CACHE_OP_WRITE | 1u << PERF_COUNT_HW_CACHE_OP_PREFETCH)
static const unsigned cache_ops_valid[PERF_COUNT_HW_CACHE_MAX] = {
	[PERF_COUNT_HW_CACHE_L1D] = OPS_RWP, [PERF_COUNT_HW_CACHE_L1I] = OPS_R | 1u << PERF_COUNT_HW_CACHE_OP_PREFETCH,
	[PERF_COUNT_HW_CACHE_LL] = OPS_RWP,  [PERF_COUNT_HW_CACHE_DTLB] = OPS_RWP,
	[PERF_COUNT_HW_CACHE_ITLB] = OPS_R,  [PERF_COUNT_HW_CACHE_BPU] = OPS_R,
	[PERF_COUNT_HW_CACHE_NODE] = OPS_RWP,
};

/* The alias of table[0..n) that `s` starts with, followed by '-' or its
 * end (the longest one): its index, with *len its length; -1 if none. */
static int alias_at(const char *s, const char *const (*table)[CACHE_ALIASES], int n, size_t *len)
{
	int best = -1;
	size_t best_len = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < CACHE_ALIASES && table[i][k]; k++) {
			size_t l = strlen(table[i][k]);
			if (l > best_len && strncmp(s, table[i][k], l) == 0 && (s[l] == '-' || !s[l])) {
				best = i;
				best_len = l;
			}
		}
	*len = best_len;
	return best;
}

int pmu_parse_cache(const char *name, uint64_t *config)
{
	/* perf's lexer takes a generic name first: "branch-misses-load" and
	 * "branches-loads" are syntax errors there, not cache events */
	for (size_t i = 0; i < pmu_ngeneric; i++) {
		size_t g = strlen(pmu_generics[i].name);
		if (strncmp(name, pmu_generics[i].name, g) == 0 && name[g] == '-')
			return 0;
	}
	size_t l;
	int cache = alias_at(name, cache_names, PERF_COUNT_HW_CACHE_MAX, &l);
	if (cache < 0)
		return 0;
	int op = -1, result = -1;
	const char *s = name + l;
	for (int tok = 0; *s; tok++) {
		if (tok == 2 || *s != '-')
			return 0;
		s++;
		/* an op or a result, each once; a second one of a kind is
		 * ignored, as perf's parse_events_add_cache() does */
		size_t lo, lr;
		int o = alias_at(s, cache_ops, PERF_COUNT_HW_CACHE_OP_MAX, &lo);
		int r = alias_at(s, cache_results, PERF_COUNT_HW_CACHE_RESULT_MAX, &lr);
		if (o < 0 && r < 0)
			return 0;
		if (o >= 0 && op < 0)
			op = o;
		else if (r >= 0 && result < 0)
			result = r;
		s += o >= 0 ? lo : lr;
	}
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (result < 0)
		result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!(cache_ops_valid[cache] & (1u << op)))
		return 0;
	*config = (uint64_t)cache | (uint64_t)op << 8 | (uint64_t)result << 16;
	return 1;
}

const char *pmu_cache_name(size_t n, char *buf, size_t size, uint64_t *config)
{
	for (int c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++)
		for (int op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++) {
			if (!(cache_ops_valid[c] & (1u << op)))
				continue;
			for (int r = 0; r < PERF_COUNT_HW_CACHE_RESULT_MAX; r++, n--) {
				if (n)
					continue;
				if (r == PERF_COUNT_HW_CACHE_RESULT_ACCESS)
					snprintf(buf, size, "%s-%s", cache_names[c][0], cache_ops[op][1]);
				else
					snprintf(buf, size, "%s-%s-%s", cache_names[c][0], cache_ops[op][0],
						 cache_results[r][0]);
				*config = (uint64_t)c | (uint64_t)op << 8 | (uint64_t)r << 16;
				return buf;
			}
		}
	return NULL;
}

const struct generic *pmu_find_generic(const char *name)
{
	for (size_t i = 0; i < pmu_ngeneric; i++)
		if (strcmp(pmu_generics[i].name, name) == 0)
			return &pmu_generics[i];
	return NULL;
}

