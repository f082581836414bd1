# make bench: the nsguard benchmarks (included by the top-level Makefile).
#
# Builds the bench tools into $(BUILD)/bench/, boots the guest once and runs
# integration/bench/run there (raw samples -> $(BUILD)/bench/raw/), then
# integration/bench/report on the host: $(BUILD)/bench/results.json, the table
# (also results.md) and $(BUILD)/bench/scale.svg.  No timing is ever asserted.
#
# The guest's clock is jiffies-based, so the tools time with the TSC, whose
# rate (the host's) is measured here on the host (BENCH_TSC_HZ overrides).
# Knobs (passed into the guest): BENCH_QUICK=1 for a tooling smoke run, and
# BENCH_PARTS, BENCH_CT_RUNS, BENCH_CT_WRAP_EVERY, BENCH_HOOK_WARM,
# BENCH_HOOK_LOADS, BENCH_HOOK_COLD, BENCH_USERNS_N, BENCH_USERNS_ROUNDS,
# BENCH_SYS_REPS, BENCH_SYS_ITERS, BENCH_SYS_ITERS_OPENAT, BENCH_SCALE_SIZES,
# BENCH_SCALE_MARGINAL, BENCH_CT_ANCHOR, BENCH_SCALE_STATUS, BENCH_SCALE_JOBS, BENCH_SCALE_BUDGET,
# BENCH_SCALE_USERNS_N, BENCH_SCALE_DOWN, BENCH_PROFILE_N (see integration/bench/run); BENCH_MEM
# (guest memory, MB), BENCH_TIMEOUT (s), NSGUARD_ACCEL as for vm-run.
# `make bench-report` re-runs only the report.
BENCH_DIR := $(BUILD)/bench
BENCH_TOOLS := $(BENCH_DIR)/userns-lat $(BENCH_DIR)/sysloop $(BENCH_DIR)/timecmd \
	$(BENCH_DIR)/phasetrace.so $(BENCH_DIR)/ctstamp $(BENCH_DIR)/noop $(BENCH_DIR)/nsguard-dynamic
BENCH_TIMEOUT ?= 3600
# Guest memory (MB): 10 000 guarded cgroups, their pins and records.
BENCH_MEM ?= 2048
BENCH_VARS := BENCH_QUICK BENCH_PARTS BENCH_CT_RUNS BENCH_HOOK_WARM BENCH_HOOK_COLD \
	BENCH_USERNS_N BENCH_USERNS_ROUNDS BENCH_SYS_REPS BENCH_SYS_ITERS BENCH_SYS_ITERS_OPENAT \
	BENCH_SCALE_SIZES BENCH_SCALE_MARGINAL BENCH_SCALE_USERNS_N BENCH_SCALE_DOWN \
	BENCH_PROFILE_N BENCH_CT_WRAP_EVERY BENCH_CT_ANCHOR BENCH_HOOK_LOADS BENCH_SCALE_STATUS BENCH_SCALE_JOBS BENCH_SCALE_BUDGET
BENCH_ENV := $(foreach v,$(BENCH_VARS),$(if $($(v)),'$(v)=$($(v))'))
BENCH_CFLAGS := -std=gnu11 -O2 -g $(WARNINGS)

.PHONY: bench-tools bench-report
# nsg-userns: the stand-in init of the hook part's live process.
bench: all $(BENCH_TOOLS) $(BUILD)/nsg-userns
	$(call msg,BENCH,$(BENCH_DIR) (guest; ~30 min under TCG))
	$(Q)hz=$${BENCH_TSC_HZ:-$$(for i in 1 2 3; do $(BENCH_DIR)/timecmd --calibrate 1; done | sort -n | sed -n 2p)} && \
	NSGUARD_ACCEL=$${NSGUARD_ACCEL:-tcg} $(VM_RUN) --share $(BENCH_DIR) --mem $(BENCH_MEM) --timeout $(BENCH_TIMEOUT) -- \
		env BENCH_TSC_HZ=$$hz BENCH_ACCEL=$${NSGUARD_ACCEL:-tcg} $(BENCH_ENV) integration/bench/run $(BENCH_DIR)
	$(Q)integration/bench/report $(BENCH_DIR)

bench-tools: $(BENCH_TOOLS)

bench-report:
	$(Q)integration/bench/report $(BENCH_DIR)

$(BENCH_DIR):
	$(Q)mkdir -p $@

$(BENCH_DIR)/sysloop: integration/bench/sysloop.c integration/bench/clock.h | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -o $@ $< -lseccomp

$(BENCH_DIR)/userns-lat $(BENCH_DIR)/timecmd: $(BENCH_DIR)/%: integration/bench/%.c integration/bench/clock.h | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -o $@ $<

# The container's process of the start-latency runs: reads the TSC at _start,
# no C library at all.
$(BENCH_DIR)/ctstamp: integration/bench/ctstamp.c | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 $(WARNINGS) -static -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables -o $@ $<

# The exec floor next to the hook: a static no-op.
$(BENCH_DIR)/noop: integration/bench/noop.c | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -static -o $@ $<

# phasetrace.so times nsguard through LD_PRELOAD, which the static binary
# ignores: the profile part's phases come from this dynamic link of the same
# objects (its "exec + ld.so" is the dynamic link's, not build/nsguard's).
$(BENCH_DIR)/nsguard-dynamic: $$(SHIM_OBJS) | $(BENCH_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic -lm

$(BENCH_DIR)/phasetrace.so: integration/bench/phasetrace.c integration/bench/clock.h | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -shared -fPIC -o $@ $< -ldl
