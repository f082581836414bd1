// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seed_deny: global BPF-LSM programs on userns_create that reproduce the seed
 * series' checks (integration/guest/seedtest.c loads them in the test guest).
 *
 *   seed_deny_errno      (lsm)   refuse with deny_ret (-errno): the caller of
 *                                unshare/clone must see exactly that errno.
 *   seed_deny_unless_admin (lsm.s) refuse with EPERM unless the creator has
 *                                CAP_SYS_ADMIN in the initial user namespace,
 *                                as in the seed's deny_namespace test.  (Only
 *                                a test: nsguard itself never looks at caps.)
 *
 * The loader enables one of them.  Both are global attachments, so they only
 * act inside the loader's scratch cgroup (target_cgid): the rest of the guest
 * keeps creating namespaces normally while a test runs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* vmlinux.h carries no macros. */
#define EPERM 1
#define CAP_SYS_ADMIN 21

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load; rodata is frozen afterwards. */
const volatile __u64 target_cgid;
const volatile int deny_ret = -EPERM;

/* Read by the loader: proves the program ran, and what it decided. */
__u64 calls;
__u64 denied;

static __always_inline bool in_scope(void)
{
	return target_cgid && bpf_get_current_cgroup_id() == target_cgid;
}

SEC("lsm/userns_create")
int BPF_PROG(seed_deny_errno, const struct cred *cred, int ret)
{
	/* An earlier LSM program already refused: keep its answer. */
	if (ret)
		return ret;
	if (!in_scope())
		return 0;
	int r = deny_ret;

	__sync_fetch_and_add(&calls, 1);
	__sync_fetch_and_add(&denied, 1);
	/*
	 * 6.12's verifier refuses an LSM program unless it can prove that
	 * the value returned is 0 or -errno (-4095..-1): bound it, without a
	 * negation (whose result the verifier does not bound).
	 */
	if (r < -4095 || r > -1)
		return -EPERM;
	return r;
}

/*
 * kernel_cap_t is { __u32 cap[2]; } in 6.1 and { u64 val; } from 6.3 on:
 * the same 64 bits on x86 (little-endian), so read them whole rather than
 * through a member that one of the layouts lacks (a CO-RE relocation that
 * fails to load on the other).
 */
static __always_inline bool has_cap(const struct cred *cred, int cap)
{
	__u64 caps = 0;

	bpf_core_read(&caps, sizeof(caps), &cred->cap_effective);
	return caps & (1ULL << cap);
}

SEC("lsm.s/userns_create")
int BPF_PROG(seed_deny_unless_admin, const struct cred *cred, int ret)
{
	unsigned int level;

	if (ret)
		return ret;
	if (!in_scope())
		return 0;
	__sync_fetch_and_add(&calls, 1);

	level = BPF_CORE_READ(cred, user_ns, level);
	/* The initial user namespace is the only one at level 0. */
	if (level == 0 && has_cap(cred, CAP_SYS_ADMIN))
		return 0;
	__sync_fetch_and_add(&denied, 1);
	return -EPERM;
}
