/* ev_sleep N PATH: sleeps N times for 2 ms in nap(), opening PATH before
 * each nap in open_it(); prints "slept N". A workload of tests/events.bats
 * (tracepoints: N context switches out of nap, N openat calls of PATH).
 * Build with -g -fno-omit-frame-pointer. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void nap(void)
{
	struct timespec ts = {0, 2000000};
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void open_it(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	const char *path = argc > 2 ? argv[2] : "/dev/null";
	for (int i = 0; i < n; i++) {
		open_it(path);
		nap();
	}
	printf("slept %d\n", n);
	return 0;
}
