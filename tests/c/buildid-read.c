/*
 * buildid-read FILE... - prints "FILE HEX" per file: the GNU build-id that
 * tools/common/buildid.c reads (pf_build_id_fd(), and pf_build_id_mem() over
 * the file's bytes for program headers alone when -m is given first), HEX
 * empty when it finds none. The test compares it with readelf -n.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid.h"

int main(int argc, char **argv)
{
	int mem = argc > 1 && !strcmp(argv[1], "-m");
	for (int i = 1 + mem; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		uint8_t id[64];
		int n;
		if (mem) {
			struct stat st;
			if (fstat(fd, &st) < 0 || st.st_size == 0)
				return 1;
			void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED)
				return 1;
			n = pf_build_id_mem(p, (size_t)st.st_size, id);
			munmap(p, (size_t)st.st_size);
		} else {
			n = pf_build_id_fd(fd, id);
		}
		close(fd);
		if (n < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-n));
			return 1;
		}
		printf("%s ", argv[i]);
		for (int k = 0; k < n; k++)
			printf("%02x", id[k]);
		printf("\n");
	}
	return 0;
}
