# Host tests of the pure user-space modules: unit tests (plain and with
# ASan/UBSan) and a libFuzzer target.  Included by the top-level Makefile.
# Nothing here links libbpf or guard.c: host tests never call bpf().

# The library's modules without libbpf, shared with the nsguard binary
# (shim/shim.mk links these, the rest of shim/lib/ and the commands).
SHIM_CORE_SRCS := $(addprefix shim/lib/,log.c fileio.c json.c oci.c config.c policy.c \
	cgroup.c scope.c record.c userns.c container.c learn.c identity.c metrics.c spec.c \
	mounts.c jsonstrict.c outcomes.c jv.c agent.c lockfile.c)
SHIM_CORE_LIBS := -lm

UNIT_SRCS := shim/tests/unit.c shim/tests/test_log.c shim/tests/test_oci.c \
	shim/tests/test_config.c shim/tests/test_policy.c shim/tests/test_cgroup.c \
	shim/tests/test_record.c shim/tests/test_scope.c shim/tests/test_fileio.c \
	shim/tests/test_container.c shim/tests/test_identity.c \
	shim/tests/test_spec.c shim/tests/test_mounts.c shim/tests/test_outcomes.c shim/tests/test_jv.c \
	shim/tests/test_agent.c shim/tests/test_lockfile.c
UNIT_DEPS := $(SHIM_CORE_SRCS) $(UNIT_SRCS) $(wildcard shim/*.h shim/lib/*.h shim/tests/*.h) bpf/nsguard.h \
	shim/tests/tests.mk
UNIT_DEFS := -DNSG_TEST_FIXTURES='"$(CURDIR)/shim/tests/fixtures"'

SAN_CC ?= $(CC)
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

FUZZ_TIME ?= 300
FUZZ_SMOKE_TIME ?= 20
FUZZ_SMOKE_RUNS ?= 2000000
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
FUZZ_BIN := $(BUILD)/fuzz/fuzz_parsers
FUZZ_CORPUS := shim/tests/corpus
FUZZ_DICT := shim/tests/fuzz_parsers.dict

.PHONY: unit unit-asan fuzz-smoke

$(BUILD)/tests/unit: $(UNIT_DEPS) | $(BUILD)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(NSG_CFLAGS) $(UNIT_DEFS) -o $@ $(SHIM_CORE_SRCS) $(UNIT_SRCS) \
		$(SHIM_CORE_LIBS)

$(BUILD)/tests-asan/unit: $(UNIT_DEPS) | $(BUILD)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(SAN_CC) $(SAN_FLAGS) $(NSG_CFLAGS) $(UNIT_DEFS) -o $@ $(SHIM_CORE_SRCS) \
		$(UNIT_SRCS) $(SHIM_CORE_LIBS)

$(FUZZ_BIN): shim/tests/fuzz_parsers.c $(UNIT_DEPS) | $(BUILD)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_FLAGS) $(NSG_CFLAGS) -o $@ shim/tests/fuzz_parsers.c \
		$(SHIM_CORE_SRCS) $(SHIM_CORE_LIBS)

unit: $(BUILD)/tests/unit
	$(Q)$(BUILD)/tests/unit

unit-asan: $(BUILD)/tests-asan/unit
	$(Q)$(SAN_ENV) $(BUILD)/tests-asan/unit

# The fuzzer writes new inputs into its corpus: work on a copy so the
# checked-in seeds stay small and reviewed.
fuzz: $(FUZZ_BIN)
	$(Q)rm -rf $(BUILD)/fuzz/corpus && mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crashes
	$(Q)cp $(FUZZ_CORPUS)/* $(BUILD)/fuzz/corpus/
	$(Q)$(FUZZ_BIN) -max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=10 -dict=$(FUZZ_DICT) \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus

fuzz-smoke: $(FUZZ_BIN)
	$(Q)d=$(BUILD)/fuzz/smoke; rm -rf $$d && mkdir -p $$d/corpus $$d/crashes && \
	cp $(FUZZ_CORPUS)/* $$d/corpus/ && \
	if $(FUZZ_BIN) -max_total_time=$(FUZZ_SMOKE_TIME) -runs=$(FUZZ_SMOKE_RUNS) \
		-max_len=65536 -timeout=10 -dict=$(FUZZ_DICT) -artifact_prefix=$$d/crashes/ $$d/corpus \
		>$$d/fuzz.log 2>&1; then \
		echo "PASS: fuzz/parsers"; \
	else \
		tail -n 40 $$d/fuzz.log; \
		echo "FAIL: fuzz/parsers: fuzzer found a crash or failed, see $$d/fuzz.log and $$d/crashes/"; \
		exit 1; \
	fi

# Each part builds inside run-part, so a compile error is reported as a FAIL
# line too.  Referenced through a variable (not $(MAKE) literally) so that
# `make -n check-unit` only prints and never writes $(RESULTS); make then does
# not pass its jobserver on, so the sub-make gets no -j flags to look for it.
CHECK_UNIT_MAKE = env MAKEFLAGS='$(filter-out -j% --jobserver%,$(MAKEFLAGS))' $(MAKE)
check-unit:
	$(Q)rc=0; \
	integration/run-part $(RESULTS) unit $(CHECK_UNIT_MAKE) unit || rc=1; \
	integration/run-part $(RESULTS) unit-asan $(CHECK_UNIT_MAKE) unit-asan || rc=1; \
	integration/run-part $(RESULTS) fuzz-smoke $(CHECK_UNIT_MAKE) fuzz-smoke || rc=1; \
	exit $$rc
