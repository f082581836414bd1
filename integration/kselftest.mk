# make kselftest-bpf: the kernel's own BPF selftests for the userns_create
# hook (deny_namespace, lsm_cgroup and our userns_cgroup, which
# kernel-patches/series adds), built against the kselftest-flavor kernel
# ($(BUILD)/kernel-kselftest, cached by content like `make kernel`) and run in
# the guest.  Outputs: $(BUILD)/kselftest/; PASS:/FAIL: lines:
# $(RESULTS)/kselftest.log.  Included by the top-level Makefile.
.PHONY: kselftest-bpf
kselftest-bpf: | deps-quiet $(RESULTS)
	$(call msg,KSELFTEST,$(BUILD)/kselftest)
	$(Q)integration/run-part $(RESULTS) kselftest integration/kselftest/run $(BUILD)
