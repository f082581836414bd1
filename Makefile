# nsguard: the one entry point.  `make help` lists the targets.
.DELETE_ON_ERROR:
.SUFFIXES:
SHELL := /bin/bash

V ?= 0
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)'
MAKEFLAGS += --no-print-directory
endif

PREFIX ?= /usr/local
DESTDIR ?=
BUILD := build
RESULTS := $(BUILD)/results
NSGUARD_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/nsguard
export NSGUARD_CACHE

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wformat=2 -Wshadow -Wno-unused-parameter -Wmissing-prototypes
NSG_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARNINGS) -I$(BUILD) -Ishim -Ishim/lib -Ibpf
# Reproducible: the debug info and __FILE__ name the tree as ".", so one
# source built in two directories gives the same bytes (integration/repro).
REPRO_FLAGS := -ffile-prefix-map=$(CURDIR)=.
NSG_CFLAGS += $(REPRO_FLAGS)

# The guest kernel: Debian's linux-source-$(KERNEL_VERSION), built by
# kernel-patches/build-kernel into $(NSGUARD_CACHE) and linked at
# build/kernel (6.1) or build/kernel-$(KERNEL_VERSION).  The guest goals boot
# KERNEL_VERSION's.  6.1 is the base: vmlinux.h comes from its BTF
# (bpf/bpf.mk), so the one build/nsguard is what every kernel's guest runs.
KERNEL_VERSIONS := 6.1 6.12
KERNEL_VERSION ?= 6.1
ifeq ($(filter $(KERNEL_VERSION),$(KERNEL_VERSIONS)),)
$(error KERNEL_VERSION=$(KERNEL_VERSION): the tested kernels are $(KERNEL_VERSIONS))
endif
kernel_dir = $(BUILD)/kernel$(if $(filter-out 6.1,$(1)),-$(1))
KV_SUFFIX := $(if $(filter-out 6.1,$(KERNEL_VERSION)),-$(KERNEL_VERSION))
KERNEL := $(call kernel_dir,$(KERNEL_VERSION))
BASE_KERNEL := $(call kernel_dir,6.1)
VMLINUX := $(BASE_KERNEL)/vmlinux
BZIMAGE := $(KERNEL)/bzImage
# `nsguard check` names the kernels `make check` tests.
nsg_comma := ,
NSG_CFLAGS += -DNSGUARD_TESTED_KERNELS='"$(subst $() ,$(nsg_comma) ,$(KERNEL_VERSIONS))"'
# For integration/vm-run and kernel-patches/build-kernel below us.
export NSGUARD_KERNEL := $(abspath $(BZIMAGE))
export NSGUARD_KERNEL_VERSION := $(KERNEL_VERSION)
export KERNEL_VERSIONS

.PHONY: all deps deps-test kernel check check-unit check-guest vm-shell clean help install uninstall demo bench fuzz lint
all: $(BUILD)/nsguard

help:
	@echo 'make deps       install the Debian packages building nsguard needs (apt-get, as root)'
	@echo 'make deps-test  install those and everything the tests need (QEMU, runtimes, ...)'
	@echo 'make            build build/nsguard; vmlinux.h from VMLINUX_BTF (the running'
	@echo '                kernel'"'"'s /sys/kernel/btf/vmlinux, or the guest kernel once built)'
	@echo 'make kernel     build the guest kernel into $$NSGUARD_CACHE (cached by content)'
	@echo '                KERNEL_VERSION=6.12: that kernel (default 6.1) for kernel, demo,'
	@echo '                vm-shell, vm-test, check-guest, kselftest-bpf and the other guest goals'
	@echo 'make demo       boot the guest and show nsguard guarding real crun containers'
	@echo 'make check      host, guest and kernel-selftest suites, two at a time, with a phase table'
	@echo 'make lint       shellcheck, the man-page lint and a -Werror build (part of make check)'
	@echo 'make check-clients  podman and runc in the guest (two parts of make check)'
	@echo 'make kselftest-bpf  the kernel BPF selftests for userns_create, in the guest (part of make check)'
	@echo 'make bench      benchmarks in the guest (build/bench/)'
	@echo 'make vm-shell   interactive shell in the guest'
	@echo 'make install    PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)'
	@echo 'make uninstall  the same PREFIX and DESTDIR (run nsguard unload first)'
	@echo 'make dist       build/nsguard-VERSION.tar.gz: the tracked files and .tarball-version'
	@echo 'make deb        the Debian package, into build/deb/ (debhelper, lintian)'
	@echo 'make image      the OCI image, build/image/oci and build/nsguard-image-VERSION.tar'
	@echo '                (ctr images import, podman load); prints its digest'
	@echo 'V=1 shows every command.'

deps:
	$(Q)./integration/deps build

# make -s print-VAR: a variable's value, for scripts (integration/repro).
print-%:
	@echo '$($*)'

deps-test:
	$(Q)./integration/deps test

# Cheap when nothing changed: build-kernel hashes its inputs and reuses the cache.
kernel: | deps-quiet
	$(call msg,KERNEL,$(KERNEL) (Linux $(KERNEL_VERSION)))
	$(Q)kernel-patches/build-kernel --version $(KERNEL_VERSION) --link $(KERNEL) >/dev/null

$(BUILD)/kernel/done $(BUILD)/kernel/bzImage:
	$(Q)$(MAKE) kernel KERNEL_VERSION=6.1
$(BUILD)/kernel-%/done $(BUILD)/kernel-%/bzImage:
	$(Q)$(MAKE) kernel KERNEL_VERSION=$*

