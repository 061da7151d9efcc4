/*
 * bytes.c - byte order, XXH3, growable buffers and the host's ELF machine:
 * the small helpers every part of the .pf container uses (pfile.h).
 */
#include "advanced.h"
#include "internal/alloc.h"
#include "internal/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>

#include <xxhash.h>

uint16_t pf_le16(const void *p) { return pfi_le16(p); }
uint32_t pf_le32(const void *p) { return pfi_le32(p); }
uint64_t pf_le64(const void *p) { return pfi_le64(p); }
void pf_put_le16(void *p, uint16_t v) { pfi_put_le16(p, v); }
void pf_put_le32(void *p, uint32_t v) { pfi_put_le32(p, v); }
void pf_put_le64(void *p, uint64_t v) { pfi_put_le64(p, v); }

uint8_t pf_host_endian(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one ? PF_LITTLE_ENDIAN : PF_BIG_ENDIAN;
}

/* xxh3_long.c: an AVX2 build of XXH3 where the CPU has it (1 if used) */
int pfi_xxh3_long(const void *p, size_t n, uint64_t *h);

uint64_t pf_xxh3(const void *p, size_t n)
{
	uint64_t h;
	if (n >= 4096 && pfi_xxh3_long(p, n, &h))
		return h;
	return XXH3_64bits(p, n);
}

int pf_buf_put(struct pf_buf *b, const void *p, size_t n)
{
	if (n > SIZE_MAX - b->len)
		return -ENOMEM;
	if (b->len + n > b->cap) {
		/* p may lie in the buffer itself: copied by its offset, as the
		 * buffer may move */
		size_t p_off = b->data && (uintptr_t)p - (uintptr_t)b->data < b->len
				       ? (size_t)((const uint8_t *)p - b->data)
				       : SIZE_MAX;
		if (pfi_grow_bytes((void **)&b->data, &b->cap, b->len + n, 256) < 0)
			return -ENOMEM;
		if (p_off != SIZE_MAX)
			p = b->data + p_off;
	}
	if (n)
		memmove(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int pf_buf_put_le16(struct pf_buf *b, uint16_t v)
{
	uint8_t t[2];
	pf_put_le16(t, v);
	return pf_buf_put(b, t, 2);
}

int pf_buf_put_le32(struct pf_buf *b, uint32_t v)
{
	uint8_t t[4];
	pf_put_le32(t, v);
	return pf_buf_put(b, t, 4);
}

int pf_buf_put_le64(struct pf_buf *b, uint64_t v)
{
	uint8_t t[8];
	pf_put_le64(t, v);
	return pf_buf_put(b, t, 8);
}

void pf_buf_free(struct pf_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

uint16_t pf_host_e_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__i386__)
	return EM_386;
#elif defined(__arm__)
	return EM_ARM;
#elif defined(__riscv)
	return EM_RISCV;
#elif defined(__powerpc64__) || defined(__powerpc__)
	return sizeof(void *) == 8 ? EM_PPC64 : EM_PPC;
#elif defined(__s390x__)
	return EM_S390;
#elif defined(__mips__)
	return EM_MIPS;
#elif defined(__loongarch__)
	return 258; /* EM_LOONGARCH */
#else
	/* Unknown build target: read our own ELF header. */
	unsigned char h[20];
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	uint16_t m = 0;
	if (fd >= 0) {
		if (read(fd, h, sizeof(h)) == (ssize_t)sizeof(h))
			m = h[EI_DATA] == ELFDATA2MSB ? (uint16_t)(h[18] << 8 | h[19])
						      : (uint16_t)(h[19] << 8 | h[18]);
		close(fd);
	}
	return m;
#endif
}

