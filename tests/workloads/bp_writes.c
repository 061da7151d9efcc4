/* bp_writes N: writes the global `target` N times from main(), nothing
 * else in the program writes it: a hardware breakpoint on its address
 * (pfrec -e mem:ADDR:w, ADDR from nm on a -no-pie build) hits N times in
 * main (tests/events.bats). */
#include <stdlib.h>

volatile int target;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	for (int i = 0; i < n; i++)
		target = i;
	return 0;
}
