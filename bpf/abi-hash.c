// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * abi-hash FILE: the ABI identity of a BPF object, FNV-1a (64 bits) of its
 * bytes as 16 hex digits: what build/nsguard-abi.h gives guard_abi(), so
 * that no hook hashes the embedded object again (105 K instructions a
 * call).  `nsguard check` compares it with the object the binary carries.
 * A build tool: runs on the build host, never in the guest.
 */
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	FILE *f;
	int c;

	if (argc != 2) {
		fprintf(stderr, "usage: abi-hash FILE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	while ((c = getc(f)) != EOF)
		h = (h ^ (unsigned char)c) * 0x100000001b3ULL;
	if (ferror(f)) {
		perror(argv[1]);
		return 1;
	}
	printf("%016llx\n", (unsigned long long)h);
	return 0;
}
