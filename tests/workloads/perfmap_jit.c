/* perfmap_jit MS: a JIT in miniature. Writes three functions of machine
 * code (x86_64 or aarch64) into anonymous memory, made executable with
 * mprotect, names them in its own /tmp/perf-PID.map as JIT compilers do
 * (the perf map convention: "START SIZE name", hex without 0x, names with
 * spaces), and runs them for MS ms from host_loop(). The third function's
 * range is named twice: the later line ("jit gamma (recompiled)") overrides
 * the earlier one ("stale_gamma"). Prints its pid on stdout first. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "now_s.h"

typedef void (*fn)(void);

__attribute__((noinline)) void host_loop(fn a, fn b, fn c, double seconds)
{
	double end = now_s() + seconds;
	while (now_s() < end) {
		a();
		b();
		c();
	}
}

/* A loop of `n` (< 65536) decrements, then return: its bytes at p. @return its size. */
static size_t emit_loop(unsigned char *p, unsigned n)
{
#if defined(__x86_64__)
	/* mov ecx, n; 1: dec ecx; jnz 1b; ret */
	unsigned char c[] = { 0xb9, (unsigned char)n, (unsigned char)(n >> 8), 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	memcpy(p, c, sizeof(c));
	return sizeof(c);
#elif defined(__aarch64__)
	/* movz w0, #n; 1: subs w0, w0, #1; b.ne 1b; ret */
	unsigned int c[] = { 0x52800000u | (n & 0xffffu) << 5, 0x71000400u, 0x54ffffe1u, 0xd65f03c0u };
	memcpy(p, c, sizeof(c));
	return sizeof(c);
#else
	(void)p;
	(void)n;
	return 0;
#endif
}

int main(int argc, char **argv)
{
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	size_t sa = emit_loop(p, 60000), sb = emit_loop(p + 0x100, 60000), sc = emit_loop(p + 0x200, 60000);
	if (!sa)
		return 77; /* no code for this machine */
	__builtin___clear_cache((char *)p, (char *)p + 4096);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	uintptr_t a = (uintptr_t)p;
	fprintf(f, "%lx %zx jit_alpha\n", (unsigned long)a, sa);
	fprintf(f, "%lx %zx stale_gamma\n", (unsigned long)(a + 0x200), sc);
	fprintf(f, "%lx %zx jit beta with spaces\n", (unsigned long)(a + 0x100), sb);
	fprintf(f, "%lx %zx jit gamma (recompiled)\n", (unsigned long)(a + 0x200), sc);
	if (fclose(f) != 0)
		return 1;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	host_loop((fn)(void *)p, (fn)(void *)(p + 0x100), (fn)(void *)(p + 0x200), argc > 1 ? atof(argv[1]) / 1000.0 : 1.0);
	return 0;
}
