/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ABI identity of nsguard's BPF object: FNV-1a (64 bits) of its bytes.
 * One definition for the build tool that writes build/nsguard-abi.h
 * (bpf/abi-hash.c) and for `nsguard check`, which hashes the object the
 * binary carries and compares (shim/lib/guard.c).
 */
#ifndef NSGUARD_ABI_HASH_H
#define NSGUARD_ABI_HASH_H

#include <stddef.h>
#include <stdint.h>

#define NSGUARD_ABI_HASH_INIT 0xcbf29ce484222325ULL

/* h carried on over n more bytes at p (start from NSGUARD_ABI_HASH_INIT). */
static inline uint64_t nsguard_abi_hash(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

#endif
