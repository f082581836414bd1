// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seed_sleepable: a global sleepable program on userns_create (the seed
 * series makes the hook sleepable-attachable).  It allows everything and
 * counts its invocations inside the loader's scratch cgroup.  It also calls
 * bpf_copy_from_user(), which the verifier only lets sleepable programs use:
 * the magic value it copies back proves the program really ran as lsm.s.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u64 target_cgid;

/* Set by the loader after load: a user address holding a magic value that
 * the (forked) creator process also has mapped. */
__u64 magic_addr;

__u64 calls;
__u64 seen_magic;
__s64 copy_err;

static __always_inline int count(void)
{
	__u64 v = 0;
	long err;

	if (!target_cgid || bpf_get_current_cgroup_id() != target_cgid)
		return 0;
	__sync_fetch_and_add(&calls, 1);
	if (magic_addr) {
		/* May fault the page in, i.e. sleep: only legal in lsm.s. */
		err = bpf_copy_from_user(&v, sizeof(v), (const void *)magic_addr);
		if (err)
			copy_err = err;
		else
			seen_magic = v;
	}
	return 0;
}

SEC("lsm.s/userns_create")
int BPF_PROG(seed_count, const struct cred *cred, int ret)
{
	count();
	return ret;
}

/*
 * The same body as a plain (non-sleepable) lsm program: the verifier must
 * refuse it ("helper call might sleep in a non-sleepable prog"), which is
 * what makes the magic value above proof of sleepability.  "?" = not loaded
 * unless the loader asks for it.
 */
SEC("?lsm/userns_create")
int BPF_PROG(seed_count_nonsleepable, const struct cred *cred, int ret)
{
	count();
	return ret;
}
