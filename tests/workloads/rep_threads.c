/* rep_threads: main() spins in main_work() for 200 ms of its own CPU time
 * while a worker thread spins in worker_work() for 50 to 150 ms of its CPU
 * time: runs of the same binary whose worker gets a different share of the
 * samples, as when the scheduler gives a thread more or less CPU.
 *   rep_threads          the worker's time is drawn anew in every run
 *                        (seeded by the pid and the clock)
 *   rep_threads FILE     it cycles through 50, 150, 100 ms, FILE counting
 *                        the runs (created when missing): two recordings of
 *                        3 runs each have the same three runs, so the runs
 *                        differ widely while the two sides do not (random
 *                        draws would make the sides differ by chance, and a
 *                        test at alpha 0.01 flag that about once in 100)
 * A pfdiff test workload: build with -g -fno-omit-frame-pointer -pthread. */
#include <pthread.h>
#include <stdio.h>
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

/* the run's index from the counter file, which is then advanced; -1 when it
 * cannot be read or written */
static int next_run(const char *path)
{
	int n = 0;
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", n + 1);
	return fclose(f) == 0 ? n : -1;
}

int main(int argc, char **argv)
{
	double w;
	if (argc > 1) {
		static const double cycle[3] = {0.050, 0.150, 0.100};
		int n = next_run(argv[1]);
		if (n < 0)
			return 1;
		w = cycle[n % 3];
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		srand((unsigned)ts.tv_nsec ^ (unsigned)getpid());
		w = 0.050 + 0.100 * ((double)rand() / RAND_MAX);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, worker, &w) != 0)
		return 1;
	main_work(0.200);
	pthread_join(t, NULL);
	return 0;
}
