/* rep_threads: main() spins in main_work() for 200 ms of its own CPU time
 * while a worker thread spins in worker_work() for 50 to 150 ms of its CPU
 * time, drawn anew in every run (seeded by the pid and the clock): runs of
 * the same binary whose worker gets a different share of the samples, as
 * when the scheduler gives a thread more or less CPU. A pfdiff test
 * workload: build with -g -fno-omit-frame-pointer -pthread. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline __attribute__((always_inline)) void spin(double seconds)
{
	double end = cpu_s() + seconds;
	while (cpu_s() < end)
		for (unsigned i = 0; i < 20000; i++)
			sink += i * 7 + (sink >> 3);
}

__attribute__((noinline)) void worker_work(double s) { spin(s); }
__attribute__((noinline)) void main_work(double s) { spin(s); }

static void *worker(void *arg)
{
	worker_work(*(double *)arg);
	return NULL;
}

int main(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	srand((unsigned)ts.tv_nsec ^ (unsigned)getpid());
	double w = 0.050 + 0.100 * ((double)rand() / RAND_MAX);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, &w) != 0)
		return 1;
	main_work(0.200);
	pthread_join(t, NULL);
	return 0;
}
