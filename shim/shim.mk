# shim/shim.mk: build/nsguard (included by the top-level Makefile).
# shim/ holds the commands (main.c, a cmd_*.c each, cmd_common.c), shim/lib/
# the library they call, which calls nothing of theirs.  SHIM_CORE_SRCS (the
# library's modules without libbpf, shared with the unit tests) is defined
# in shim/tests/tests.mk, which is included after this file: the link
# prerequisites are therefore expanded a second time, when make needs them.

NSGUARD_VERSION ?= 0.1.0
SHIM_CMD_SRCS := $(addprefix shim/,main.c cmd_common.c cmd_hook.c cmd_attach.c cmd_status.c \
	cmd_monitor.c cmd_gc.c cmd_check.c cmd_upgrade.c cmd_suggest.c cmd_load.c cmd_unload.c \
	cmd_configure.c cmd_explain.c cmd_runtime.c cmd_agent.c)
# The library's modules that call libbpf or the runtimes' tools.
SHIM_LIB_SRCS := $(addprefix shim/lib/,guard.c container_live.c upgrade.c evlog.c configure.c \
	configure_crio.c configure_containerd.c)
SHIM_OBJS = $(addprefix $(BUILD)/obj/,$(notdir $(patsubst %.c,%.o,$(SHIM_CORE_SRCS) \
	$(SHIM_LIB_SRCS) $(SHIM_CMD_SRCS))))
# Static: the hook is a short process on every container start, and each
# shared library costs its open, mmaps and relocations, ld.so its own pass
# (make bench, "hook process").  nsguard uses no NSS, dlopen or iconv, so
# glibc links statically without warnings; JSON is shim/lib/jv.c, capabilities
# a capget (shim/cmd_common.c).  Position independent all the same: the
# hook parses what a tenant wrote, as root, and keeps ASLR for 5 page
# faults and ~30 K instructions of relocation.
SHIM_LIBS := -static-pie -lbpf -lelf -lz -lm

.SECONDEXPANSION:
$(BUILD)/nsguard: $$(SHIM_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(SHIM_LIBS)

$(BUILD)/obj/%.o: shim/%.c | $(BUILD)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(NSG_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: shim/lib/%.c | $(BUILD)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(NSG_CFLAGS) -MMD -MP -c $< -o $@

# A test build that can fail chosen steps (NSGUARD_FAULT=NAME, guard.c): the
# guest tests show what a failure there leaves.  Never installed.
$(BUILD)/nsguard-fault: $$(filter-out $(BUILD)/obj/guard.o,$$(SHIM_OBJS)) $(BUILD)/obj/guard-fault.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(SHIM_LIBS)

$(BUILD)/obj/guard-fault.o: shim/lib/guard.c $(BUILD)/nsguard.skel.h | $(BUILD)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(NSG_CFLAGS) -DNSGUARD_FAULT_INJECTION -MMD -MP -c $< -o $@

# A build whose policy layout differs, as a newer nsguard's would
# (-DNSGUARD_ABI_NEXT, bpf/nsguard.h): the guest tests of `nsguard upgrade`
# run it against pins of build/nsguard.  Never installed.
NEXT := $(BUILD)/next
$(BUILD)/nsguard-next: $$(patsubst $(BUILD)/obj/%,$(NEXT)/obj/%,$$(SHIM_OBJS))
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(SHIM_LIBS)

$(NEXT)/obj/%.o: shim/%.c $(NEXT)/nsguard.skel.h | $(NEXT)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(NEXT) $(NSG_CFLAGS) -DNSGUARD_ABI_NEXT \
		-DNSGUARD_VERSION='"$(NSGUARD_VERSION)-next"' -MMD -MP -c $< -o $@

$(NEXT)/obj/%.o: shim/lib/%.c $(NEXT)/nsguard.skel.h | $(NEXT)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(NEXT) $(NSG_CFLAGS) -DNSGUARD_ABI_NEXT \
		-DNSGUARD_VERSION='"$(NSGUARD_VERSION)-next"' -MMD -MP -c $< -o $@

$(NEXT)/obj:
	$(Q)mkdir -p $@

-include $(wildcard $(NEXT)/obj/*.d)

# configure containerd's handlers: the tables of the installed examples
# (config version 2 and 3), built in as C strings (no share file needed,
# one source for both).
$(BUILD)/containerd-handlers.h: examples/containerd/nsguard-runtimes.toml.in | $(BUILD)/obj
$(BUILD)/containerd-handlers-v3.h: examples/containerd/nsguard-runtimes-v3.toml.in | $(BUILD)/obj
$(BUILD)/containerd-handlers.h $(BUILD)/containerd-handlers-v3.h:
	$(call msg,GEN,$@)
	$(Q)sed -e '1,/^version = /d' -e '/./,$$!d' -e 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' $< >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/configure_containerd.o $(NEXT)/obj/configure_containerd.o: $(BUILD)/containerd-handlers.h \
	$(BUILD)/containerd-handlers-v3.h

# The skeleton and the ABI header are generated: make them before anything
# that includes them.
$(BUILD)/obj/guard.o $(BUILD)/obj/guard-fault.o: $(BUILD)/nsguard.skel.h $(BUILD)/nsguard-abi.h
$(NEXT)/obj/guard.o: $(NEXT)/nsguard-abi.h
$(BUILD)/obj/main.o: NSG_CFLAGS += -DNSGUARD_VERSION='"$(NSGUARD_VERSION)"'
# The commit --version and the metrics' build_info name, and the build's
# sequence (a hook moves pins only to a later build, guard.c): from git, a
# `make dist` tarball's .tarball-version or debian/changelog, SOURCE_DATE_EPOCH
# overriding the sequence (shim/version-stamp; it fails rather than build a
# sequence 0).  Rewritten only when it changes, so only main.o and guard.o
# follow it.
$(BUILD)/obj/main.o $(NEXT)/obj/main.o $(BUILD)/obj/guard.o $(NEXT)/obj/guard.o: $(BUILD)/commit.h
.PHONY: commit-h
$(BUILD)/commit.h: commit-h | $(BUILD)
	$(Q)read -r c t < <(shim/version-stamp) && [ -n "$$t" ] || exit 1; \
	text="#define NSGUARD_COMMIT \"$$c\""$$'\n'"#define NSGUARD_BUILD_SEQ $${t}ULL"; \
	[ "$$(cat $@ 2>/dev/null)" = "$$text" ] || echo "$$text" >$@

# make dist: the tracked files of the work tree (a -dirty commit if edited)
# and .tarball-version, so that a build without .git keeps its commit and
# sequence.  Reproducible: names sorted, owner 0, mtimes the sequence, gzip -n;
# written by rename (parts repro and deb run it side by side).
DIST_NAME := nsguard-$(NSGUARD_VERSION)
DIST := $(BUILD)/$(DIST_NAME).tar.gz
.PHONY: dist
dist: | $(BUILD)
	$(call msg,DIST,$(DIST))
	$(Q)set -e; read -r c t < <(shim/version-stamp); d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	mkdir "$$d/$(DIST_NAME)"; git ls-files -z | grep -zv '^\.tarball-version$$' | \
		tar --null -T - -cf - | tar -C "$$d/$(DIST_NAME)" -xf -; \
	echo "$$c $$t" >"$$d/$(DIST_NAME)/.tarball-version"; \
	tar -C "$$d" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$$t \
		-cf - $(DIST_NAME) | gzip -n >$(DIST).tmp.$$$$; mv $(DIST).tmp.$$$$ $(DIST)

$(BUILD)/obj:
	$(Q)mkdir -p $@

-include $(wildcard $(BUILD)/obj/*.d)
