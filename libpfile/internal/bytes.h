/*
 * internal/bytes.h - libpfile internal: loads and stores of 2, 4 and 8 bytes
 * at any alignment, in host order, in little-endian order (the container's
 * own fields, format/pfile.md 1) and in either order by a `swap` flag (a
 * recording's records, whose order the file header names). Inlined: the hot
 * loops of the builder and the transform use them per field. Not installed;
 * pf_le*() and pf_put_le*() of pfile.h are the exported forms.
 */
#ifndef PF_INTERNAL_BYTES_H
#define PF_INTERNAL_BYTES_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PFI_HOST_LE 1
#else
#define PFI_HOST_LE 0
#endif

/* host order */
static inline uint16_t pfi_ld16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t pfi_ld32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t pfi_ld64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void pfi_st16(void *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void pfi_st32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void pfi_st64(void *p, uint64_t v) { memcpy(p, &v, 8); }

/* little-endian */
static inline uint16_t pfi_le16(const void *p)
{
	uint16_t v = pfi_ld16(p);
	return PFI_HOST_LE ? v : __builtin_bswap16(v);
}
static inline uint32_t pfi_le32(const void *p)
{
	uint32_t v = pfi_ld32(p);
	return PFI_HOST_LE ? v : __builtin_bswap32(v);
}
static inline uint64_t pfi_le64(const void *p)
{
	uint64_t v = pfi_ld64(p);
	return PFI_HOST_LE ? v : __builtin_bswap64(v);
}
static inline void pfi_put_le16(void *p, uint16_t v) { pfi_st16(p, PFI_HOST_LE ? v : __builtin_bswap16(v)); }
static inline void pfi_put_le32(void *p, uint32_t v) { pfi_st32(p, PFI_HOST_LE ? v : __builtin_bswap32(v)); }
static inline void pfi_put_le64(void *p, uint64_t v) { pfi_st64(p, PFI_HOST_LE ? v : __builtin_bswap64(v)); }

/* An n-byte field (n = 2, 4 or 8), byte-swapped when `swap` is set. */
static inline uint64_t pfi_ldn(const void *p, int n, int swap)
{
	if (n == 8)
		return swap ? __builtin_bswap64(pfi_ld64(p)) : pfi_ld64(p);
	if (n == 4)
		return swap ? __builtin_bswap32(pfi_ld32(p)) : pfi_ld32(p);
	return swap ? __builtin_bswap16(pfi_ld16(p)) : pfi_ld16(p);
}
static inline void pfi_stn(void *p, uint64_t v, int n, int swap)
{
	if (n == 8)
		pfi_st64(p, swap ? __builtin_bswap64(v) : v);
	else if (n == 4)
		pfi_st32(p, swap ? __builtin_bswap32((uint32_t)v) : (uint32_t)v);
	else
		pfi_st16(p, swap ? __builtin_bswap16((uint16_t)v) : (uint16_t)v);
}

/* Swaps the n-byte field at p in place. */
static inline void pfi_swap16(void *p) { pfi_st16(p, __builtin_bswap16(pfi_ld16(p))); }
static inline void pfi_swap32(void *p) { pfi_st32(p, __builtin_bswap32(pfi_ld32(p))); }
static inline void pfi_swap64(void *p) { pfi_st64(p, __builtin_bswap64(pfi_ld64(p))); }

#endif
