# Guest harness targets (included by the top-level Makefile).
VM_RUN := integration/vm-run
GUEST_TIMEOUT ?= 2400
CLIENTS_TIMEOUT ?= 1800

.PHONY: check-host check-guest check-clients vm-shell vm-test

# Host-side checks of the harness and the kernel tree check (on both kernels'
# trees), and the host
# tests of the built binary's command line (shim/tests/cli-*.sh, no bpf()).
# A failing one does not keep the others from running.
check-host: $(BUILD)/kernel/done all | check-kernel-6.12 $(RESULTS)
	$(Q)rc=0; \
	integration/run-part $(RESULTS) tree kernel-patches/test-check-tree || rc=1; \
	integration/run-part $(RESULTS) harness integration/test-harness || rc=1; \
	integration/run-part $(RESULTS) cli shim/tests/cli-run || rc=1; \
	exit $$rc

# The guest suite: every integration/tests/NN-*.sh in one booted guest.
# GUEST_TESTS=pattern narrows it (e.g. make check-guest GUEST_TESTS=basic).
check-guest: all $(GUEST_DEPS) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) guest \
		$(VM_RUN) -q --timeout $(GUEST_TIMEOUT) -- integration/guest-suite $(GUEST_TESTS)

# The other tested kernel (KERNEL_VERSIONS in the Makefile): the same
# build/nsguard and BPF object, built against 6.1's BTF, in a 6.12 guest: the
# basic, seed, CO-RE scripts, the guard mechanism without a runtime (guard),
# the crun container scripts that hold the boundary (containers, escape,
# failure) and the count limit and learn mode (count-learn), every case
# named linux-6.12/... (OTHER_KERNEL_SUITES narrows or widens them; guard,
# failure and count-learn add about 4m40s to that guest: 79 s, 150 s and
# 52 s, measured 2026-12-06 with the cache, two cores shared).  `make
# check` builds that kernel beside the 6.1 build and guests (Makefile).
# make check-guest KERNEL_VERSION=6.12 runs the whole guest suite there.
OTHER_KERNEL_SUITES ?= basic seed core guard containers escape views failure count-learn
# and, in the same boot, Kubernetes pods through containerd's CRI (about 75 s)
# and the agent's checks of its peer (client-agent-peer.sh: SO_PEERPIDFD
# there, the sent pidfd on 6.1; about a minute).
OTHER_KERNEL_CLIENTS ?= cri agent-peer
.PHONY: check-kernel-6.12 check-guest-6.12
check-kernel-6.12: | $(RESULTS)
	$(Q)integration/run-part --step $(RESULTS) kernel-6.12 $(MAKE) kernel KERNEL_VERSION=6.12
check-guest-6.12: all $(GUEST_DEPS) check-kernel-6.12 | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) guest-6.12 \
		$(VM_RUN) -q --kernel $(abspath $(BUILD)/kernel-6.12/bzImage) --timeout $(GUEST_TIMEOUT) \
		-- bash -c 'integration/guest-suite --prefix linux-6.12/ "$$@"; rc=$$?; \
			integration/guest-suite --prefix linux-6.12/ --clients $(OTHER_KERNEL_CLIENTS) || rc=1; \
			exit $$rc' - $(OTHER_KERNEL_SUITES)

# Real clients, each in its own boot so that `make check` can run them side by
# side: podman (hooks.d, annotations), runc (the container scripts again
# under runc and under the other hook stage, see tests/client-runc.sh), and
# Kubernetes pods through containerd's CRI plugin (tests/client-cri.sh), and
# nsguard agent in front of crun's hooks (tests/client-agent.sh, and its
# peer checks, tests/client-agent-peer.sh: --clients agent runs both).
CLIENT_PARTS := check-clients-podman check-clients-runc check-clients-cri check-clients-agent
.PHONY: $(CLIENT_PARTS)
check-clients: $(CLIENT_PARTS)

$(CLIENT_PARTS): check-clients-%: all $(GUEST_DEPS) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) clients-$* \
		$(VM_RUN) -q --timeout $(CLIENTS_TIMEOUT) -- integration/guest-suite --clients $*

# The runtimes a node registers a binary with (its own boot): nsguard runtime
# in front of crun and runc (tests/client-wrapper.sh), containerd 1.6 through
# its runc shim (client-containerd.sh) and Docker 20.10 (client-docker.sh).
.PHONY: check-clients-node
check-clients: check-clients-node
check-clients-node: all $(GUEST_DEPS) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) clients-node \
		$(VM_RUN) -q --timeout $(CLIENTS_TIMEOUT) -- integration/guest-suite --clients wrapper containerd docker

