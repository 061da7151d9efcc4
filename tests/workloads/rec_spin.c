/* rec_spin MS [STATUS]: spins in hot_loop() for MS milliseconds (0 = until
 * killed), prints "spun" on stdout and exits with STATUS (default 0).
 * With REC_SPIN_CPU=1 in the environment, MS is the thread's CPU time, not
 * wall time: a fixed number of cpu-clock samples however loaded the machine.
 * A pfrec test workload: build with -g -fno-omit-frame-pointer. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static clockid_t spin_clock = CLOCK_MONOTONIC;
#define NOW_S_CLOCK spin_clock
#include "now_s.h"

__attribute__((noinline)) void hot_loop(double seconds)
{
	double end = now_s() + seconds;
	for (;;) {
		for (unsigned i = 0; i < 200000; i++)
			sink += i * 7 + (sink >> 3);
		if (seconds > 0 && now_s() >= end)
			break;
	}
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;
	int status = argc > 2 ? atoi(argv[2]) : 0;
	const char *cpu = getenv("REC_SPIN_CPU");
	if (cpu && cpu[0] == '1')
		spin_clock = CLOCK_THREAD_CPUTIME_ID;
	hot_loop(ms > 0 ? (double)ms / 1000.0 : -1.0);
	printf("spun\n");
	return status;
}
