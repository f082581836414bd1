# Guest harness targets (included by the top-level Makefile).
VM_RUN := integration/vm-run
GUEST_TIMEOUT ?= 2400
CLIENTS_TIMEOUT ?= 3600

.PHONY: check-host check-guest check-clients vm-shell vm-test

# Host-side checks of the harness and the kernel tree check.
check-host: $(BZIMAGE) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) tree kernel-patches/test-check-tree
	$(Q)integration/run-part $(RESULTS) harness integration/test-harness

# The guest suite: every integration/tests/NN-*.sh in one booted guest.
# GUEST_TESTS=pattern narrows it (e.g. make check-guest GUEST_TESTS=basic).
check-guest: all $(GUEST_DEPS) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) guest \
		$(VM_RUN) -q --timeout $(GUEST_TIMEOUT) -- integration/guest-suite $(GUEST_TESTS)

# Real clients in their own boot: podman (hooks.d, annotations) and the
# container scripts again under runc, as prestart and as createRuntime hook.
# CLIENT_TESTS=pattern narrows it (podman or runc).
check-clients: all $(GUEST_DEPS) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) clients \
		$(VM_RUN) -q --timeout $(CLIENTS_TIMEOUT) -- integration/guest-suite --clients $(CLIENT_TESTS)

$(BZIMAGE):
	$(Q)$(MAKE) kernel

vm-shell: $(BZIMAGE)
	$(Q)$(VM_RUN) --interactive

# make vm-test CMD='...': run one command in the guest.
vm-test: $(BZIMAGE)
	$(Q)$(VM_RUN) -- bash -c '$(CMD)'

.PHONY: demo
demo: kernel
	$(Q)$(MAKE) all $(GUEST_DEPS)
	$(Q)$(VM_RUN) -q -- integration/demo