.PHONY: deps-quiet
deps-quiet:
	$(Q)./integration/deps --quiet test

$(BUILD) $(RESULTS):
	$(Q)mkdir -p $@

# Parts contributed by each directory.  GUEST_DEPS collects what the guest
# suite needs besides build/nsguard, so it must be complete before
# integration.mk uses it.
GUEST_DEPS :=
include bpf/bpf.mk
include shim/shim.mk
include shim/tests/tests.mk
include integration/seed.mk
include image/image.mk
include integration/guest.mk
include integration/integration.mk
include integration/kselftest.mk
include integration/bench.mk
include man/man.mk
include integration/lint.mk

# make check: every part writes PASS:/FAIL:/SKIP: lines to $(RESULTS)/<part>.log;
# integration/summarize counts them and prints the closing line.  Parts that do
# not depend on each other run side by side, CHECK_JOBS at a time (one per core:
# a guest under TCG keeps one core busy): first the host tests beside the kernel
# build, then every guest boot and the selftests build (not at all, with one
# FAIL line, when the kernel or the build failed: each part would retry them).
# Each part's output is printed when it ends, and its wall time goes to
# $(PHASES); the table closes the run.  A part that fails does not stop the others.  .ci/run adds its own
# phases (CHECK_PHASES_EXTRA) and a budget in seconds (CHECK_BUDGET) to the table.
CHECK_JOBS ?= $(shell nproc)
CHECK_PHASES_EXTRA ?=
CHECK_BUDGET ?=
PHASES := $(BUILD)/phases.tsv
PARALLEL_PARTS = $(MAKE) -k -j$(CHECK_JOBS) --output-sync=target

# Host parts: no guest, and no kernel but for check-lint's -Werror build,
# which waits for check-kernel (integration/lint.mk).  check-lint includes
# the man-page lint.
CHECK_HOST_PARTS := check-unit check-lint
# The current userland's root filesystem (integration/build-rootfs: about a
# minute, mostly download) starts with the run too; check-rootfs-current
# waits for it (its lock) and reports it.
# The 6.12 kernel (about 25 CPU minutes) starts with the run, at nice 10:
# it takes what the 6.1 build, the host parts and the guests leave idle.
# check-kernel-6.12 then waits for it (build-kernel's lock) and reports it;
# should it have failed, builds it again.
# Everything after the kernel and the build, longest first so that the two
# lanes end together: check-kernel-6.12, then the guests (as measured, fresh,
# 2026-12-04, before the guests' 9p page cache: runc 14m39s, guest 10m23s,
# node about 8m, concurrency 5m56s, kselftest 3m32s, podman 2m47s, harness
# 1m50s; the cache takes about 40% off each; kselftest builds only its
# three tests since 2026-12-06: 2m19s against 7m10s on a loaded machine,
# 29 against 120 CPU seconds; on 6.12, check-kselftest-6.12: its test_progs
# build 43 s, its guest 11 s, measured 2026-12-07).  check-guest-6.12 waits for
# check-kernel-6.12.  Guests boot with one
# vCPU (NSGUARD_SMP=1): two 2-vCPU guests side by side on two cores ran the
# lifecycle suite 5.7 times slower.  check-concurrency boots with two.  None of them may have
# a prerequisite that is a job of its own (deps-quiet): make would give that
# job's slot to a later part.
CHECK_PARTS := check-kernel-6.12 check-clients-runc check-clients-node check-guest check-guest-6.12 \
	check-rootfs-current check-clients-current-node check-clients-current-agent check-clients-current-cri \
	check-clients-current-runc check-clients-current-podman \
	check-concurrency check-clients-cri check-kselftest check-kselftest-6.12 check-clients-agent \
	check-clients-podman check-host \
	check-node check-lsm-off \
	check-selinux check-install check-build-only check-repro check-deb check-image

.PHONY: check-early check-late check-kernel
check: | deps-quiet
	$(Q)rm -rf $(RESULTS) $(PHASES) && mkdir -p $(RESULTS)
	$(Q)export NSGUARD_PHASES=$(abspath $(PHASES)) NSGUARD_SMP=1; \
	integration/phases run kernel-6.12-niced nice -n 10 kernel-patches/build-kernel --version 6.12 \
		>$(RESULTS)/kernel-6.12-niced.out 2>&1 & niced=$$!; \
	integration/phases run rootfs-current-download integration/build-rootfs current \
		>$(RESULTS)/rootfs-current-download.out 2>&1 & rootfs=$$!; \
	$(PARALLEL_PARTS) check-early || true; \
	integration/run-part --step $(RESULTS) build $(MAKE) all $(GUEST_DEPS) || true; \
	if grep -q '^FAIL: ' $(RESULTS)/kernel.log $(RESULTS)/build.log; then \
		echo "FAIL: check/guest-parts: not run, the kernel or the build failed (see above)" | \
			tee $(RESULTS)/check.log; \
	else \
		$(PARALLEL_PARTS) check-late || true; \
	fi; \
	wait $$niced || true; wait $$rootfs || true
	$(Q)integration/phases report $(if $(CHECK_BUDGET),--budget $(CHECK_BUDGET)) $(PHASES) \
		$(CHECK_PHASES_EXTRA)
	$(Q)integration/summarize $(RESULTS)

check-early: check-kernel $(CHECK_HOST_PARTS)
check-late: $(CHECK_PARTS)

check-kernel:
	$(Q)integration/run-part --step $(RESULTS) kernel $(MAKE) kernel

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)
