# coredam: kernel patch series, agent, and the harness that proves them.
#
#   make          build the userspace programs and the guest test programs
#   make kernel   build the stock and the patched test kernels (cached):
#                 6.12 with and without the series, stock Linux 7.3 (make
#                 kernel-7.3) and 7.3 with the series (kernel-patched-7.3)
#   make kernel-v1  the kernel with series v1 (git revision 3fdf619), for
#                 the benchmark's v1-* setups
#   make kernel-debug  the patched kernel with lockdep, kmemleak and friends
#   make test-patched-7.3  only the tests of Linux 7.3 with the series
#                 rebased onto it (kernel-patch/7.3): its selftests and
#                 7.3's own there (make test runs them in a lane)
#   make compile-check the series built with cgroups, the memory controller,
#                 sysctl or coredump support switched off
#   make test     everything CI runs: unit tests, kernel builds, VM tests
#                 (builds and VM tests overlapped: scripts/test-pipeline.sh)
#   make demo     the crash-storm demo (the main job)
#   make bench    the full storm benchmark: six setups, eight scenarios,
#                 and the Apache crash storm (BENCH_SCENARIOS=apache: it
#                 alone)
#   make bench-apache  the Apache crash storm in the Debian guest, seven
#                 setups side by side (no dumps, systemd-coredump,
#                 coredam-pipe, 7.3's coredump socket with and without its
#                 read-ahead, the patched kernel fixed and adaptive)
#   make deb      the Debian package (debian/) into build/deb/, checked by
#                 lintian (scripts/build-deb.sh)
#   make clean    remove build/
#
# Every target that needs Debian packages installs the missing ones first.

PYTHON    ?= /usr/bin/python3
BUILD     := build
GUEST_BIN := $(BUILD)/guest
CC        ?= gcc
GUEST_CFLAGS := -static -O2 -g -Wall -Wextra -Werror -pthread
GUEST_PROGS  := crasher corecheck probe pipewriter crashtime stormer fusestall sockpoke
PYTEST_ARGS  ?=
# every step of `make test` is timed into build/timings.txt; pytest lists
# what each test cost
TIMED        := scripts/timed.sh
PYTEST       := $(PYTHON) -m pytest -v -rs --durations=0

.PHONY: all deps userspace install uninstall deb guest kernel kernel-stock kernel-patched kernel-v1 kernel-debug \
	kernel-7.3 kernel-patched-7.3 compile-check selftests selftests-7.3 selftests-patched-7.3 test-patched-7.3 initramfs check test test-unit timings-start lane-prepare lane-vm lane-patched-7.3 lane-debug lane-quiet-vm lane-quiet-debug test-vm test-debug test-storm test-systemd rootfs rootfs-sid demo bench bench-apache bench-defaults promtool clean

all: deps userspace guest

deps:
	@scripts/deps.sh

userspace: deps
	@if [ -f userspace/Makefile ]; then $(MAKE) --no-print-directory -C userspace; fi

guest: $(addprefix $(GUEST_BIN)/,$(GUEST_PROGS))

$(GUEST_BIN)/%: tests/guest/%.c tests/guest/pattern.h | deps
	@mkdir -p $(GUEST_BIN)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

