/* ev_tsc MS: spins for MS milliseconds and prints "tsc_per_ns R": the time
 * stamp counter's ticks (rdtsc) per CLOCK_MONOTONIC nanosecond over the
 * spin. A workload of tests/events.bats (x86 only), which compares R with
 * what msr/tsc/ counts per cpu-clock nanosecond. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static volatile unsigned long sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 300;
	uint64_t t0 = now_ns(), c0 = __rdtsc(), t1;
	do {
		for (unsigned i = 0; i < 100000; i++)
			sink += i * 7 + (sink >> 3);
		t1 = now_ns();
	} while (t1 - t0 < ms * 1000000u);
	uint64_t c1 = __rdtsc();
	printf("tsc_per_ns %.6f\n", (double)(c1 - c0) / (double)(t1 - t0));
	return 0;
}
