# Guest container-suite pieces (included by the top-level Makefile after
# integration/integration.mk).
#
# nsg-userns is copied into busybox container rootfs by
# integration/tests/lib-ct.sh, so it must be static (glibc static is fine).
GUEST_DEPS += $(BUILD)/nsg-userns $(BUILD)/nsguard-fault $(BUILD)/nsguard-next \
	$(BUILD)/nsg-console $(BUILD)/nsg-pidat

# The CRI client's messages (integration/cri/cri-client, part clients-cri),
# generated from our subset of the CRI API with Debian's python3-grpc-tools.
GUEST_DEPS += $(BUILD)/cri/api_pb2.py
$(BUILD)/cri/api_pb2.py: integration/cri/api.proto | $(BUILD)
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(@D) && /usr/bin/python3 -m grpc_tools.protoc -Iintegration/cri \
		--python_out=$(@D) $<

$(BUILD)/nsg-userns: integration/guest/nsg-userns.c | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) -static -std=gnu11 -O2 $(WARNINGS) -o $@ $<

# CO-RE (integration/tests/12-core.sh): nsguard built against other kernels'
# BTF, each in a build tree of its own: Debian's own 6.1 kernel
# (integration/other-btf, which needs the guest kernel's tree for
# extract-vmlinux) and, where it has BTF, the build host's running kernel.
GUEST_DEPS += core-variants
.PHONY: core-variants
core-variants: $(BASE_KERNEL)/done
	$(Q)btf=$$(integration/other-btf $(abspath $(BASE_KERNEL))/src) && \
		$(MAKE) BUILD=$(BUILD)/core/debian-6.1 VMLINUX_BTF=$$btf $(BUILD)/core/debian-6.1/nsguard
	$(Q)if [ -r /sys/kernel/btf/vmlinux ]; then \
		$(MAKE) BUILD=$(BUILD)/core/host VMLINUX_BTF=/sys/kernel/btf/vmlinux $(BUILD)/core/host/nsguard; \
	else rm -rf $(BUILD)/core/host; fi

# A process at a given pid, once it comes round (the agent's pid-reuse cases).
$(BUILD)/nsg-pidat: integration/guest/nsg-pidat.c | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 $(WARNINGS) -o $@ $<

# The receiving end of --console-socket, for the wrapper's pass-through cases.
$(BUILD)/nsg-console: integration/guest/nsg-console.c | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 $(WARNINGS) -o $@ $<

.PHONY: check-lsm-off
# A separate boot without bpf in lsm=: nsguard must fail closed (or open with
# fail-mode open) instead of starting containers unguarded.
check-lsm-off: all $(GUEST_DEPS) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) lsm-off \
		$(VM_RUN) -q --timeout $(GUEST_TIMEOUT) --append lsm=selinux -- integration/tests/lsm-off.sh
