/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC32C (Castagnoli) in userspace, to check KGO_TASK_CHECKSUM results:
 * reflected polynomial 0x82F63B78, initial value ~0, final xor ~0 (the
 * kernel's ~__crc32c_le(~0, buf, len)). Bitwise: checking is not the
 * hot path.
 */
#ifndef _KGO_CRC32C_H
#define _KGO_CRC32C_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t kgo_crc32c(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t crc = ~0u;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & -(crc & 1));
	}
	return ~crc;
}

#endif /* _KGO_CRC32C_H */
