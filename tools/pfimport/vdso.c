/*
 * vdso.c - the [vdso] image of a perf.data file from perf's build-id cache
 * (perfdata.h, pf_import_vdso()).
 *
 * A perf.data file holds no vDSO bytes: `perf record` copies the image into
 * its build-id cache, DIR/[vdso]/BUILDID/vdso (DIR is ~/.debug unless
 * buildid.dir or PERF_BUILDID_DIR says otherwise; the 32-bit images are
 * [vdso32] and [vdsox32]), and `perf report` reads it back by the build-id
 * of the BUILD_ID feature. pfimport does the same and stores it as pfrec
 * does, in a DSO_IMAGE section (format/pfile.md 4.7), which pfsym uses to
 * name [vdso] frames.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid.h"
#include "perfdata.h"
#include "untrusted.h"

#define VDSO_MAX_BYTES (1u << 20) /* a vDSO is a few pages; more is not one */

int pf_import_is_vdso(const char *path, size_t len)
{
	static const char *const names[] = { "[vdso]", "[vdso32]", "[vdsox32]" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], path, len) == 0)
			return 1;
	return 0;
}

int pf_import_vdso(const char *dir, const char *path, size_t path_len, const uint8_t *bid, uint8_t bid_size,
		   struct pf_buf *out, char *why, size_t why_size)
{
	char file[4096], hex[129];
	why[0] = 0;
	if (!bid_size || bid_size > 64) {
		snprintf(why, why_size, "no build-id recorded for it");
		return 0;
	}
	for (uint8_t i = 0; i < bid_size; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	int n = snprintf(file, sizeof file, "%s/%.*s/%s/vdso", dir, (int)path_len, path, hex);
	if (n < 0 || (size_t)n >= sizeof file) {
		snprintf(why, why_size, "the build-id cache path is too long");
		return 0;
	}
	/* DIR may be another user's (--buildid-dir, PERF_BUILDID_DIR): what
	 * lies under it is opened by the rules of untrusted.h, so that a FIFO
	 * never blocks the import and a link never makes it read a file of
	 * someone else's; the build-id check below then vouches for the bytes */
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(why, why_size, "%s: %s", file, strerror(errno));
		return 0;
	}
	struct stat sb;
	uid_t owners[2] = { geteuid(), geteuid() };
	if (fstat(dfd, &sb) == 0)
		owners[1] = sb.st_uid; /* the cache's owner */
	const char *rel = file + strlen(dir) + 1, *bad;
	int fd = pf_open_untrusted(dfd, rel, PF_UNTRUSTED_NO_LINKS, owners, 2, VDSO_MAX_BYTES, &sb, &bad);
	close(dfd);
	uint8_t *img = NULL;
	int rc = 0;
	if (fd == -EINVAL || fd == -EFBIG || (fd >= 0 && sb.st_size <= 0)) {
		snprintf(why, why_size, "%s: not a vDSO image (a regular file of at most 1 MiB)", file);
		goto out;
	}
	if (fd < 0) {
		snprintf(why, why_size, "%s: %s", file, bad);
		return 0;
	}
	size_t size = (size_t)sb.st_size, got = 0;
	if (!(img = malloc(size))) {
		rc = -ENOMEM;
		goto out;
	}
	while (got < size) {
		ssize_t r = read(fd, img + got, size - got);
		if (r <= 0) {
			snprintf(why, why_size, "%s: %s", file, r < 0 ? strerror(errno) : "shorter than its size");
			goto out;
		}
		got += (size_t)r;
	}
	/* the cache is written by perf, maybe for another kernel's vDSO of
	 * the same name: believe the bytes only if their build-id is the one
	 * recorded */
	uint8_t have[64];
	int hn = pf_build_id_mem(img, size, have);
	if (hn != bid_size || memcmp(have, bid, bid_size) != 0) {
		snprintf(why, why_size, "%s: its build-id is not the recorded one", file);
		goto out;
	}
	struct pf_dso_image d;
	memset(&d, 0, sizeof d);
	/* perf's cache does not say which process mapped it, nor where:
	 * pid 0 and address 0 (format/pfile.md 4.7) */
	memcpy(d.build_id, bid, bid_size);
	d.build_id_size = bid_size;
	d.path = path;
	d.path_len = path_len;
	d.image = img;
	d.image_size = size;
	rc = pf_dso_image_encode(out, &d) < 0 ? -ENOMEM : 1;
out:
	free(img);
	if (fd >= 0)
		close(fd);
	return rc;
}
