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
NSG_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARNINGS) -I$(BUILD) -Ishim -Ibpf

KERNEL := $(BUILD)/kernel
VMLINUX := $(KERNEL)/vmlinux
BZIMAGE := $(KERNEL)/bzImage

.PHONY: all deps kernel check check-unit check-guest vm-shell clean help install demo bench fuzz
all: $(BUILD)/nsguard

help:
	@echo 'make deps       install the Debian packages nsguard needs (apt-get, as root)'
	@echo 'make kernel     build the guest kernel into $$NSGUARD_CACHE (cached by content)'
	@echo 'make            build build/nsguard (needs the kernel for vmlinux.h)'
	@echo 'make demo       boot the guest and show nsguard guarding real crun containers'
	@echo 'make check      host unit, sanitizer and fuzz tests, then the guest suites'
	@echo 'make check-clients  podman and runc in the guest (part of make check)'
	@echo 'make kselftest-bpf  the kernel BPF selftests for userns_create, in the guest'
	@echo 'make bench      benchmarks in the guest (build/bench/)'
	@echo 'make vm-shell   interactive shell in the guest'
	@echo 'make install    PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)'
	@echo 'V=1 shows every command.'

deps:
	$(Q)./integration/deps

# Cheap when nothing changed: build-kernel hashes its inputs and reuses the cache.
kernel: | deps-quiet
	$(call msg,KERNEL,$(KERNEL))
	$(Q)kernel-patches/build-kernel --link $(KERNEL) >/dev/null

$(KERNEL)/done:
	$(Q)$(MAKE) kernel

.PHONY: deps-quiet
deps-quiet:
	$(Q)./integration/deps --quiet

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
include integration/guest.mk
include integration/integration.mk
include integration/kselftest.mk
include integration/bench.mk
include man/man.mk

# make check: every part writes PASS:/FAIL:/SKIP: lines to $(RESULTS)/<part>.log;
# integration/summarize counts them and prints the closing line.
check: | deps-quiet
	$(Q)rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	$(Q)$(MAKE) kernel
	$(Q)$(MAKE) check-unit || true
	$(Q)$(MAKE) check-man || true
	$(Q)$(MAKE) check-host || true
	$(Q)$(MAKE) check-guest || true
	$(Q)$(MAKE) check-selinux || true
	$(Q)$(MAKE) check-lsm-off || true
	$(Q)$(MAKE) check-clients || true
	$(Q)integration/summarize $(RESULTS)

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)
