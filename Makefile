# coredam: kernel patch series, agent, and the harness that proves them.
#
#   make          build the userspace programs and the guest test programs
#   make kernel   build the stock and the patched test kernels (cached)
#   make kernel-debug  the patched kernel with lockdep, kmemleak and friends
#   make compile-check the series built with cgroups, blk-cgroup, sysctl or
#                 coredump support switched off
#   make test     everything CI runs: unit tests, kernel builds, VM tests
#   make demo     the crash-storm demo (the main job)
#   make bench    the full storm benchmark: five setups, four scenarios
#   make clean    remove build/
#
# Every target that needs Debian packages installs the missing ones first.

PYTHON    ?= /usr/bin/python3
BUILD     := build
GUEST_BIN := $(BUILD)/guest
CC        ?= gcc
GUEST_CFLAGS := -static -O2 -g -Wall -Wextra -Werror -pthread
GUEST_PROGS  := crasher corecheck probe pipewriter crashtime stormer
PYTEST_ARGS  ?=

.PHONY: all deps userspace install guest kernel kernel-stock kernel-patched kernel-debug \
	compile-check selftests initramfs check test test-unit test-vm test-debug test-storm demo bench bench-defaults clean

all: deps userspace guest

deps:
	@scripts/deps.sh

userspace: deps
	@if [ -f userspace/Makefile ]; then $(MAKE) --no-print-directory -C userspace; fi

guest: $(addprefix $(GUEST_BIN)/,$(GUEST_PROGS))

$(GUEST_BIN)/%: tests/guest/%.c tests/guest/pattern.h | deps
	@mkdir -p $(GUEST_BIN)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

install: userspace
	@$(MAKE) --no-print-directory -C userspace install

kernel: kernel-stock kernel-patched

kernel-stock: deps
	@scripts/build-kernel.sh stock

kernel-patched: deps
	@scripts/build-kernel.sh patched

kernel-debug: deps
	@scripts/build-kernel.sh patched debug

selftests: kernel-patched
	@scripts/build-selftests.sh

compile-check: kernel-patched
	@scripts/compile-check.sh

initramfs: all selftests
	@scripts/mkinitramfs.sh $(BUILD)/initramfs.cpio.gz

check test-unit: all
	@if [ -f userspace/Makefile ]; then $(MAKE) --no-print-directory -C userspace check; fi

test-vm: kernel initramfs
	$(PYTHON) -m pytest -v -rs tests $(PYTEST_ARGS)

# the kernel series' VM tests again, on the kernel with every checker on
test-debug: kernel-debug initramfs
	COREDAM_KERNEL=patched-debug $(PYTHON) -m pytest -v -rs tests/test_kernel_series.py $(PYTEST_ARGS)

# only the crash storms (16 x 64 MB, about 5 minutes; also part of test-vm)
test-storm: kernel initramfs
	$(PYTHON) -m pytest -v -rs -s tests/test_storm.py $(PYTEST_ARGS)

test: test-unit compile-check test-vm test-debug

bench-defaults: kernel initramfs
	$(PYTHON) tests/bench_defaults.py

demo: kernel initramfs
	@scripts/deps.sh demo
	$(PYTHON) tests/demo.py

# BENCH_REPEAT (default 3), BENCH_SETUPS, BENCH_SCENARIOS: see tests/bench.py
bench: kernel initramfs
	@scripts/deps.sh demo
	$(PYTHON) tests/bench.py

clean:
	rm -rf $(BUILD)
	@if [ -f userspace/Makefile ]; then $(MAKE) -C userspace clean; fi
