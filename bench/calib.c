/* bench/calib.c - the calibration program of bench/calibrate.sh: main()
 * forks a child process (child_work) and starts a worker thread
 * (worker_work), then runs main_work and hot_fn itself; each does a fixed
 * amount of work, so runs differ only by how the scheduler shares the CPUs
 * out. Built with -DSLOW, hot_fn does 50% more work (a function made 50%
 * slower). Build with -O1 -g -fno-omit-frame-pointer -pthread. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SLOW
#define HOT_ITERS 90000000UL
#else
#define HOT_ITERS 135000000UL
#endif

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 7 + (sink >> 3);
}

__attribute__((noinline)) void hot_fn(void) { spin(HOT_ITERS); }
__attribute__((noinline)) void main_work(void) { spin(180000000UL); }
__attribute__((noinline)) void worker_work(void) { spin(180000000UL); }
__attribute__((noinline)) void child_work(void) { spin(180000000UL); }

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
	pthread_join(t, NULL);
	if (c > 0)
		waitpid(c, NULL, 0);
	return 0;
}
