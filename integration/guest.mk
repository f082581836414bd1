# Guest container-suite pieces (included by the top-level Makefile after
# integration/integration.mk).
#
# nsg-userns is copied into busybox container rootfs by
# integration/tests/lib-ct.sh, so it must be static (glibc static is fine).
GUEST_DEPS += $(BUILD)/nsg-userns $(BUILD)/nsguard-fault $(BUILD)/nsguard-next \
	$(BUILD)/nsg-console

$(BUILD)/nsg-userns: integration/guest/nsg-userns.c | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) -static -std=gnu11 -O2 $(WARNINGS) -o $@ $<

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
