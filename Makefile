# The two commands of the README, and what a packager needs.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
UNITDIR ?= $(SYSCONFDIR)/systemd/system
JOBS ?= 2
CONFIG ?= Config/aseqosc.json5
BIN ?= .build/release/aseqosc

.PHONY: run build test test-vm bootstrap install uninstall clean

## make run: install what is missing, build in release, start the bridge on the default config.
run: build
	$(BIN) run --config $(CONFIG)

build: bootstrap
	swift build -c release -j $(JOBS)

bootstrap:
	scripts/bootstrap

## make test: unit tests here, ALSA tests against the kernel sequencer (here or in a VM).
test:
	scripts/bootstrap --test
	JOBS=$(JOBS) scripts/test

## make test-vm CMD='...': run any command in the ALSA VM, e.g. CMD='.build/release/aseqosc ports'.
test-vm:
	scripts/bootstrap --test
	scripts/alsa-vm -- sh -c '$(CMD)'

$(BIN):
	$(MAKE) build

## make install: the binary, the units (pointing at it), the default config (an edited
## /etc/aseqosc/aseqosc.json5 is never overwritten) and the docs.
install: $(BIN)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/aseqosc
	install -d $(DESTDIR)$(UNITDIR)
	for unit in systemd/aseqosc.service systemd/aseqosc@.service; do \
	  sed -e 's|/usr/local/bin/aseqosc|$(PREFIX)/bin/aseqosc|' -e 's|/usr/local/share|$(PREFIX)/share|' \
	      -e 's|/etc/aseqosc|$(SYSCONFDIR)/aseqosc|g' "$$unit" > $(DESTDIR)$(UNITDIR)/$$(basename "$$unit"); \
	  chmod 644 $(DESTDIR)$(UNITDIR)/$$(basename "$$unit"); \
	done
	install -D -m 644 Config/aseqosc.json5 $(DESTDIR)$(PREFIX)/share/aseqosc/aseqosc.json5
	install -d $(DESTDIR)$(PREFIX)/share/aseqosc/examples
	install -m 644 Config/examples/*.json5 $(DESTDIR)$(PREFIX)/share/aseqosc/examples/
	install -d $(DESTDIR)$(SYSCONFDIR)/aseqosc
	[ -e $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5 ] || \
	  install -m 644 Config/aseqosc.json5 $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5
	install -D -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/aseqosc/README.md
	install -m 644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/aseqosc/

## make uninstall: everything install put there, except a config you may have edited.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/aseqosc
	rm -f $(DESTDIR)$(UNITDIR)/aseqosc.service $(DESTDIR)$(UNITDIR)/aseqosc@.service
	rm -rf $(DESTDIR)$(PREFIX)/share/aseqosc $(DESTDIR)$(PREFIX)/share/doc/aseqosc
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5 ]; then \
	  if cmp -s Config/aseqosc.json5 $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5; then \
	    rm -f $(DESTDIR)$(SYSCONFDIR)/aseqosc/aseqosc.json5; rmdir $(DESTDIR)$(SYSCONFDIR)/aseqosc 2>/dev/null || true; \
	  else echo "kept $(SYSCONFDIR)/aseqosc/aseqosc.json5 (edited)"; fi; \
	fi

clean:
	rm -rf .build
