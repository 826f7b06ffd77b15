# The two commands of the README, and what a packager needs.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
UNITDIR ?= $(SYSCONFDIR)/systemd/system
JOBS ?= 2
CONFIG ?= Config/aseqosc.json5

# The product: the Swift runtime linked in, so the binary runs where no toolchain is installed.
# Its own scratch path, beside the test suite's .build/release (built with other flags by
# scripts/test): switching between the two rebuilds nothing. The package build (debian/rules)
# adds SWIFT_EXTRA_FLAGS, and with Debian's swiftlang (in the Debian 13 root: `make deb
# DEBIAN_ROOT=trixie`, `make deb ARCH=arm64`) a SCRATCH of its own, .build/static-ARCH.
SCRATCH ?= .build/static
SWIFT_EXTRA_FLAGS ?=
STATIC_BIN := $(SCRATCH)/release/aseqosc
BIN ?= $(STATIC_BIN)
# --disable-local-rpath: no RUNPATH $ORIGIN; with the runtime linked in, nothing is loaded from
# beside the binary.
SWIFT_BUILD_FLAGS := -c release -j $(JOBS) --static-swift-stdlib --disable-local-rpath --scratch-path $(SCRATCH) \
  --product aseqosc $(SWIFT_EXTRA_FLAGS)
# `make install` builds when the binary is missing or older than a source (only the binary
# this Makefile builds: BIN=other is installed as it is). debian/rules empties it.
ifeq ($(BIN),$(STATIC_BIN))
BIN_SOURCES ?= $(shell find Sources Package.swift VERSION $(wildcard Plugins) -type f 2>/dev/null)
endif

# swift, wherever it is, even under sudo (whose PATH has no toolchain): scripts/bootstrap knows.
SWIFT ?= $(shell scripts/bootstrap --find-swift 2>/dev/null || echo swift)
# What installs the missing packages; the package build sets it to `:` (its Build-Depends
# are installed before it starts, and nothing is installed from inside it).
BOOTSTRAP ?= scripts/bootstrap
# Under `sudo make install`, build as the user who ran sudo, so .build does not end up owned
# by root (only when that user owns the checkout; debian/rules sets SUDO_USER empty).
ifeq ($(shell id -u),0)
ifneq ($(filter-out root,$(SUDO_USER)),)
ifeq ($(shell stat -c %U .),$(SUDO_USER))
AS_USER := sudo -u $(SUDO_USER) -H --
endif
endif
endif

# `make install` strips (install -s); the package leaves that to dh_strip, which keeps the
# symbols in aseqosc-dbgsym.
INSTALL_STRIP ?= -s
# Man pages: `make man` renders them here (needs pandoc; `make run` does not).
MANOUT ?= .build/man
MANPAGES ?= $(wildcard $(MANOUT)/aseqosc.1 $(MANOUT)/aseqosc.json5.5)

.PHONY: run build test test-vm bootstrap install uninstall man deb clean

## make run: install what is missing, build in release, start the bridge on the default config.
run: build
	$(BIN) run --config $(CONFIG)

build: bootstrap
	$(AS_USER) $(SWIFT) build $(SWIFT_BUILD_FLAGS)
	@# SwiftPM leaves an up-to-date binary untouched; make compares times with the sources.
	$(AS_USER) touch $(STATIC_BIN)

bootstrap:
	$(BOOTSTRAP)

## make test: unit tests here, ALSA tests against the kernel sequencer (here or in a VM).
test:
	scripts/bootstrap --test
	JOBS=$(JOBS) scripts/test

## make test-vm CMD='...': run any command in the ALSA VM, e.g. CMD='.build/release/aseqosc ports'.
test-vm:
	scripts/bootstrap --test
	scripts/alsa-vm -- sh -c '$(CMD)'

$(BIN): $(BIN_SOURCES)
	$(MAKE) build

## make man: aseqosc(1) from the binary's own --help, aseqosc.json5(5) from docs/CONFIG.md.
man: $(BIN)
	$(BOOTSTRAP) --man
	scripts/manpages $(BIN) $(MANOUT)

