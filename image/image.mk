# make image: the OCI image of nsguard, built offline from this tree's own
# build (included by the top-level Makefile before integration.mk: the CRI
# guest imports it, GUEST_DEPS; image/mkimage writes it).
#
#   $(IMAGE_LAYOUT)   an OCI image layout (oci-layout, index.json, blobs/)
#   $(IMAGE_ARCHIVE)  the same as one tar, with a Docker manifest.json too:
#                     `ctr -n k8s.io images import FILE`, `podman load -i FILE`
#                     and `docker load -i FILE` take it, as $(IMAGE_NAME)
#
# The image's tree: /payload is `make install DESTDIR=/payload
# PREFIX=/usr/local` of build/nsguard (the static binary, its links, the
# units, hooks.d files, nsguard-node-install and the drop-in's parts, the
# man pages), what examples/kubernetes/daemonset.yaml's init container
# installs onto the node; /bin is Debian's static busybox (busybox-static),
# the shell and tools nsguard-node-install runs with; /tmp.  Reproducible:
# every time is the build's version stamp (shim/version-stamp), so two
# builds of one commit give one digest (make check part image,
# integration/image-check).  `make image` prints the image's (the
# manifest's) digest.
IMAGE_NAME ?= localhost/nsguard:$(NSGUARD_VERSION)
IMAGE_DIR := $(BUILD)/image
IMAGE_LAYOUT := $(IMAGE_DIR)/oci
IMAGE_ARCHIVE := $(BUILD)/nsguard-image-$(NSGUARD_VERSION).tar
BUSYBOX ?= /bin/busybox
# What make install copies (man/man.mk's lists, included later).
IMAGE_INPUTS := image/mkimage image/image.mk man/man.mk man/nsguard.8 man/nsguard.conf.5 \
	$(wildcard examples/hooks.d/*.json.in examples/systemd/*.in examples/containerd/*) \
	examples/nsguard.conf shim/nsguard.bash-completion
GUEST_DEPS += $(IMAGE_ARCHIVE)

.PHONY: image
image: $(IMAGE_ARCHIVE)
	$(Q)/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' \
		$(IMAGE_LAYOUT)/index.json

$(IMAGE_ARCHIVE): $(BUILD)/nsguard $(IMAGE_INPUTS)
	$(call msg,IMAGE,$(IMAGE_ARCHIVE) ($(IMAGE_NAME)))
	$(Q)set -e; root=$(IMAGE_DIR)/root; rm -rf "$$root"; \
	read -r c t < <(shim/version-stamp); \
	[ -x $(BUSYBOX) ] && ! LC_ALL=C ldd $(BUSYBOX) >/dev/null 2>&1 || \
		{ echo "nsguard: $(BUSYBOX) is not a static busybox: apt-get install busybox-static" \
			"(make deps-test), or set BUSYBOX" >&2; exit 1; }; \
	$(MAKE) -s install DESTDIR=$(abspath $(IMAGE_DIR))/root/payload PREFIX=/usr/local >/dev/null; \
	install -D -m 0755 $(BUSYBOX) "$$root/bin/busybox"; \
	for a in $$($(BUSYBOX) --list); do [ "$$a" = busybox ] || ln -s busybox "$$root/bin/$$a"; done; \
	mkdir -p "$$root/tmp"; \
	image/mkimage --root "$$root" --name $(IMAGE_NAME) --epoch "$$t" --revision "$$c" \
		--version $(NSGUARD_VERSION) --layout $(IMAGE_LAYOUT) --archive $@ >/dev/null

# Two builds of the image, one digest; the layout's index, manifest, config
# and blobs checked against their sha256 (integration/image-check; on the
# host, no bpf(), no daemon).
.PHONY: check-image
check-image: | $(RESULTS)
	$(Q)integration/run-part $(RESULTS) image integration/image-check
