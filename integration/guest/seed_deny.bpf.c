// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seed_deny: global BPF-LSM programs on userns_create that reproduce the seed
 * series' checks (integration/guest/seedtest.c loads them in the test guest).
 *
 *   seed_deny_errno      (lsm)   refuse with deny_errno: the caller of
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
const volatile int deny_errno = EPERM;

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
	__sync_fetch_and_add(&calls, 1);
	__sync_fetch_and_add(&denied, 1);
	return -deny_errno;
}

/* kernel_cap_t is { __u32 cap[2]; } in 6.1 (a single u64 from 6.3 on). */
static __always_inline bool has_cap(const kernel_cap_t *caps, int cap)
{
	return caps->cap[cap >> 5] & (1U << (cap & 31));
}

SEC("lsm.s/userns_create")
int BPF_PROG(seed_deny_unless_admin, const struct cred *cred, int ret)
{
	kernel_cap_t caps;
	unsigned int level;

	if (ret)
		return ret;
	if (!in_scope())
		return 0;
	__sync_fetch_and_add(&calls, 1);

	caps = BPF_CORE_READ(cred, cap_effective);
	level = BPF_CORE_READ(cred, user_ns, level);
	/* The initial user namespace is the only one at level 0. */
	if (level == 0 && has_cap(&caps, CAP_SYS_ADMIN))
		return 0;
	__sync_fetch_and_add(&denied, 1);
	return -EPERM;
}