# A node under Debian's systemd as PID 1, in a boot of its own
# (tests/node.sh, vm-run --systemd): the units' order at boot, events and
# refusals in the journal, the gc timer, the DaemonSet's install script
# upgrading an older nsguard under running containers, and the Debian
# package's install, upgrade under starting containers, remove and purge.
.PHONY: check-node
check-node: all $(GUEST_DEPS) $(BUILD)/node/done | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) node \
		$(VM_RUN) -q --systemd --timeout $(CLIENTS_TIMEOUT) -- integration/tests/node.sh

# What an operator builds on a real host: a copy of the tracked sources,
# `make && make install` with an empty cache and the build packages only,
# from the running kernel's BTF and from the guest kernel's named with
# VMLINUX_BTF (integration/build-only; on the host, no bpf()).
.PHONY: check-build-only
check-build-only: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) build-only env GUEST_BTF=$(abspath $(VMLINUX)) integration/build-only

# Reproducible and stampable: `make dist`, its tarball built without .git in
# two directories: identical binaries, ABI, commit and sequence
# (integration/repro; on the host, no bpf()).
.PHONY: check-repro
check-repro: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) repro integration/repro

# make deb on the host: lintian, the package's files, conffile, units and
# maintainer scripts (integration/deb-check; no bpf(), nothing installed).
.PHONY: check-deb
check-deb: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) deb integration/deb-check

# The concurrency cases, in a boot with two vCPUs (tests/concurrency.sh);
# every other part boots with NSGUARD_SMP (make check sets 1).
.PHONY: check-concurrency
check-concurrency: all $(GUEST_DEPS) | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) concurrency \
		$(VM_RUN) -q --smp 2 --timeout $(CLIENTS_TIMEOUT) -- integration/guest-suite --concurrency

vm-shell: $(BZIMAGE)
	$(Q)$(VM_RUN) --interactive

# make vm-test CMD='...': run one command in the guest.
vm-test: $(BZIMAGE)
	$(Q)$(VM_RUN) -- bash -c '$(CMD)'

.PHONY: demo
demo: kernel
	$(Q)$(MAKE) all $(GUEST_DEPS)
	$(Q)$(VM_RUN) -q -- integration/demo

# The "current" guest userland: Debian unstable's containerd 2, runc 1.3,
# crun 1.2x, podman 5, Docker 28 (integration/userland/current.list), built
# by integration/build-rootfs into $(NSGUARD_CACHE)/rootfs beside the
# kernels (cached by the list's content; about a minute and 520 MiB) and
# booted with the 6.12 kernel over 9p (vm-run --root).  6.1 stays on this
# machine's Debian 12 userland.  Every case is named current/...; each
# client suite's log starts with the runtimes' versions and packages.
ROOTFS_CURRENT := $(BUILD)/rootfs-current
CURRENT_VM_RUN = $(VM_RUN) -q --kernel $(abspath $(BUILD)/kernel-6.12/bzImage) \
	--root $(ROOTFS_CURRENT) --timeout $(CLIENTS_TIMEOUT)
.PHONY: rootfs-current check-rootfs-current
rootfs-current:
	$(call msg,ROOTFS,$(ROOTFS_CURRENT) (Debian unstable))
	$(Q)integration/build-rootfs --link $(ROOTFS_CURRENT) current >/dev/null
check-rootfs-current: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) rootfs-current bash -c \
		'integration/build-rootfs --link $(ROOTFS_CURRENT) current >/dev/null && \
		echo "PASS: rootfs-current: $$(cat $(ROOTFS_CURRENT)/.nsguard-done)"'

# The client suites on it, in the 6.12 guest, a boot each as on Debian 12:
# current-runc (the container scripts under runc 1.3 and crun 1.28's hooks,
# below), current-node (the wrapper, containerd 2 via ctr and configure in a
# version 3 config, Docker 28), current-podman (podman 5's hooks.d),
# current-agent (the agent and its peer checks), current-cri (Kubernetes
# pods through containerd 2.1's CRI, config version 3, pods with their own
# user namespace).  Measured on the older 6.12 build, one vCPU, two guests
# side by side (2026-12-07): node about 5 min, agent 4m30s, podman 50 s;
# cri (the current 6.12 build) about 4 min (the suite 227-262 s, and the boot).
CURRENT_PARTS := check-clients-current-node check-clients-current-podman \
	check-clients-current-agent check-clients-current-cri
