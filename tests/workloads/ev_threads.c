/* ev_threads MS: the main thread spins for MS milliseconds of its own CPU
 * time, a second thread for 2 x MS, a third for 3 x MS (CLOCK_THREAD_CPUTIME_ID,
 * so the split holds on a loaded machine). At the end it prints one line per
 * thread, "tid TID cpu_ns NS": each thread's CPU time read by the thread
 * itself just before it ends (the main thread's after it joined the others,
 * the first line). A workload of tests/events.bats (--per-thread),
 * whose task-clock per thread is compared with these. Build with -pthread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static long ms = 100;

struct th {
	int factor;
	long tid;
	uint64_t cpu_ns;
};

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *work(void *arg)
{
	struct th *t = arg;
	t->tid = (long)syscall(SYS_gettid);
	uint64_t until = cpu_ns() + (uint64_t)t->factor * (uint64_t)ms * 1000000u;
	while (cpu_ns() < until)
		for (unsigned i = 0; i < 10000; i++)
			sink += i ^ (sink << 1);
	t->cpu_ns = cpu_ns();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		ms = strtol(argv[1], NULL, 10);
	struct th t[3] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
	pthread_t p[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&p[i], NULL, work, &t[i + 1]) != 0)
			return 1;
	work(&t[0]);
	for (int i = 0; i < 2; i++)
		pthread_join(p[i], NULL);
	/* the main thread's time after the joins too: all it runs but the
	 * printing and the process's exit */
	t[0].cpu_ns = cpu_ns();
	for (int i = 0; i < 3; i++)
		printf("tid %ld cpu_ns %llu\n", t[i].tid, (unsigned long long)t[i].cpu_ns);
	return 0;
}
