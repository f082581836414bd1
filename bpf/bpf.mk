# bpf/bpf.mk: the BPF object and its skeleton (included by the top-level Makefile).
# vmlinux.h comes from VMLINUX_BTF.  The program is CO-RE: the kernel it is
# loaded into relocates it, so any kernel's BTF with the types it names will
# do (the guest's CO-RE cases load objects built from others).  The guest
# suites use the guest kernel's: for their goals, or once that kernel is
# built in this tree.  Otherwise (a real host, `make && make install`) it is
# the running kernel's, and nothing of the test machinery is needed.
GUEST_GOALS := check% demo bench% vm-% kselftest-bpf
ifneq ($(filter $(GUEST_GOALS),$(MAKECMDGOALS))$(wildcard $(BASE_KERNEL)/done),)
VMLINUX_BTF ?= $(VMLINUX)
BTF_KERNEL := $(if $(filter $(abspath $(VMLINUX)),$(abspath $(VMLINUX_BTF))),$(BASE_KERNEL)/done)
else
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
endif

LLVM_STRIP ?= llvm-strip
# -mcpu=v3: atomics that return the old value (the count limit, 5.12+).
# REPRO_FLAGS (Makefile): .BTF.ext's line info names ./bpf/nsguard.bpf.c,
# not the build directory, so the object and the ABI hash over its bytes are
# the same wherever the tree is built.
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -I$(BUILD) -Ibpf $(REPRO_FLAGS)

# Which BTF the header came from: a change of VMLINUX_BTF remakes it.
.PHONY: FORCE
FORCE:
$(BUILD)/vmlinux.h.src: FORCE | $(BUILD)
	$(Q)echo '$(abspath $(VMLINUX_BTF))' | cmp -s - $@ || echo '$(abspath $(VMLINUX_BTF))' >$@

$(BUILD)/vmlinux.h: $(BUILD)/vmlinux.h.src $(BTF_KERNEL) $(wildcard $(VMLINUX_BTF)) | $(BUILD)
	$(call msg,BTF,$@ from $(VMLINUX_BTF))
	$(Q)test -r '$(VMLINUX_BTF)' || { echo "vmlinux.h: no BTF at $(VMLINUX_BTF): build on a kernel" \
		"with CONFIG_DEBUG_INFO_BTF, or name a vmlinux with BTF: make VMLINUX_BTF=PATH" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file '$(VMLINUX_BTF)' format c > $@.tmp && mv $@.tmp $@

$(BUILD)/nsguard.bpf.o: bpf/nsguard.bpf.c bpf/nsguard.h bpf/bpf.mk $(BUILD)/vmlinux.h | $(BUILD)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ # DWARF only: BTF stays, the skeleton shrinks

$(BUILD)/nsguard.skel.h: $(BUILD)/nsguard.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name nsguard > $@.tmp && mv $@.tmp $@

# The program's ABI identity (guard_abi), computed here once rather than by
# every hook: FNV-1a of the object the skeleton embeds (bpf/abi-hash.c).
$(BUILD)/abi-hash: bpf/abi-hash.c bpf/abi-hash.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -std=gnu11 $(WARNINGS) -o $@ $<

$(BUILD)/nsguard-abi.h: $(BUILD)/nsguard.bpf.o $(BUILD)/abi-hash
	$(call msg,GEN,$@)
	$(Q)h=$$($(BUILD)/abi-hash $<) && printf '#define NSGUARD_ABI "%s"\n' "$$h" >$@.tmp && mv $@.tmp $@

$(BUILD)/next/nsguard-abi.h: $(BUILD)/next/nsguard.bpf.o $(BUILD)/abi-hash
	$(call msg,GEN,$@)
	$(Q)h=$$($(BUILD)/abi-hash $<) && printf '#define NSGUARD_ABI "%s"\n' "$$h" >$@.tmp && mv $@.tmp $@

# The layout-changed program of build/nsguard-next (shim/shim.mk).
$(BUILD)/next/nsguard.bpf.o: bpf/nsguard.bpf.c bpf/nsguard.h bpf/bpf.mk $(BUILD)/vmlinux.h
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DNSGUARD_ABI_NEXT -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BUILD)/next/nsguard.skel.h: $(BUILD)/next/nsguard.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name nsguard > $@.tmp && mv $@.tmp $@
