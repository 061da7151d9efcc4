/*
 * arm_stack - a static aarch64 workload for the emulated-board test
 * (tests/aarch64.bats): burns CPU in a known set of call stacks for about
 * MS milliseconds of process CPU time (argument, default 300), or, as
 * `arm_stack -r ROUNDS`, for a fixed number of rounds (two spin calls each)
 * without reading any clock: fixed work, so the share of samples in spin
 * does not depend on how long the emulated clock read takes.
 *
 *   main -> work -> path_a -> spin              (about half of the time)
 *   main -> work -> path_b -> path_b2 -> spin   (the other half)
 *
 * Every function is noinline and does work after its call, so neither the
 * compiler nor a tail call removes a frame. Build:
 *   aarch64-linux-gnu-gcc -static -O2 -g -fno-omit-frame-pointer
 * (or -fomit-frame-pointer -mbranch-protection=standard for DWARF/PAC tests).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE unsigned long spin(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink += x;
	return x;
}

NOINLINE unsigned long path_a(unsigned long n)
{
	unsigned long r = spin(n);
	sink ^= r;
	return r + 1;
}

NOINLINE unsigned long path_b2(unsigned long n)
{
	unsigned long r = spin(n + 7);
	sink ^= r >> 1;
	return r + 2;
}

NOINLINE unsigned long path_b(unsigned long n)
{
	unsigned long r = path_b2(n);
	sink ^= r >> 2;
	return r + 3;
}

/* work(ms, 0): about ms milliseconds of process CPU time; work(0, rounds):
 * exactly that many rounds, no clock read. */
NOINLINE unsigned long work(double ms, unsigned long rounds)
{
	unsigned long acc = 0, n = 0;
	if (rounds > 0) {
		for (unsigned long r = 0; r < rounds; r++) {
			acc += path_a(n++);
			acc += path_b(n++);
		}
		sink += acc;
		return n;
	}
	double start = cpu_ms();
	/* The clock is read every 32 rounds only: in an emulated guest the
	 * CPU-time clock is a system call that costs as much as a round. */
	while (cpu_ms() - start < ms) {
		for (int i = 0; i < 32; i++) {
			acc += path_a(n++);
			acc += path_b(n++);
		}
	}
	sink += acc;
	return n;
}

int main(int argc, char **argv)
{
	double ms = 300;
	unsigned long rounds = 0;
	if (argc > 2 && strcmp(argv[1], "-r") == 0)
		rounds = strtoul(argv[2], NULL, 10);
	else if (argc > 1)
		ms = atof(argv[1]);
	unsigned long n = work(ms, rounds);
	printf("arm_stack: %lu calls\n", n);
	return 0;
}
