# make kselftest-bpf: the kernel's own BPF selftests for the userns_create
# hook (deny_namespace, lsm_cgroup and our userns_cgroup, which
# kernel-patches/series adds), built against the guest kernel's tree and run in
# the guest; a part of `make check`.  Outputs: $(BUILD)/kselftest/; PASS:/FAIL:
# lines: $(RESULTS)/kselftest.log.  Included by the top-level Makefile.
.PHONY: kselftest-bpf check-kselftest
kselftest-bpf: | deps-quiet
	$(call msg,KSELFTEST,$(BUILD)/kselftest)
	$(Q)$(MAKE) check-kselftest

# The part itself, for `make check`: no deps-quiet job before it (check ran it
# already), so that the parallel make starts it in the slot it is listed for.
check-kselftest: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) kselftest integration/kselftest/run $(BUILD)
