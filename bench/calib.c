/* bench/calib.c - the calibration program of bench/calibrate.sh: main()
 * forks a child process (child_work) and starts a worker thread
 * (worker_work), then runs main_work and hot_fn itself. main's work is fixed;
 * the worker spins until main is done and the child for 0.5 s of wall time,
 * so how many samples each gets depends on how the scheduler shares the CPUs
 * out in that run: the shares move from run to run, as in a real program.
 * Built with -DSLOW, hot_fn does 50% more work (a function made 50% slower).
 * Build with -O1 -g -fno-omit-frame-pointer -pthread. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SLOW
#define HOT_ITERS 90000000UL
#else
#define HOT_ITERS 135000000UL
#endif

/* one per thread: a sink shared by main and the worker put both on one
 * cache line, and how fast main's fixed work ran then hung on whether the
 * two threads ran at the same time: hot_fn's time per run moved by up to
 * 3x in the same binary (bench/RESULTS.md, issue 18, fourth run) */
static _Thread_local volatile unsigned long sink;
static atomic_int done;

static inline __attribute__((always_inline)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 7 + (sink >> 3);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hot_fn(void) { spin(HOT_ITERS); }
__attribute__((noinline)) void main_work(void) { spin(180000000UL); }

__attribute__((noinline)) void worker_work(void)
{
	while (!atomic_load(&done))
		spin(1000000UL);
}

__attribute__((noinline)) void child_work(void)
{
	double end = now_s() + 0.5;
	while (now_s() < end)
		spin(1000000UL);
}

static void *worker(void *arg)
{
	(void)arg;
	worker_work();
	return NULL;
}

int main(void)
{
	pid_t c = fork();
	if (c == 0) {
		child_work();
		_exit(0);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	main_work();
	hot_fn();
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	if (c > 0)
		waitpid(c, NULL, 0);
	return 0;
}