# DESTDIR, PREFIX, SYSCONFDIR and LIBEXECDIR as usual (the programs are
# built with the last two as their defaults); systemd units, the sysctl.d
# file and the systemd-coredump drop-in go where systemd and
# systemd-sysctl look for packaged ones; cgconfig.conf and the
# systemd-coredump sysctl file are examples (docs/deployment.md says when
# to use them). install and uninstall install no Debian package: building
# needs gcc, make, pkg-config, libsystemd-dev, libzstd-dev and
# libjansson-dev (docs/deployment.md).
PREFIX     ?= /usr
SYSCONFDIR ?= /etc
LIBEXECDIR ?= $(PREFIX)/libexec
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCTLDIR  ?= $(PREFIX)/lib/sysctl.d
DATADIR    ?= $(PREFIX)/share
EXAMPLEDIR ?= $(DATADIR)/doc/coredam/examples
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
# systemd's own helper is where systemd is, whatever PREFIX says
SYSTEMD_UTILDIR ?= $(or $(shell pkg-config --variable=systemdutildir systemd 2>/dev/null),/usr/lib/systemd)
SUBST = sed -e 's|@SBINDIR@|$(PREFIX)/sbin|g' -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DATADIR@|$(DATADIR)|g' \
	-e 's|@SYSTEMD_SYSCTL@|$(SYSTEMD_UTILDIR)/systemd-sysctl|g'
USERSPACE_PATHS = PREFIX=$(PREFIX) SYSCONFDIR=$(SYSCONFDIR) LIBEXECDIR=$(LIBEXECDIR)

