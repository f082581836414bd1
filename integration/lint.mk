# make lint (included by the top-level Makefile): shellcheck over every shell
# script (integration/lint), the man-page lint (man/lint), and build/nsguard
# built again with -Werror into $(BUILD)/lint/ (same flags, build/obj is left
# alone).  `make check` runs it as the part "lint" (results in
# $(RESULTS)/lint.log): PASS:/FAIL: lines lint/shellcheck/PATH, the man
# lint's own lines, and lint/werror.
#
# The -Werror build needs the skeleton, hence the kernel's BTF: within
# `make check` the part waits for check-kernel (run beside the other host
# parts), and reports a FAIL instead of building the kernel a second time
# when that failed.
LINT := $(BUILD)/lint
LINT_OBJS = $(patsubst $(BUILD)/obj/%,$(LINT)/obj/%,$(SHIM_OBJS))

.PHONY: lint lint-werror check-lint

lint-werror: $(LINT)/nsguard

$(LINT)/nsguard: $$(LINT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(SHIM_LIBS)

$(LINT)/obj/%.o: shim/%.c $(BUILD)/nsguard.skel.h | $(LINT)/obj
	$(call msg,CC,$@ (-Werror))
	$(Q)$(CC) $(CFLAGS) $(NSG_CFLAGS) -Werror -MMD -MP -c $< -o $@

$(LINT)/obj/%.o: shim/lib/%.c $(BUILD)/nsguard.skel.h | $(LINT)/obj
	$(call msg,CC,$@ (-Werror))
	$(Q)$(CC) $(CFLAGS) $(NSG_CFLAGS) -Werror -MMD -MP -c $< -o $@

$(LINT)/obj/main.o: NSG_CFLAGS += -DNSGUARD_VERSION='"$(NSGUARD_VERSION)"'
$(LINT)/obj/main.o $(LINT)/obj/guard.o: $(BUILD)/commit.h
$(LINT)/obj/guard.o: $(BUILD)/nsguard-abi.h
$(LINT)/obj/configure_containerd.o: $(BUILD)/containerd-handlers.h $(BUILD)/containerd-handlers-v3.h

$(LINT)/obj:
	$(Q)mkdir -p $@

-include $(wildcard $(LINT)/obj/*.d)

# integration/lint runs the three and prints their PASS:/FAIL: lines; within
# make check (goal check-early) after the kernel part.
LINT_ENV = MAN_PAGES='$(MAN_PAGES)' LINT_MAKE="$(CHECK_UNIT_MAKE)"

lint:
	$(Q)$(LINT_ENV) integration/lint --all

check-lint: $(if $(filter check-early,$(MAKECMDGOALS)),check-kernel) | $(RESULTS)
	$(Q)$(LINT_ENV) integration/run-part $(RESULTS) lint integration/lint --all \
		--kernel-log $(RESULTS)/kernel.log
