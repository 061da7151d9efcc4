/* rec_threads MS: the main thread and two named threads (worker_a,
 * worker_b) each spin for MS milliseconds in their own function.
 * With REC_SPIN_CPU=1 in the environment, MS is each thread's CPU time, not
 * wall time: a fixed amount of work, so a fixed number of cpu-clock samples
 * however loaded the machine (as tests/workloads/rec_spin.c).
 * A pfrec test workload: build with -pthread -g -fno-omit-frame-pointer. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 0.3;

static clockid_t spin_clock = CLOCK_MONOTONIC;
#define NOW_S_CLOCK spin_clock
#include "now_s.h"

#define SPIN_FN(name)                                                   \
	__attribute__((noinline)) void name(void)                       \
	{                                                               \
		double end = now_s() + seconds;                         \
		while (now_s() < end)                                   \
			for (unsigned i = 0; i < 100000; i++)           \
				sink += i ^ (sink << 1);                \
	}
SPIN_FN(spin_main)
SPIN_FN(spin_a)
SPIN_FN(spin_b)

static void *worker(void *arg)
{
	int which = (int)(long)arg;
	pthread_setname_np(pthread_self(), which ? "worker_b" : "worker_a");
	if (which)
		spin_b();
	else
		spin_a();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]) / 1000.0;
	const char *cpu = getenv("REC_SPIN_CPU");
	if (cpu && cpu[0] == '1')
		spin_clock = CLOCK_THREAD_CPUTIME_ID;
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	spin_main();
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
