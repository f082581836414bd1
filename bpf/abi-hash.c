// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * abi-hash FILE: the ABI identity of a BPF object, FNV-1a (64 bits) of its
 * bytes as 16 hex digits: what build/nsguard-abi.h gives guard_abi(), so
 * that no hook hashes the embedded object again (105 K instructions a
 * call).  `nsguard check` compares it with the object the binary carries.
 * A build tool: runs on the build host, never in the guest.
 */
#include <stdio.h>

#include "abi-hash.h"

int main(int argc, char **argv)
{
	uint64_t h = NSGUARD_ABI_HASH_INIT;
	unsigned char buf[65536];
	size_t n;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: abi-hash FILE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = nsguard_abi_hash(h, buf, n);
	if (ferror(f)) {
		perror(argv[1]);
		return 1;
	}
	printf("%016llx\n", (unsigned long long)h);
	return 0;
}
