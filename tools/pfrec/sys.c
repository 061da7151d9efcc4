/*
 * pfrec/sys.c - perf_event_open(2), ring buffers, /proc reads and the META
 * section of pfrec. Event specs are parsed in pfrec/pmu_parse.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "pfrec.h"

int pfrec_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			  unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int pfrec_ring_map(struct pfrec_ring *r, int fd, int cpu, unsigned pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)(pages + 1) * (size_t)psz;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->fd = fd;
	r->cpu = cpu;
	r->base = p;
	r->map_bytes = bytes;
	r->data = (uint8_t *)p + psz;
	r->data_bytes = (uint64_t)pages * (uint64_t)psz;
	return 0;
}

void pfrec_ring_unmap(struct pfrec_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_bytes);
	r->base = NULL;
}

int pfrec_read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return pfrec_read_fd(fd, max, out, len);
}

int pfrec_read_fd(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (cap - n < 4096 + 1) {
			if (cap >= max + 1)
				break;
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		size_t want = cap - n - 1;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(buf);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n >= max)
			break;
	}
	close(fd);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

int pfrec_read_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r;
	do
		r = read(fd, buf, size - 1);
	while (r < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	if (r < 0)
		return -e;
	buf[r] = 0;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return (int)strlen(buf);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int pfrec_parse_cpu_list(const char *s, int **out)
{
	int *v = NULL;
	size_t n = 0, cap = 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b;
		if (end == p || a < 0 || a > 65535 || errno)
			goto bad;
		p = end;
		b = a;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b > 65535)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				int *nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto bad;
		else if (*p == '\n')
			break;
	}
	if (n == 0)
		goto bad;
	qsort(v, n, sizeof(*v), cmp_int);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	*out = v;
	return (int)m;
bad:
	free(v);
	return -EINVAL;
}

int pfrec_online_cpus(int **out)
{
	char buf[4096];
	if (pfrec_read_line("/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0) {
		int n = pfrec_parse_cpu_list(buf, out);
		if (n > 0)
			return n;
	}
	long np = sysconf(_SC_NPROCESSORS_ONLN);
	if (np < 1)
		np = 1;
	int *v = malloc((size_t)np * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (long i = 0; i < np; i++)
		v[i] = (int)i;
	*out = v;
	return (int)np;
}

uint64_t pfrec_now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pfrec_paranoid(void)
{
	char buf[32];
	if (pfrec_read_line("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf)) <= 0)
		return 2;
	return atoi(buf);
}

/* "model name" (x86 and others) or, failing that, "CPU part" (arm64) from /proc/cpuinfo. */
static void cpu_model(char *out, size_t size)
{
	char *buf;
	size_t len;
	out[0] = 0;
	if (pfrec_read_file("/proc/cpuinfo", 64 << 10, &buf, &len) < 0)
		return;
	static const char *const keys[] = {"model name", "CPU part", "cpu model", "uarch", "cpu"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !out[0]; k++) {
		size_t kl = strlen(keys[k]);
		for (char *line = buf; line && *line;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = 0;
			if (strncmp(line, keys[k], kl) == 0 && (line[kl] == ' ' || line[kl] == '\t' || line[kl] == ':')) {
				char *c = strchr(line, ':');
				if (c) {
					c++;
					while (*c == ' ' || *c == '\t')
						c++;
					snprintf(out, size, "%s", c);
				}
			}
			if (nl)
				*nl = '\n';
			if (out[0])
				break;
			line = nl ? nl + 1 : NULL;
		}
	}
	free(buf);
}

static int kv_join(struct pf_buf *b, const char *key, int argc, char **argv)
{
	size_t n = 1;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = malloc(n), *p = s;
	if (!s)
		return -ENOMEM;
	*p = 0;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);
		if (i)
			*p++ = ' ';
		memcpy(p, argv[i], l);
		p += l;
		*p = 0;
	}
	int rc = pf_kv_add(b, key, s);
	free(s);
	return rc;
}

int pfrec_meta_build(struct pf_buf *b, const struct pfrec_meta_in *in)
{
	struct utsname u;
	char model[256];
	int rc = 0;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	cpu_model(model, sizeof(model));
	rc |= pf_kv_add(b, "arch", u.machine);
	rc |= pf_kv_add_u64(b, "e_machine", pf_host_e_machine());
	rc |= pf_kv_add(b, "kernel_release", u.release);
	rc |= pf_kv_add(b, "hostname", u.nodename);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	rc |= pf_kv_add_u64(b, "nr_cpus_online", ncpu > 0 ? (uint64_t)ncpu : 0);
	if (model[0])
		rc |= pf_kv_add(b, "cpu_model", model);
	rc |= pf_kv_add_u64(b, "page_size", (uint64_t)sysconf(_SC_PAGESIZE));
	if (in->clock_id >= 0)
		rc |= pf_kv_add_u64(b, "clock_id", (uint64_t)in->clock_id);
	rc |= pf_kv_add_u64(b, "clock_anchor_monotonic_ns", in->anchor_mono_ns);
	rc |= pf_kv_add_u64(b, "clock_anchor_realtime_ns", in->anchor_real_ns);
	if (in->cmd_argc > 0)
		rc |= kv_join(b, "cmdline", in->cmd_argc, in->cmd_argv);
	rc |= kv_join(b, "pfrec_cmdline", in->argc, in->argv);
	char version[64];
	snprintf(version, sizeof(version), "pfrec (pftools) %s", pf_version());
	rc |= pf_kv_add(b, "tool_version", version);
	if (in->start_time_ns)
		rc |= pf_kv_add_u64(b, "start_time_ns", in->start_time_ns);
	if (in->event_fallback)
		rc |= pf_kv_add(b, "event_fallback", in->event_fallback);
	rc |= pf_kv_add_u64(b, "exclude_kernel", in->exclude_kernel ? 1 : 0);
	return rc ? -ENOMEM : 0;
}
