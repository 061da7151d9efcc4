/* now_s.h - now_s(): the time of clock NOW_S_CLOCK (CLOCK_MONOTONIC unless
 * the workload defines it first: another clock id, or a variable holding
 * one) in seconds, for the test workloads that spin until a time. Each
 * workload that includes it, where its own copy stood, gets the same static
 * now_s as before (the same name and code in its symbol table). Tests build
 * each workload .c alone, from tests/workloads/, so "now_s.h" is found next
 * to it. */
#ifndef NOW_S_H
#define NOW_S_H
#include <time.h>

#ifndef NOW_S_CLOCK
#define NOW_S_CLOCK CLOCK_MONOTONIC
#endif

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(NOW_S_CLOCK, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
