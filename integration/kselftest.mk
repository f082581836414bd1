# make kselftest-bpf: the kernel's own BPF selftests for the userns_create
# hook (deny_namespace, lsm_cgroup and our userns_cgroup, which
# kernel-patches/series adds), built against the guest kernel's tree and run in
# the guest; a part of `make check` on each tested kernel (check-kselftest:
# 6.1, or KERNEL_VERSION's; check-kselftest-6.12: 6.12, #41 item 8).
# make kselftest-bpf KERNEL_VERSION=6.12: the same in the 6.12 guest.
# Outputs: $(BUILD)/kselftest$(KV_SUFFIX)/; PASS:/FAIL: lines:
# $(RESULTS)/kselftest$(KV_SUFFIX).log.  Included by the top-level Makefile.
.PHONY: kselftest-bpf check-kselftest
kselftest-bpf: | deps-quiet
	$(call msg,KSELFTEST,$(BUILD)/kselftest$(KV_SUFFIX) (Linux $(KERNEL_VERSION)))
	$(Q)$(MAKE) check-kselftest

# The part itself, for `make check`: no deps-quiet job before it (check ran it
# already), so that the parallel make starts it in the slot it is listed for.
check-kselftest: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) kselftest$(KV_SUFFIX) integration/kselftest/run $(BUILD)

# The other tested kernel's, in make check beside 6.1's: its own test_progs
# build against the 6.12 tree (kselftest/run; the tree's lock) and boot, after
# check-kernel-6.12 (the niced build).
.PHONY: check-kselftest-6.12
check-kselftest-6.12: check-kernel-6.12 | $(RESULTS)
	$(Q)NSGUARD_KERNEL_VERSION=6.12 integration/run-part $(RESULTS) kselftest-6.12 \
		integration/kselftest/run $(BUILD)