## make install: the binary (stripped), the units (pointing at it), the default config (an
## edited /etc/aseqosc/aseqosc.json5 is never overwritten), the docs, the man pages if built.
install: $(BIN)
	install -D -m 755 $(INSTALL_STRIP) $(BIN) $(DESTDIR)$(PREFIX)/bin/aseqosc
	install -d $(DESTDIR)$(UNITDIR)
	for unit in systemd/aseqosc.service systemd/aseqosc@.service; do \
	  sed -e 's|/usr/local/bin/aseqosc|$(PREFIX)/bin/aseqosc|' -e 's|/usr/local/share|$(PREFIX)/share|' \
	      -e 's|/etc/aseqosc|$(SYSCONFDIR)/aseqosc|g' "$$unit" > $(DESTDIR)$(UNITDIR)/$$(basename "$$unit"); \
	  chmod 644 $(DESTDIR)$(UNITDIR)/$$(basename "$$unit"); \
	done
	install -D -m 644 Config/aseqosc.json5 $(DESTDIR)$(PREFIX)/share/aseqosc/aseqosc.json5
	install -d $(DESTDIR)$(SYSCONFDIR)/aseqosc
	[ -e $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5 ] || \
	  install -m 644 Config/aseqosc.json5 $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5
	install -D -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/aseqosc/README.md
	install -m 644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/aseqosc/
	@# The examples (configs, and receivers to try them with) are documentation, where Debian
	@# keeps it; share/aseqosc/examples, where they used to be, links there.
	find Config/examples -type f | while read -r f; do \
	  mode=644; [ ! -x "$$f" ] || mode=755; \
	  install -D -m $$mode "$$f" "$(DESTDIR)$(PREFIX)/share/doc/aseqosc/examples/$${f#Config/examples/}"; \
	done
	[ -L $(DESTDIR)$(PREFIX)/share/aseqosc/examples ] || rm -rf $(DESTDIR)$(PREFIX)/share/aseqosc/examples
	ln -sfn ../doc/aseqosc/examples $(DESTDIR)$(PREFIX)/share/aseqosc/examples
	$(if $(filter %.1,$(MANPAGES)),install -D -m 644 $(filter %.1,$(MANPAGES)) -t $(DESTDIR)$(PREFIX)/share/man/man1/)
	$(if $(filter %.5,$(MANPAGES)),install -D -m 644 $(filter %.5,$(MANPAGES)) -t $(DESTDIR)$(PREFIX)/share/man/man5/)

