# integration/seed.mk: the seed-series reproduction (included by the top-level
# Makefile): the test-only BPF-LSM programs integration/guest/seed_*.bpf.c,
# their skeletons, the guest loader build/seedtest, and the SELinux check in
# its own guest boot.  "Seed" is the kernel series the hook came from
# (docs/design.md, "Tests and lint").  bpf/ holds the product's program only;
# build/vmlinux.h comes from bpf/bpf.mk.

SEED_BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -I$(BUILD)
SEED_PROGS := seed_deny seed_sleepable

$(BUILD)/seed_%.bpf.o: integration/guest/seed_%.bpf.c integration/seed.mk $(BUILD)/vmlinux.h | $(BUILD)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(SEED_BPF_CFLAGS) -c $< -o $@

$(BUILD)/seed_%.skel.h: $(BUILD)/seed_%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name seed_$* > $@.tmp && mv $@.tmp $@

$(BUILD)/seedtest: integration/guest/seedtest.c $(SEED_PROGS:%=$(BUILD)/%.skel.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(NSG_CFLAGS) $(CFLAGS) -o $@ $< -lbpf -lelf -lz

# Keep the objects between runs (they are only intermediate to the pattern rules).
.SECONDARY: $(SEED_PROGS:%=$(BUILD)/%.bpf.o)

GUEST_DEPS += $(BUILD)/seedtest

# SELinux enforcing must not leak into the shared guest suite: its own boot.
.PHONY: check-selinux
check-selinux: $(BUILD)/seedtest $(BZIMAGE) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) selinux integration/vm-run -q -- integration/tests/selinux.sh