current_clients = $(if $(filter node,$(1)),wrapper containerd docker,$(1))
.PHONY: $(CURRENT_PARTS) check-clients-current check-clients-current-runc
check-clients-current: $(CURRENT_PARTS) check-clients-current-runc
$(CURRENT_PARTS): check-clients-current-%: all $(GUEST_DEPS) check-kernel-6.12 check-rootfs-current | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) clients-current-$* \
		$(CURRENT_VM_RUN) -- integration/guest-suite --prefix current/ --clients $(call current_clients,$*)

# The runc and crun hook suites on the current userland, one boot: the
# container scripts under runc 1.3 (tests/client-runc.sh, RUNC_SCRIPTS and
# its prestart cases) and under crun 1.28 (guest-suite's NN scripts).  All
# of them take some 17 guest minutes (measured 2026-12-07, one vCPU, two
# guests side by side: runc 527 s, 160 passed and 3 skipped; crun 489 s, 168
# passed), so make check runs where the current runtimes differ: runc's
# views (runc 1.3's mounts) and failure (its own refusals) and crun's views
# (1.2x's open_tree binds): 318 s, 100 passed, 3 skipped.  The whole:
#   make check-clients-current-runc CURRENT_RUNC_SCRIPTS= CURRENT_RUNC_PRESTART_CASES= \
#	CURRENT_CRUN_SUITES='containers escape views lifecycle failure count-learn'
# (an empty CURRENT_RUNC_* is client-runc.sh's default: every script and case).
CURRENT_RUNC_SCRIPTS ?= 35-views 50-failure
CURRENT_RUNC_PRESTART_CASES ?= fail/annotation-bad-mode fail/bad-config
CURRENT_CRUN_SUITES ?= views
check-clients-current-runc: all $(GUEST_DEPS) check-kernel-6.12 check-rootfs-current | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) clients-current-runc \
		$(CURRENT_VM_RUN) -- env RUNC_SCRIPTS='$(strip $(CURRENT_RUNC_SCRIPTS))' \
			RUNC_PRESTART_CASES='$(strip $(CURRENT_RUNC_PRESTART_CASES))' \
			bash -c 'integration/guest-suite --prefix current/ --clients runc; rc=$$?; \
			integration/guest-suite --prefix current/ "$$@" || rc=1; exit $$rc' - \
		$(if $(strip $(CURRENT_CRUN_SUITES)),,$(error CURRENT_CRUN_SUITES is empty: that would run every guest script)) \
		$(CURRENT_CRUN_SUITES)

# runc's own integration suite (Debian's runc source package's bats files,
# a peer's tests) in the current userland's 6.12 guest, three runs in one
# boot: plain runc, `nsguard runtime` in front of it in the allow tier, and
# in the deny tier (tests/peer-runc.sh says what each must show).
# integration/peer-prep fetches the source package, bats and the two images
# the tests want into $(NSGUARD_CACHE)/peer (cached by runc's version;
# nothing downloads in the guest).  make peer-suite: every file, its own
# results and summary in $(BUILD)/peer-results.  PEER_RUNC_FILES narrows it.
PEER_TIMEOUT ?= 7200
PEER_RUNC_FILES ?=
PEER_RESULTS := $(BUILD)/peer-results
peer_run = peer=$$(integration/peer-prep $(ROOTFS_CURRENT)) && \
	integration/run-part $(1) $(2) $(CURRENT_VM_RUN) --timeout $(3) --share $$peer \
		-- env NSG_PEER=$$peer NSG_PREFIX=current/ PEER_FILES='$(strip $(4))' \
		PEER_FILTER='$(5)' integration/tests/peer-runc.sh
.PHONY: peer-suite check-peer-runc
peer-suite: all check-kernel-6.12 check-rootfs-current
	$(Q)rm -rf $(PEER_RESULTS) && mkdir -p $(PEER_RESULTS)
	$(Q)$(call peer_run,$(PEER_RESULTS),peer-runc,$(PEER_TIMEOUT),$(PEER_RUNC_FILES),); \
		rc=$$?; integration/summarize $(PEER_RESULTS) || rc=1; exit $$rc

# The subset: runc's create, hooks, kill, delete and events files, three
# runs (30 tests each).  Too slow for make check's budget (see README, peer
# suite), so not in CHECK_PARTS; run, results in $(RESULTS)/peer-runc-subset.log:
PEER_CHECK_FILES ?= create hooks kill delete events
check-peer-runc: all check-kernel-6.12 check-rootfs-current | $(RESULTS)
	$(Q)$(call peer_run,$(RESULTS),peer-runc-subset,$(CLIENTS_TIMEOUT),$(PEER_CHECK_FILES),)
