# bpf/bpf.mk: the BPF object and its skeleton (included by the top-level Makefile).
# vmlinux.h comes from the guest kernel's BTF, so the CO-RE relocations match
# the kernel the program is loaded into.

LLVM_STRIP ?= llvm-strip
# -mcpu=v3: atomics that return the old value (the count limit, 5.12+).
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -I$(BUILD) -Ibpf

$(BUILD)/vmlinux.h: $(KERNEL)/done | $(BUILD)
	$(call msg,BTF,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/nsguard.bpf.o: bpf/nsguard.bpf.c bpf/nsguard.h bpf/bpf.mk $(BUILD)/vmlinux.h | $(BUILD)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ # DWARF only: BTF stays, the skeleton shrinks

$(BUILD)/nsguard.skel.h: $(BUILD)/nsguard.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name nsguard > $@.tmp && mv $@.tmp $@

# The layout-changed program of build/nsguard-next (shim/shim.mk).
$(BUILD)/next/nsguard.bpf.o: bpf/nsguard.bpf.c bpf/nsguard.h bpf/bpf.mk $(BUILD)/vmlinux.h
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DNSGUARD_ABI_NEXT -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BUILD)/next/nsguard.skel.h: $(BUILD)/next/nsguard.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name nsguard > $@.tmp && mv $@.tmp $@
