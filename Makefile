# The two commands of the README, and what a packager needs.
PREFIX ?= /usr/local
DESTDIR ?=
JOBS ?= 2
CONFIG ?= Config/aseqosc.json5
BIN := .build/release/aseqosc

.PHONY: run build test test-vm bootstrap clean

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

clean:
	rm -rf .build
