# Man pages, examples and installation (included by the top-level Makefile).
#
#   make install         PREFIX=/usr/local DESTDIR= (the defaults)
#   make man-lint        both man pages must render without a single warning
#   make install-check   install into build/install-test and check every file
#   make check-man       both of the above as parts "man" and "install"
#                        (results in $(RESULTS)/man.log, install.log); `make
#                        check` runs the man lint within its part "lint"
#                        (integration/lint.mk) and check-install

MAN_PAGES := man/nsguard.8 man/nsguard.conf.5
HOOKS_IN := $(wildcard examples/hooks.d/*.json.in)
UNITS_IN := $(wildcard examples/systemd/*.in)
CONTAINERD_IN := $(wildcard examples/containerd/*.in)
# Scripts installed as they are: the DaemonSet's.
CONTAINERD_SCRIPTS := examples/containerd/nsguard-node-install

INSTALL_BINDIR = $(PREFIX)/bin
# nsguard runtime by name, for runtimes that take a binary (nsguard(8),
# RUNTIME WRAPPER): the plain one and a tier per mode.
RUNTIME_LINKS := nsguard-runtime nsguard-runtime-audit nsguard-runtime-allow
INSTALL_MAN8DIR = $(PREFIX)/share/man/man8
INSTALL_MAN5DIR = $(PREFIX)/share/man/man5
INSTALL_HOOKSDIR = $(PREFIX)/share/containers/oci/hooks.d
# systemd looks in /usr/lib/systemd/system and /usr/local/lib/systemd/system.
SYSTEMDUNITDIR = $(PREFIX)/lib/systemd/system
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
# containerd's handlers (examples/containerd) and the DaemonSet's script.
INSTALL_CONTAINERDDIR = $(PREFIX)/share/nsguard/containerd
# The admin's config lives in /etc whatever the prefix (nsguard looks there).
INSTALL_CONF = /etc/nsguard/nsguard.conf

.PHONY: man-lint install-check check-man

# The hooks.d files and the systemd units name the installed binary, so they
# depend on PREFIX: they are generated at install time rather than kept in
# $(BUILD), where a file made for one PREFIX would be reused for another.
install: $(BUILD)/nsguard install-units
	$(call msg,INSTALL,$(DESTDIR)$(INSTALL_BINDIR)/nsguard)
	$(Q)install -D -m 0755 $(BUILD)/nsguard $(DESTDIR)$(INSTALL_BINDIR)/nsguard
	$(Q)for l in $(RUNTIME_LINKS); do ln -sfn nsguard $(DESTDIR)$(INSTALL_BINDIR)/$$l; done
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/share/man)
	$(Q)install -D -m 0644 man/nsguard.8 $(DESTDIR)$(INSTALL_MAN8DIR)/nsguard.8
	$(Q)install -D -m 0644 man/nsguard.conf.5 $(DESTDIR)$(INSTALL_MAN5DIR)/nsguard.conf.5
	$(call msg,INSTALL,$(DESTDIR)$(INSTALL_HOOKSDIR))
	$(Q)install -d -m 0755 $(DESTDIR)$(INSTALL_HOOKSDIR)
	$(Q)set -e; for src in $(HOOKS_IN); do \
		out=$(DESTDIR)$(INSTALL_HOOKSDIR)/$$(basename "$$src" .in); \
		sed 's|@BINDIR@|$(INSTALL_BINDIR)|g' "$$src" >"$$out.tmp"; \
		chmod 0644 "$$out.tmp"; mv -f "$$out.tmp" "$$out"; \
	done
	$(call msg,INSTALL,$(DESTDIR)$(INSTALL_CONTAINERDDIR))
	$(Q)install -D -m 0755 -t $(DESTDIR)$(INSTALL_CONTAINERDDIR) $(CONTAINERD_SCRIPTS)
	$(Q)set -e; for src in $(CONTAINERD_IN); do \
		out=$(DESTDIR)$(INSTALL_CONTAINERDDIR)/$$(basename "$$src" .in); \
		sed -e 's|@BINDIR@|$(INSTALL_BINDIR)|g' \
			-e 's|@CONTAINERDDIR@|$(INSTALL_CONTAINERDDIR)|g' "$$src" >"$$out.tmp"; \
		chmod 0644 "$$out.tmp"; mv -f "$$out.tmp" "$$out"; \
	done
	$(call msg,INSTALL,$(DESTDIR)$(BASHCOMPDIR)/nsguard)
	$(Q)install -D -m 0644 shim/nsguard.bash-completion $(DESTDIR)$(BASHCOMPDIR)/nsguard
	$(Q)if [ -e $(DESTDIR)$(INSTALL_CONF) ]; then \
		printf '  %-8s %s\n' KEEP '$(DESTDIR)$(INSTALL_CONF) (exists, not overwritten)'; \
	else \
		printf '  %-8s %s\n' INSTALL '$(DESTDIR)$(INSTALL_CONF)'; \
		install -D -m 0644 examples/nsguard.conf $(DESTDIR)$(INSTALL_CONF); \
	fi

# make uninstall: every file make install wrote, from the same lists, and
# /etc/nsguard/nsguard.conf only if it is still the shipped one.  The pins
# and records are not files of the package: `nsguard unload` (run first;
# nsguard(8), UNLOAD) removes them, and `systemctl disable --now` the units.
.PHONY: uninstall
uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(INSTALL_BINDIR)/nsguard \
		$(addprefix $(DESTDIR)$(INSTALL_BINDIR)/,$(RUNTIME_LINKS)) \
		$(DESTDIR)$(INSTALL_MAN8DIR)/nsguard.8 $(DESTDIR)$(INSTALL_MAN5DIR)/nsguard.conf.5 \
		$(addprefix $(DESTDIR)$(INSTALL_HOOKSDIR)/,$(notdir $(HOOKS_IN:.in=))) \
		$(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(UNITS_IN:.in=))) \
		$(addprefix $(DESTDIR)$(INSTALL_CONTAINERDDIR)/,$(notdir $(CONTAINERD_IN:.in=))) \
		$(addprefix $(DESTDIR)$(INSTALL_CONTAINERDDIR)/,$(notdir $(CONTAINERD_SCRIPTS))) \
		$(DESTDIR)$(BASHCOMPDIR)/nsguard
	$(Q)rmdir $(DESTDIR)$(INSTALL_CONTAINERDDIR) $(DESTDIR)$(PREFIX)/share/nsguard 2>/dev/null || true
	$(Q)if cmp -s examples/nsguard.conf $(DESTDIR)$(INSTALL_CONF); then \
		rm -f $(DESTDIR)$(INSTALL_CONF); rmdir $(DESTDIR)$(dir $(INSTALL_CONF)) 2>/dev/null || true; \
	elif [ -e $(DESTDIR)$(INSTALL_CONF) ]; then \
		printf '  %-8s %s\n' KEEP '$(DESTDIR)$(INSTALL_CONF) (edited: yours to remove)'; \
	fi

# The systemd units alone (no build needed): the guest's monitor case
# generates them with INSTALL_BINDIR=build to run their ExecStart.
.PHONY: install-units
install-units:
	$(call msg,INSTALL,$(DESTDIR)$(SYSTEMDUNITDIR))
	$(Q)install -d -m 0755 $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)set -e; for src in $(UNITS_IN); do \
		out=$(DESTDIR)$(SYSTEMDUNITDIR)/$$(basename "$$src" .in); \
		sed 's|@BINDIR@|$(INSTALL_BINDIR)|g' "$$src" >"$$out.tmp"; \
		chmod 0644 "$$out.tmp"; mv -f "$$out.tmp" "$$out"; \
	done

# The node part (integration/tests/node.sh): what make install writes for a
# node, of this build (the older nsguard the node has) and of nsguard-next
# (the newer one its DaemonSet installs), each a DESTDIR tree; and make
# deb's package of this build with a later build of it (deb/old, deb/new),
# for the package's install, upgrade, remove and purge.
GUEST_DEPS += $(BUILD)/node/done
$(BUILD)/node/done: $(BUILD)/nsguard $(BUILD)/nsguard-next man/man.mk $(MAN_PAGES) $(HOOKS_IN) \
		$(UNITS_IN) $(CONTAINERD_IN) $(CONTAINERD_SCRIPTS) examples/nsguard.conf \
		shim/nsguard.bash-completion
	$(call msg,INSTALL,$(@D))
	$(Q)rm -rf $(@D) && mkdir -p $(@D)
	$(Q)$(MAKE) -s install PREFIX=/usr/local DESTDIR=$(abspath $(@D))/old >/dev/null
	$(Q)$(MAKE) -s install PREFIX=/usr/local DESTDIR=$(abspath $(@D))/new >/dev/null
	$(Q)install -m 0755 $(BUILD)/nsguard-next $(@D)/new/usr/local/bin/nsguard
	$(Q)$(MAKE) -s deb DEB_DIR=$(@D)/deb/old >/dev/null
	$(Q)$(MAKE) -s deb DEB_DIR=$(@D)/deb/new DEB_SEQ_ADD=1 >/dev/null
	$(Q)touch $@

man-lint:
	$(Q)man/lint $(MAN_PAGES)

# Builds $(BUILD)/nsguard if needed (install depends on it).
install-check: $(BUILD)/nsguard
	$(Q)man/install-check '$(MAKE)' $(BUILD)/install-test

# Two parts, so a lint failure does not hide the install results and the
# other way round.  `make check` runs the man lint in its part "lint" beside
# the kernel build; the install needs build/nsguard.
.PHONY: check-man-lint check-install
check-man: check-man-lint check-install

check-man-lint: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) man man/lint $(MAN_PAGES)

check-install: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) install $(MAKE) --no-print-directory install-check

# make deb: the Debian package (debian/, debhelper) into $(BUILD)/deb/, built
# from the `make dist` tarball as a distribution would, with a changelog
# entry of this build prepended: version NSGUARD_VERSION+git<sequence>.<commit>
# dated at the sequence, so a later commit's package upgrades an earlier
# one's and dpkg-buildpackage's SOURCE_DATE_EPOCH is the build sequence.
# Then lintian at its default level (overrides: debian/*.lintian-overrides).
# DEB_SEQ_ADD=N: a build N sequences later than this commit's, for the
# package's upgrade test (the same source, a higher version and sequence).
DEB_DIR ?= $(BUILD)/deb
DEB_SEQ_ADD ?= 0
.PHONY: deb
deb: dist
	$(call msg,DEB,$(DEB_DIR))
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR) && tar -C $(DEB_DIR) -xzf $(DIST)
	$(Q)set -e; src=$(DEB_DIR)/$(DIST_NAME); read -r c t <$$src/.tarball-version; \
	t=$$((t + $(DEB_SEQ_ADD))); echo "$$c $$t" >$$src/.tarball-version; \
	v=$(NSGUARD_VERSION)+git$$t.$$(echo "$$c" | tr -c 'a-zA-Z0-9\n' .); \
	{ printf 'nsguard (%s) unstable; urgency=medium\n\n  * Build of commit %s.\n\n' "$$v" "$$c"; \
	  printf ' -- %s  %s\n\n' "$$(dpkg-parsechangelog -l $$src/debian/changelog -S Maintainer)" \
		"$$(LC_ALL=C date -u -R -d @$$t)"; cat $$src/debian/changelog; } >$$src/debian/changelog.new; \
	mv $$src/debian/changelog.new $$src/debian/changelog; \
	(cd $$src && dpkg-buildpackage -b -us -uc) >$(DEB_DIR)/build.log 2>&1 || \
		{ tail -n 20 $(DEB_DIR)/build.log; echo "nsguard: make deb: dpkg-buildpackage failed (all of it in $(DEB_DIR)/build.log)" >&2; exit 1; }
	$(call msg,LINTIAN,$(DEB_DIR)/nsguard_*.changes)
	$(Q)lintian --fail-on error,warning $(DEB_DIR)/nsguard_*_amd64.changes
	$(Q)ls $(DEB_DIR)/nsguard_*.deb
