/* remap_text MS [unmap-head]: copies its own executable text into anonymous memory and
 * moves that copy over the original with mremap(MREMAP_FIXED), as servers
 * that put their text on huge pages do at start-up, then spins in
 * spin_one() and spin_two() (called from main) for MS ms. The text mapping
 * is then "//anon" at the addresses the file mapping had. Prints "remapped"
 * once done (or why not, exit 77). With "unmap-head" it then unmaps the
 * file's mapping right before the text (its ELF header page: build with
 * -Wl,-z,now so that nothing needs it later), so that the anonymous text
 * adjoins the file on one side only: it cannot be placed in the file
 * exactly. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "now_s.h"

volatile uint64_t sink;

__attribute__((noinline)) void spin_one(void)
{
	for (int i = 0; i < 200000; i++)
		sink += (uint64_t)i * 3;
}

__attribute__((noinline)) void spin_two(void)
{
	for (int i = 0; i < 200000; i++)
		sink ^= (uint64_t)i * 7;
}

/* The executable mapping of this program's file that holds main(). */
static int text_range(uintptr_t *start, uintptr_t *end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[4096];
	uintptr_t me = (uintptr_t)&text_range;
	int found = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3 && perms[2] == 'x' && me >= a && me < b) {
			*start = a;
			*end = b;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	uintptr_t s, e;
	if (text_range(&s, &e) < 0) {
		puts("no text mapping found");
		return 77;
	}
	size_t n = e - s;
	void *copy = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy == MAP_FAILED)
		return 1;
	memcpy(copy, (void *)s, n);
	if (mprotect(copy, n, PROT_READ | PROT_EXEC) != 0)
		return 1;
	/* from here the code runs from the copy, at the same addresses */
	if (mremap(copy, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)s) != (void *)s) {
		puts("mremap failed");
		return 77;
	}
	if (argc > 2 && strcmp(argv[2], "unmap-head") == 0) {
		FILE *f = fopen("/proc/self/maps", "r");
		char line[4096];
		unsigned long a = 0, b = 0, ha = 0;
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%lx-%lx", &a, &b) == 2 && b == s)
				ha = a;
		if (f)
			fclose(f);
		if (!ha || munmap((void *)ha, s - ha) != 0) {
			puts("no mapping right before the text");
			return 77;
		}
	}
	puts("remapped");
	fflush(stdout);
	double end = now_s() + (argc > 1 ? atof(argv[1]) / 1000.0 : 1.0);
	while (now_s() < end) {
		spin_one();
		spin_two();
	}
	return 0;
}
