/*
 * tools/common/proof.c - proving a file is the one recorded (proof.h).
 */
#include "proof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

int pf_proof_running_text(uint64_t *text)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	char line[512];
	int found = 0;
	/* _text is among the first lines; the core kernel comes first */
	for (int i = 0; i < 200000 && fgets(line, sizeof(line), f); i++) {
		unsigned long long a;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (strcmp(name, "_text") == 0) {
			*text = a;
			found = a != 0;
			break;
		}
		if (strchr(line, '['))
			break; /* the modules: past the core kernel */
	}
	fclose(f);
	return found;
}

int pf_proof_running_syms(const char *const *names, uint64_t *addrs, int n)
{
	for (int i = 0; i < n; i++)
		addrs[i] = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	char line[640];
	int found = 0;
	while (found < n && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256];
		if (strchr(line, '['))
			break;
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		for (int i = 0; i < n; i++)
			if (!addrs[i] && a && strcmp(name, names[i]) == 0) {
				addrs[i] = a;
				found++;
			}
	}
	fclose(f);
	return found;
}

size_t pf_proof_note_build_id(const char *path, uint8_t bid[64])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint8_t b[1 << 16];
	size_t len = 0;
	for (;;) {
		ssize_t r = read(fd, b + len, sizeof(b) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == sizeof(b))
			break;
	}
	close(fd);
	size_t p = 0;
	while (len - p >= 12) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, b + p, 4);
		memcpy(&dsz, b + p + 4, 4);
		memcpy(&type, b + p + 8, 4);
		size_t nal = ((size_t)nsz + 3) & ~(size_t)3, dal = ((size_t)dsz + 3) & ~(size_t)3;
		if (nal > len - p - 12 || dal > len - p - 12 - nal)
			break;
		const uint8_t *name = b + p + 12, *desc = name + nal;
		if (type == 3 && nsz == 4 && memcmp(name, "GNU", 4) == 0 && dsz && dsz <= 64) {
			memcpy(bid, desc, dsz);
			return dsz;
		}
		p += 12 + nal + dal;
	}
	return 0;
}

int pf_proof_same_boot(const char *hostname, const char *release, uint64_t text, char *why, size_t why_size)
{
	struct utsname u;
	if (uname(&u) < 0) {
		snprintf(why, why_size, "uname: %s", strerror(errno));
		return 0;
	}
	if (!hostname) {
		snprintf(why, why_size, "the recording names no host");
		return 0;
	}
	if (strcmp(hostname, u.nodename) != 0) {
		snprintf(why, why_size, "recorded on host '%.64s', this is '%.64s'", hostname, u.nodename);
		return 0;
	}
	if (!release || strcmp(release, u.release) != 0) {
		snprintf(why, why_size, "recorded under kernel %.64s, this runs %.64s", release ? release : "(unknown)",
			 u.release);
		return 0;
	}
	uint64_t now;
	if (!text) {
		snprintf(why, why_size, "the recording has no kernel _text address to tell its boot");
		return 0;
	}
	if (!pf_proof_running_text(&now)) {
		snprintf(why, why_size, "/proc/kallsyms shows no _text here (hidden addresses): the boot is unknown");
		return 0;
	}
	if (now != text) {
		snprintf(why, why_size, "recorded in another boot (kernel _text 0x%llx, now 0x%llx)",
			 (unsigned long long)text, (unsigned long long)now);
		return 0;
	}
	return 1;
}

int pf_proof_file(int fd, uint32_t maj, uint32_t min, uint64_t ino, uint64_t start_ns, char *why, size_t why_size)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		snprintf(why, why_size, "fstat: %s", strerror(errno));
		return 0;
	}
	if (major(st.st_dev) != maj || minor(st.st_dev) != min) {
		snprintf(why, why_size, "device %x:%x recorded, %x:%x now: another file", maj, min, major(st.st_dev),
			 minor(st.st_dev));
		return 0;
	}
	if ((uint64_t)st.st_ino != ino) {
		snprintf(why, why_size, "inode %llu recorded, %llu now: replaced since", (unsigned long long)ino,
			 (unsigned long long)st.st_ino);
		return 0;
	}
	if (!start_ns) {
		snprintf(why, why_size, "the recording's start time is unknown: its change time cannot be checked");
		return 0;
	}
	uint64_t ct = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
	if (st.st_ctim.tv_sec < 0 || ct >= start_ns) {
		snprintf(why, why_size, "same inode, changed %.3f s after the recording started: rewritten since",
			 ((double)ct - (double)start_ns) / 1e9);
		return 0;
	}
	return 1;
}