install:
	@$(MAKE) --no-print-directory -C userspace $(USERSPACE_PATHS) install
	install -d $(DESTDIR)$(UNITDIR)/systemd-coredump@.service.d $(DESTDIR)$(SYSCTLDIR) \
		$(DESTDIR)$(DATADIR)/coredam $(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(COMPLETIONDIR)
	install -m 0644 configs/bash-completion/coredamctl $(DESTDIR)$(COMPLETIONDIR)/
	install -m 0644 configs/systemd/coredump.slice configs/systemd/coredump-kernel.slice \
		configs/systemd/coredamd.socket $(DESTDIR)$(UNITDIR)/
	for u in coredamd.service coredam-sysctl.service coredam-socket.service; do \
		$(SUBST) configs/systemd/$$u > $(DESTDIR)$(UNITDIR)/$$u && chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; done
	install -m 0644 configs/systemd/systemd-coredump@.service.d/coredam.conf \
		$(DESTDIR)$(UNITDIR)/systemd-coredump@.service.d/coredam.conf
	install -m 0644 configs/sysctl.d/60-coredam.conf $(DESTDIR)$(SYSCTLDIR)/
	install -m 0644 configs/sysctl-cgroup.conf $(DESTDIR)$(DATADIR)/coredam/
	install -m 0644 configs/sysctl.d/61-coredam-systemd-coredump.conf configs/cgconfig.conf \
		configs/coredam.conf $(DESTDIR)$(EXAMPLEDIR)/

# everything install put there but /etc/coredam (the site's configuration)
uninstall:
	@$(MAKE) --no-print-directory -C userspace $(USERSPACE_PATHS) uninstall
	rm -f $(DESTDIR)$(UNITDIR)/coredump.slice $(DESTDIR)$(UNITDIR)/coredump-kernel.slice \
		$(DESTDIR)$(UNITDIR)/coredamd.service $(DESTDIR)$(UNITDIR)/coredam-sysctl.service $(DESTDIR)$(UNITDIR)/coredam-socket.service \
		$(DESTDIR)$(UNITDIR)/coredamd.socket \
		$(DESTDIR)$(UNITDIR)/systemd-coredump@.service.d/coredam.conf \
		$(DESTDIR)$(SYSCTLDIR)/60-coredam.conf $(DESTDIR)$(DATADIR)/coredam/sysctl-cgroup.conf \
		$(addprefix $(DESTDIR)$(EXAMPLEDIR)/,61-coredam-systemd-coredump.conf cgconfig.conf coredam.conf) \
		$(DESTDIR)$(COMPLETIONDIR)/coredamctl
	-rmdir $(DESTDIR)$(UNITDIR)/systemd-coredump@.service.d $(DESTDIR)$(DATADIR)/coredam \
		$(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(DATADIR)/doc/coredam 2>/dev/null

# the Debian package: dpkg-buildpackage -us -uc -b on a copy of the tree in
# build/deb/coredam (the tree stays clean), the .deb and lintian's report
# (build/deb/lintian.txt; an error or a warning fails) in build/deb/. Built
# again only when what goes into it changed.
DEB_INPUTS := Makefile README.md docs/deployment.md docs/pipe-helper.md scripts/build-deb.sh \
	$(wildcard debian/* debian/source/* userspace/Makefile userspace/*/*.[ch] \
		configs/* configs/*/* configs/*/*/* docs/man/*)
deb: $(BUILD)/deb/lintian.txt

$(BUILD)/deb/lintian.txt: $(DEB_INPUTS) | deps
	@$(TIMED) deb scripts/build-deb.sh $(BUILD)/deb

# the kernels the VM tests boot: both series (6.12 and 7.3) and the stock
# kernels under them; make test's first stage builds the first three, and
# a lane of its own the fourth
kernel: kernel-stock kernel-patched kernel-7.3 kernel-patched-7.3

kernel-stock: deps
	@$(TIMED) kernel-stock scripts/build-kernel.sh stock

kernel-patched: deps
	@$(TIMED) kernel-patched scripts/build-kernel.sh patched

# series v1 as it last landed, next to the current series in the benchmark
kernel-v1: deps
	@$(TIMED) kernel-v1 scripts/build-kernel.sh v1

kernel-debug: deps
	@$(TIMED) kernel-debug scripts/build-kernel.sh patched debug

# stock Linux 7.3 (Debian's linux-source-7.3, fetched by
# scripts/fetch-kernel-source.sh, never installed): the coredump socket
kernel-7.3: deps
	@$(TIMED) kernel-7.3 scripts/build-kernel.sh stock-7.3

# Linux 7.3 with the series rebased onto it (kernel-patch/7.3/series), the
# posting candidate
kernel-patched-7.3: deps
	@$(TIMED) kernel-patched-7.3 scripts/build-kernel.sh patched-7.3

selftests: kernel-patched
	@$(TIMED) selftests scripts/build-selftests.sh

# the 7.3 tree's own coredump selftests, for tests/test_linux73.py
selftests-7.3: kernel-7.3
	@$(TIMED) selftests-7.3 scripts/build-selftests.sh stock-7.3

# the 7.3 tree's coredump selftests and the series' own, from the tree with
# kernel-patch/7.3 applied, for tests/test_linux73.py (they go to the guest
# with each job, not in the initramfs)
selftests-patched-7.3: kernel-patched-7.3
	@$(TIMED) selftests-patched-7.3 scripts/build-selftests.sh patched-7.3

compile-check: deps
	@$(TIMED) compile-check scripts/compile-check.sh

initramfs: all selftests selftests-7.3
	@$(TIMED) initramfs scripts/mkinitramfs.sh $(BUILD)/initramfs.cpio.gz

check test-unit: all
	@if [ -f userspace/Makefile ]; then $(TIMED) test-unit $(MAKE) --no-print-directory -C userspace check; fi

# Prometheus's promtool, for the tests that check the metrics file
# (taken out of Debian's prometheus package, never installed)
promtool:
	@scripts/fetch-promtool.sh > /dev/null

# the Debian 12 guest with systemd (debootstrap once, cached under build/rootfs)
rootfs: all
	@$(TIMED) rootfs scripts/mkrootfs.sh $(BUILD)/rootfs/debian.img

# the Debian unstable guest with systemd 262, whose coredump socket server
# coredamd lives next to (tests/test_sid.py)
rootfs-sid: all
	@$(TIMED) rootfs-sid scripts/mkrootfs.sh $(BUILD)/rootfs/debian-sid.img sid

# every VM test but the long storm twin that only test-storm runs
test-vm: kernel initramfs rootfs rootfs-sid deb promtool selftests-patched-7.3
	$(TIMED) test-vm $(PYTEST) -m "not storm_only" tests $(PYTEST_ARGS)

# Again on the kernel with every checker on (lockdep, KASAN, kmemleak, the
# hung-task detector): every kernel path the series adds, once. The
# kselftests go through the stats file, bad values, the FIFO queue, its
# cap, timeout and SIGKILL, the lease, fresh patterns, core_pipe_limit,
# fair waiting places, the helper's cgroup, charging, names and cores cut
# short; the VM tests below add the freezer, cgroup.kill and SIGKILL in the
# window, a waiter killed as its slot comes, a removed or frozen dump cgroup, a tenant's own, stuck
# destinations, the hole walk, raising and lowering the limit, fair slots,
# a storm, and threads, huge pages and setuid crashers. About 16 minutes
# under TCG, plus 3 to 8 for the kernel; every other kernel-series test
# passes there too, by hand (COREDAM_KERNEL=patched-debug pytest
# tests/test_kernel_series.py), as do the fault tests of
# docs/reliability.md, but they take too long for CI.
KS := tests/test_kernel_series.py
DEBUG_TESTS := tests/test_kselftest.py::test_kselftest_passes_on_patched \
	$(KS)::test_queue_concurrency_fifo $(KS)::test_queue_cap_and_timeout \
	$(KS)::test_sigkill_waiter \
	$(KS)::test_stopping_a_crashed_service_passes_no_slot_to_the_dead \
	$(KS)::test_raise_and_lower_mid_storm \
	$(KS)::test_one_users_storm_does_not_hold_back_another_user \
	$(KS)::test_stuck_helper_gives_its_slot_back \
	$(KS)::test_supervision_sees_a_dumping_process $(KS)::test_cgroup_removed \
	$(KS)::test_frozen_dump_cgroup_does_not_hold_a_file_dump \
	$(KS)::test_freeze_a_dumping_and_a_waiting_process \
	$(KS)::test_tenant_dump_cgroup_keeps_the_tenants_io_max \
	$(KS)::test_stuck_file_system_gives_its_slot_back \
	$(KS)::test_huge_sparse_mapping_gives_its_slot_back_and_dies_at_once \
	tests/test_storm.py::test_small_storm_keeps_every_core \
	tests/test_reliability.py::test_threads_huge_pages_and_setuid
DEBUG_ENV := COREDAM_KERNEL=patched-debug COREDAM_LOGS=$(BUILD)/vm-logs-debug COREDAM_VM_MEM=1G
test-debug: kernel-debug initramfs
	$(DEBUG_ENV) $(TIMED) test-debug $(PYTEST) $(DEBUG_TESTS) $(PYTEST_ARGS)

# only the crash storms (about 5 minutes), with the 10 MB/s burst that
# test-vm and make test leave out (storm_only)
test-storm: kernel initramfs
	$(PYTHON) -m pytest -v -rs -s tests/test_storm.py $(PYTEST_ARGS)

# only the tests of Linux 7.3 with the series rebased onto it (marked
# patched_7_3): the 7.3 tree's coredump selftests and the series' own on
# that kernel, and the series' skipping on stock 7.3
test-patched-7.3: selftests-patched-7.3 kernel-7.3 initramfs
	$(TIMED) test-patched-7.3 $(PYTEST) -m patched_7_3 tests/test_linux73.py $(PYTEST_ARGS)

# only the tests in the Debian guests under systemd, the Apache storm's, the
# Debian package's and systemd 262's in the unstable guest too (also part of
# test-vm)
test-systemd: kernel rootfs rootfs-sid deb
	$(PYTHON) -m pytest -v -rs -s tests/test_systemd.py tests/test_apache.py tests/test_deb.py tests/test_sid.py \
		$(PYTEST_ARGS)

# COREDAM_DEADLINE (seconds since the epoch) bounds every guest boot of the
# run: a hang fails its test with the console tail before CI's own limit.
# `make test` sets it to 80 minutes from its start unless it is set.
TEST_DEADLINE := $(shell echo $$(( $$(date +%s) + 80 * 60 )))
test: export COREDAM_DEADLINE ?= $(TEST_DEADLINE)
# make test: scripts/test-pipeline.sh starts compile-check at the lowest
# priority, builds the unit tests, the two test kernels and the guest
# images beside it (lane-prepare), overlaps test-vm and test-debug, and
# runs the tests marked quiet_machine alone at the end; the same tests as
# `make test-unit compile-check test-vm test-debug`, in less time.
test: timings-start deps
	@$(TIMED) pipeline scripts/test-pipeline.sh; rc=$$?; \
	echo "make test: step times (s), most expensive first (lanes overlap):"; \
	sort -k2 -n -r $(BUILD)/timings.txt | awk '{ printf "  %-18s %5d%s\n", $$1, $$2, $$3 ? "  (failed)" : "" }'; \
	exit $$rc

timings-start:
	@mkdir -p $(BUILD) && : > $(BUILD)/timings.txt

# the lanes of scripts/test-pipeline.sh: no prerequisites, since lanes run
# at the same time and must not rebuild what another lane boots
LANE_PYTEST := $(PYTEST) -p no:cacheprovider
lane-prepare: test-unit kernel-stock kernel-patched kernel-7.3 initramfs rootfs rootfs-sid deb promtool
lane-vm:
	$(TIMED) test-vm $(LANE_PYTEST) -m "not quiet_machine and not storm_only and not patched_7_3" tests $(PYTEST_ARGS)
# beside lane-vm, before the debug kernel: 7.3 with the series, built here
# (the other lanes boot nothing of it), and its tests
lane-patched-7.3: selftests-patched-7.3
	$(TIMED) test-patched-7.3 $(LANE_PYTEST) -m patched_7_3 tests/test_linux73.py $(PYTEST_ARGS)
lane-debug:
	$(DEBUG_ENV) $(TIMED) test-debug $(LANE_PYTEST) -m "not quiet_machine" $(DEBUG_TESTS) $(PYTEST_ARGS)
lane-quiet-vm:
	$(TIMED) quiet-vm $(LANE_PYTEST) -m "quiet_machine and not storm_only and not patched_7_3" tests $(PYTEST_ARGS)
lane-quiet-debug:
	$(DEBUG_ENV) $(TIMED) quiet-debug $(LANE_PYTEST) -m quiet_machine $(DEBUG_TESTS) $(PYTEST_ARGS)

bench-defaults: kernel initramfs
	$(PYTHON) tests/bench_defaults.py

demo: kernel initramfs
	@scripts/deps.sh demo
	$(PYTHON) tests/demo.py

# BENCH_REPEAT (default 3), BENCH_SETUPS, BENCH_SCENARIOS: see tests/bench.py;
# naming a v1-* setup in BENCH_SETUPS builds the v1 kernel too, and the
# Apache storm (run unless BENCH_SCENARIOS leaves it out) the Debian guest
BENCH_APACHE := $(if $(BENCH_SCENARIOS),$(findstring apache,$(BENCH_SCENARIOS)),apache)
bench: kernel initramfs $(if $(findstring v1-,$(BENCH_SETUPS)),kernel-v1) $(if $(BENCH_APACHE),rootfs)
	@scripts/deps.sh demo
	$(PYTHON) tests/bench.py

# BENCH_SETUPS, APACHE_CRASH_PER_S, APACHE_CRASH_S, APACHE_OPCACHE_MB,
# APACHE_WARM_MB: see tests/bench_apache.py.
# The two 6.12 kernels, stock 7.3 (its coredump socket) and the Debian guest
bench-apache: kernel-stock kernel-patched kernel-7.3 rootfs
	@scripts/deps.sh demo
	$(PYTHON) tests/bench_apache.py

clean:
	rm -rf $(BUILD)
	@if [ -f userspace/Makefile ]; then $(MAKE) -C userspace clean; fi
