/* memfd_jit MS [anon]: x86_64 code written into a memfd named "jit", mapped
 * executable and run for MS ms from host_loop(): the mapping shows as
 * "/memfd:jit (deleted)", a path that must never be opened.
 * With "anon" the code goes into anonymous memory (mmap MAP_ANONYMOUS,
 * written, then made executable with mprotect), as a JIT compiler does: the
 * mapping shows as "//anon", which is no file at all. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "now_s.h"

__attribute__((noinline)) void host_loop(void (*jit)(void), double seconds)
{
	double end = now_s() + seconds;
	while (now_s() < end)
		jit();
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* mov ecx, 200000; 1: dec ecx; jnz 1b; ret */
	static const unsigned char code[] = { 0xb9, 0x40, 0x0d, 0x03, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	void *p;
	if (argc > 2 && strcmp(argv[2], "anon") == 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		memcpy(p, code, sizeof(code));
		if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0)
			return 1;
	} else {
		int fd = memfd_create("jit", 0);
		if (fd < 0 || ftruncate(fd, 4096) != 0 || pwrite(fd, code, sizeof(code), 0) != (ssize_t)sizeof(code))
			return 1;
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 1;
	}
	host_loop((void (*)(void))p, argc > 1 ? atof(argv[1]) / 1000.0 : 1.0);
	return 0;
#else
	(void)argc;
	(void)argv;
	return 77;
#endif
}