## make uninstall: everything install put there, except a config you may have edited. Units
## enabled with systemctl are disabled (and stopped) first, so no .wants link is left dangling.
uninstall:
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null; then \
	  now=; [ -d /run/systemd/system ] && now=--now; \
	  units=$$( { systemctl list-units --all --plain --no-legend 'aseqosc@*.service' 2>/dev/null | awk '{ print $$1 }'; \
	              for link in $(SYSCONFDIR)/systemd/system/*.wants/aseqosc@*.service; do \
	                [ -L "$$link" ] && basename "$$link"; done; } | sort -u); \
	  for unit in aseqosc.service $$units; do \
	    if systemctl is-enabled --quiet "$$unit" 2>/dev/null || systemctl is-active --quiet "$$unit" 2>/dev/null; then \
	      echo "systemctl disable $${now:+$$now }$$unit"; systemctl disable $$now --quiet "$$unit" || true; \
	    fi; \
	  done; \
	fi
	rm -f $(DESTDIR)$(PREFIX)/bin/aseqosc
	rm -f $(DESTDIR)$(UNITDIR)/aseqosc.service $(DESTDIR)$(UNITDIR)/aseqosc@.service
	@# What systemctl did not remove (a DESTDIR, no systemd running): links to the removed units.
	@for link in $(DESTDIR)$(SYSCONFDIR)/systemd/system/*.wants/aseqosc*.service; do \
	  [ -L "$$link" ] || continue; \
	  case "$$(readlink "$$link")" in \
	    $(UNITDIR)/aseqosc.service|$(UNITDIR)/aseqosc@.service|$(DESTDIR)$(UNITDIR)/aseqosc*.service) \
	      echo "removed $$link"; rm -f "$$link"; rmdir "$$(dirname "$$link")" 2>/dev/null || true;; \
	    *) echo "left $$link -> $$(readlink "$$link") (not a unit make install put there)";; \
	  esac; \
	done
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
	rm -rf $(DESTDIR)$(PREFIX)/share/aseqosc $(DESTDIR)$(PREFIX)/share/doc/aseqosc
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/aseqosc.1 $(DESTDIR)$(PREFIX)/share/man/man5/aseqosc.json5.5
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5 ]; then \
	  if cmp -s Config/aseqosc.json5 $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5; then \
	    rm -f $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5; rmdir $(DESTDIR)$(SYSCONFDIR)/aseqosc 2>/dev/null || true; \
	  else echo "kept $(SYSCONFDIR)/aseqosc/aseqosc.json5 (edited)"; fi; \
	fi

## make deb: the Debian package (debian/), checked by lintian; its path is the last line.
## make deb DEBIAN_ROOT=trixie: the same, built natively in the Debian 13 root (scripts/build-root)
## with Debian 13's swiftlang and libraries: the package for Debian 13 (libasound2t64,
## libwebsockets19t64), where `make deb` on Debian 12 makes Debian 12's (libwebsockets17). Needs root.
## make deb ARCH=arm64: the same for arm64, cross-built in that Debian 13 root with Debian's own
## Swift and arm64 packages (scripts/cross-sdk; docs/packaging.md). Needs root.
## dpkg-buildpackage writes into the parent folder; the results are moved to .build/deb/, or for
## a build in the root to .build/deb/trixie/ (a Debian 12 and a Debian 13 amd64 package share a name).
BUILD_ARCH := $(shell dpkg-architecture -qDEB_BUILD_ARCH 2>/dev/null)
# Only from make's command line: an ARCH in the environment (kernel builds set one) is not ours.
ifneq ($(origin ARCH),command line)
ARCH := $(BUILD_ARCH)
endif
# Where the package is built: here (empty), or in the root of a Debian release that
# scripts/build-root makes: trixie is the one (Debian 13, whose swiftlang builds there). Another
# architecture is always built there.
DEBIAN_ROOT ?=
ifneq ($(ARCH),$(BUILD_ARCH))
DEBIAN_ROOT := trixie
endif
ifneq ($(filter-out trixie,$(DEBIAN_ROOT)),)
$(error DEBIAN_ROOT=$(DEBIAN_ROOT): the package is built in a Debian 13 root, DEBIAN_ROOT=trixie, or here)
endif
# In the root: the root with the build's tools and ARCH's libraries (for another ARCH with its
# Swift runtime too), and dpkg-buildpackage's options. Profile nocheck, as Debian's cross builds
# set it (liblo-dev, the tests', is left out), and cross for another ARCH.
ifeq ($(ARCH),$(BUILD_ARCH))
ROOT_SETUP = scripts/build-root $(ARCH)
ROOT_BUILD = dpkg-buildpackage -Pnocheck -b -us -uc
else
ROOT_SETUP = scripts/cross-sdk $(ARCH)
ROOT_BUILD = dpkg-buildpackage -a$(ARCH) -Pcross,nocheck -b -us -uc
endif
DEB_VERSION = $(shell dpkg-parsechangelog -SVersion)
DEB_OUT = aseqosc_$(DEB_VERSION)_$(ARCH).deb aseqosc-dbgsym_$(DEB_VERSION)_$(ARCH).deb \
  aseqosc_$(DEB_VERSION)_$(ARCH).buildinfo aseqosc_$(DEB_VERSION)_$(ARCH).changes
DEB_DIR = .build/deb$(if $(DEBIAN_ROOT),/$(DEBIAN_ROOT))
# Moves what dpkg-buildpackage wrote into $(1) (the parent folder, here or in the build root).
collect_deb = mkdir -p $(DEB_DIR) && for f in $(DEB_OUT); do [ ! -e "$(1)/$$f" ] || mv -f "$(1)/$$f" $(DEB_DIR)/; done
deb:
ifeq ($(DEBIAN_ROOT),)
	scripts/bootstrap --deb
	@# Build-Depends names Debian's swiftlang. A swift from elsewhere (swift.org's, as on Debian
	@# 12, which has no swiftlang) builds under the build profile that drops it (debian/control).
	@if dpkg -S "$$(realpath "$(SWIFT)")" 2>/dev/null | grep -q '^swiftlang'; then profile=; else \
	  profile=pkg.aseqosc.external-swift; \
	  echo "make deb: $(SWIFT) is not Debian's swiftlang package: building under the build profile $$profile"; \
	fi; \
	echo "dpkg-buildpackage -b -us -uc$${profile:+ -P$$profile}"; \
	PATH="$$(dirname "$(SWIFT)"):$$PATH" dpkg-buildpackage -b -us -uc $${profile:+-P$$profile}
	$(call collect_deb,..)
	lintian --display-info $(DEB_DIR)/aseqosc_$(DEB_VERSION)_$(ARCH).deb
else
	@# The build root is Debian 13 with swiftlang and $(ARCH)'s libraries; dpkg-buildpackage
	@# checks Build-Depends (for both architectures in a cross build). Debian 13's lintian checks
	@# the package, as nobody (it warns when run as root).
	@# The parent folder is the root's (a tmpfs when it is /tmp): the results leave it in the
	@# same entry into the root.
	root=$$($(ROOT_SETUP)) && \
	scripts/in-root "$$root" sh -c 'DEB_BUILD_OPTIONS="nocheck $(DEB_BUILD_OPTIONS)" \
	  $(ROOT_BUILD) && $(call collect_deb,..)' && \
	scripts/in-root "$$root" setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/tmp \
	  lintian --display-info $(DEB_DIR)/aseqosc_$(DEB_VERSION)_$(ARCH).deb
endif
	@echo "$(CURDIR)/$(DEB_DIR)/aseqosc_$(DEB_VERSION)_$(ARCH).deb"

clean:
	rm -rf .build
