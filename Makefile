# SPDX-License-Identifier: GPL-2.0-only
#
# perf-defer: deferred user callchains for perf on kernels before 6.19.
#
#   make                 module (against KDIR) and recorder: kernel headers,
#                        libelf and gcc are all it needs
#   make tests           the test programs (host, VM, test modules); these need
#                        linux-source-6.1, gcc-multilib and static glibc
#                        (scripts/deps packages installs them)
#   make arm64           the recorder and the VM test programs for arm64
#                        guests, cross-built static by clang into build/arm64
#                        (the module: scripts/kmake --kos 6.1-arm64)
#   make check           builds what it needs, then host tests + VM tests on
#                        Debian 6.1, 6.12, 7.2 (CI)
#   make check-all       the kernel matrix; writes the README's table
#   make stress          long stress and fuzzing runs (6.1, 6.12, host)
#   make check-debug     the VM suite on a lockdep/KASAN/kmemleak kernel
#   make demo            record a demo workload and show it through perf
#   make bench           benchmarks in QEMU; writes docs/bench.md and .png
#   make install         recorder to $(PREFIX)/bin, module to /lib/modules
#   make man             the man pages into build/man (scdoc); make install-man
#                        installs them and the bash completion
#   make dkms-install    register, build and install the module with DKMS
#                        (KERNELRELEASE=REL for another kernel, DKMS_ARCH=ARCH
#                        for another architecture's: tests/dkms.sh)
#   make deb             perf-defer and perf-defer-dkms .debs, built in a clean
#                        bookworm chroot (scripts/deb), checked by lintian
#   make lint            shellcheck of the scripts; checkpatch, W=1 build, sparse,
#                        coccicheck and no call cycle between files of the module

# The version: dkms.conf's PACKAGE_VERSION, the one place it is written
# (the recorder, the module's MODULE_VERSION and DKMS read it there;
# tests/version.sh holds them together)
VERSION		:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(CURDIR)/dkms.conf)
PREFIX		?= /usr/local
DESTDIR		?=
CACHE		?= $(or $(PERF_DEFER_CACHE),/var/cache/perf-defer)

# Kernel headers: the running kernel's, otherwise Debian 6.1's.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		    $(lastword $(sort $(filter-out %-rt-amd64/build %-cloud-amd64/build, \
			$(wildcard /lib/modules/6.1.*-amd64/build)))))
export KDIR

DKMS_SRC	:= $(DESTDIR)/usr/src/perf-defer-$(VERSION)
KSFT_DIR	:= $(CURDIR)/build/ksft

all: module recorder

module:
	$(MAKE) -C module

recorder:
	$(MAKE) -C recorder PERF_DEFER_VERSION=$(VERSION)

$(KSFT_DIR)/kselftest_harness.h:
	mkdir -p $(KSFT_DIR)
	cp "$$(scripts/ksrc)"/tools/testing/selftests/kselftest*.h $(KSFT_DIR)/

tests: $(KSFT_DIR)/kselftest_harness.h recorder
	$(MAKE) -C tests/vm KSFT_DIR=$(KSFT_DIR)
	$(MAKE) -C tests/host KSFT_DIR=$(KSFT_DIR)
	$(MAKE) -C tests/kmod

ARM64_OUT	:= $(CURDIR)/build/arm64
ARM64_CC	:= clang --target=aarch64-linux-gnu
ARM64_LD	:= --ld-path=/usr/bin/aarch64-linux-gnu-ld

arm64: $(KSFT_DIR)/kselftest_harness.h
	cross=$$(scripts/deps cross arm64) && \
	$(MAKE) -C recorder O=$(ARM64_OUT)/recorder CC="$(ARM64_CC)" AR=aarch64-linux-gnu-ar \
		PERF_DEFER_VERSION=$(VERSION) CPPFLAGS="-isystem $$cross/sysroot/usr/include" \
		LDFLAGS="-static $(ARM64_LD) -L$$cross/sysroot/usr/lib/aarch64-linux-gnu" \
		LDLIBS="-lelf -lz -lzstd" PRELOAD_LDFLAGS="$(ARM64_LD)" \
		$(ARM64_OUT)/recorder/perf-defer $(ARM64_OUT)/recorder/libperf-defer-preload.so
	armhf=$$(scripts/deps cross-gcc armhf) && \
	$(MAKE) -C tests/vm arm64 KSFT_DIR=$(KSFT_DIR) ARMHF="$$armhf"

check:
	scripts/check

check-all:
	scripts/check --all

stress:
	scripts/check --stress

check-debug:
	scripts/check --debug

demo:
	scripts/demo

bench:
	scripts/bench

lint:
	scripts/lint

version:
	@echo $(VERSION)

install: recorder
	$(MAKE) -C recorder install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/module INSTALL_MOD_PATH=$(DESTDIR) modules_install

# The man pages, from docs/man/*.scd (scdoc)
MAN_SRC		:= $(wildcard docs/man/*.scd)
MAN_PAGES	:= $(patsubst docs/man/%.scd,build/man/%,$(MAN_SRC))

man: $(MAN_PAGES)

build/man/%: docs/man/%.scd
	@mkdir -p build/man
	scdoc <$< >$@.tmp && mv $@.tmp $@

# the man pages and the bash completion
install-man: man
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man4
	install -m 0644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 $(filter %.4,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man4/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 completion/perf-defer $(DESTDIR)$(PREFIX)/share/bash-completion/completions/

# the module's sources as DKMS builds them, into DKMS_SRC
dkms-source:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)/module/compat $(DKMS_SRC)/include/uapi/linux
	cp dkms.conf $(DKMS_SRC)/
	cp module/Kbuild module/Makefile $(filter-out %.mod.c,$(wildcard module/*.[ch])) \
		$(DKMS_SRC)/module/
	cp module/compat/probe.sh $(wildcard module/compat/*.c) \
		$(filter-out %/config.h,$(wildcard module/compat/*.h)) $(DKMS_SRC)/module/compat/
	cp include/perf_defer_tested.h $(DKMS_SRC)/include/
	cp include/uapi/linux/perf_defer.h $(DKMS_SRC)/include/uapi/linux/

dkms-install: dkms-source
	dkms install perf-defer/$(VERSION) $(if $(KERNELRELEASE),-k $(KERNELRELEASE)) \
		$(if $(DKMS_ARCH),-a $(DKMS_ARCH))

# the Debian packages, built in a clean bookworm chroot, into build/deb
deb:
	scripts/deb

dkms-uninstall:
	-dkms remove perf-defer/$(VERSION) --all
	rm -rf $(DKMS_SRC)

clean:
	-$(MAKE) -C module clean
	$(MAKE) -C recorder clean
	-$(MAKE) -C tests/kmod clean
	rm -rf build

.PHONY: all module recorder tests arm64 check check-all stress check-debug demo bench lint version install man install-man \
	dkms-source dkms-install deb dkms-uninstall clean
