# rtio: a real-time I/O path for Samba.
#
#   make            build everything into build/ (BUILD=): needs no root, changes nothing else
#   make deps       as root: install build and test dependencies (scripts/deps.sh)
#   make check      deps, then unit tests (plain and ASan/UBSan) + integration tests with smbd
#   make demo       deps, then start aiod + smbd on loopback and compare plain vs rtio shares
#   make bench      the long benchmarks (bench/README.md)
#   make fuzz       libFuzzer on the message decoder and on aiod's sessions, bounded time
#   make asan       aiod with ASan + UBSan, for the stress and soak runs
#   make soak       hours of mixed load against the ASan aiod and real smbd
#   make torture    the whole smbtorture comparison, plain vs rtio (about 14 minutes)
#   make install    rtio.so into smbd's VFS module directory, aiod, config, systemd unit
#   make deb        Debian packages rtio-aiod and samba-vfs-rtio into build/deb/ (debian/)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

BUILD    ?= $(CURDIR)/build
PREFIX   ?= /usr/local
DESTDIR  ?=
SBINDIR  ?= $(PREFIX)/sbin
BINDIR   ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR  ?= /lib/systemd/system
MANDIR   ?= $(PREFIX)/share/man

CC       ?= gcc
WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
BASE_CFLAGS := $(WARN) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE -fPIC -I$(BUILD)/gen
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

PKG_CFLAGS = $(shell pkg-config --cflags talloc tevent liburing 2>/dev/null)
PKG_LIBS_TALLOC = $(shell pkg-config --libs talloc 2>/dev/null)
PKG_LIBS_AIOD = $(shell pkg-config --libs talloc tevent liburing 2>/dev/null) -lm -lpthread

# common/rtio_version.h: the tree's git description, when built from a git
# checkout, in a header rewritten only when it changes, so that only the
# files that print the version are rebuilt for a new commit.
VERSION_USERS := aiod/main.c aiod/monitor.c tools/aiodctl.c tools/aiodctl_stats.c
.PHONY: version-force
$(BUILD)/gen/rtio_git.h: version-force
	@mkdir -p $(dir $@)
	@d=$$(git -C $(CURDIR) describe --always --dirty 2>/dev/null); \
	if [ -n "$$d" ]; then echo "#define RTIO_GIT \"$$d\"" > $@.tmp; else : > $@.tmp; fi; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(VERSION_USERS:%.c=$(BUILD)/obj/%.o) $(VERSION_USERS:%.c=$(BUILD)/asan/obj/%.o): $(BUILD)/gen/rtio_git.h

# rtio_samba.h: the Samba the module is linked against (smbd --version of the
# installed build), for aiodctl doctor to compare with the smbd that loads it
# (common/rtio_version.h, RTIO_SAMBA_MARK). Rewritten only when it changes,
# so a Samba upgrade rebuilds vfs_rtio.c.
$(BUILD)/gen/rtio_samba.h: version-force
	@mkdir -p $(dir $@)
	@v=$$(smbd --version 2>/dev/null | sed -n 's/^Version //p'); \
	echo "#define RTIO_SAMBA_BUILT_FOR \"$${v:-unknown}\"" > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(BUILD)/vfsobj/vfs_rtio/vfs_rtio.o: $(BUILD)/gen/rtio_samba.h

# the client library: the session, async I/O, the reply queue, sync calls
CLIENT_SRC := common/rtio_client.c common/rtio_client_io.c common/rtio_client_reply.c common/rtio_client_cached.c \
	common/rtio_client_sync.c common/rtio_client_pagecache.c
COMMON_SRC := common/rtio_proto.c common/rtio_shm.c common/rtio_qos.c common/rtio_sock.c common/rtio_queue.c $(CLIENT_SRC)
AIOD_SRC   := $(filter-out aiod/main.c,$(wildcard aiod/*.c))
COMMON_HDR := $(wildcard common/*.h)
AIOD_HDR   := $(wildcard aiod/*.h)

.PHONY: all deps deps-check deps-build build check unit unit-asan integration demo bench fuzz fuzz-session fuzz-seeds \
	asan soak torture install uninstall clean help install-module deb
.DEFAULT_GOAL := all

# make only builds: a missing dependency stops it with what to install
# (scripts/deps-check.sh); it never adds apt sources or upgrades Samba.
all: deps-check
	@$(MAKE) --no-print-directory build

deps-check:
	@BUILD=$(BUILD) SAMBA_SRC=$(SAMBA_SRC) scripts/deps-check.sh

# The README's two commands (make check, make demo) and the other test
# targets work on a fresh machine: they install what is missing first.
deps-build: deps
	@$(MAKE) --no-print-directory build

help:
	@sed -n '3,13p' Makefile | sed 's/^# //'

# As root: everything the build and the tests need, installed idempotently
# (apt, Samba and fio sources); make check, demo, ... run it first.
deps:
	@BUILD=$(BUILD) scripts/deps.sh

include mk/samba.mk
include bench/emudisk/emudisk.mk
include bench/stream/stream.mk
-include bench/fio/fio.mk

build: $(BUILD)/aiod $(BUILD)/aiodctl $(BUILD)/librtio-client.a $(BUILD)/rtio.so unit-build \
	$(BUILD)/emudisk $(BUILD)/rtio-stream \
	$(BUILD)/test/aiod_stress $(BUILD)/test/aiod_badinput $(BUILD)/test/aiod_admission \
	$(BUILD)/test/aiod_manyfiles $(BUILD)/test/aiod_limits $(BUILD)/asan/aiod

# $(call aiod_rules,DIR,FLAGS): objects under DIR/obj and DIR/aiod, built with FLAGS added.
define aiod_rules
$(1)/obj/%.o: %.c $(COMMON_HDR) $(AIOD_HDR)
	@mkdir -p $$(dir $$@)
	$(CC) $(BASE_CFLAGS) $(2) -Icommon -Iaiod $(PKG_CFLAGS) -c $$< -o $$@

$(1)/aiod: $(1)/obj/aiod/main.o $(AIOD_SRC:%.c=$(1)/obj/%.o) \
		$(1)/obj/common/rtio_proto.o $(1)/obj/common/rtio_qos.o $(1)/obj/common/rtio_sock.o \
		$(1)/obj/common/rtio_queue.o $(1)/obj/common/rtio_size.o
	$(CC) $(BASE_CFLAGS) $(2) -o $$@ $$^ $(PKG_LIBS_AIOD)
endef
$(eval $(call aiod_rules,$(BUILD),))
# The same daemon with ASan + UBSan, for tests/integration/t_asan.sh and make soak.
$(eval $(call aiod_rules,$(BUILD)/asan,$(SAN)))

asan: $(BUILD)/asan/aiod

$(BUILD)/librtio-client.a: $(COMMON_SRC:%.c=$(BUILD)/obj/%.o)
	@rm -f $@
	ar rcs $@ $^

# aiodctl: one file per subcommand group (tools/aiodctl.h), JSON through jansson
AIODCTL_SRC := $(wildcard tools/aiodctl*.c)
AIODCTL_HDR := $(wildcard tools/*.h)
JANSSON_CFLAGS = $(shell pkg-config --cflags jansson 2>/dev/null)
JANSSON_LIBS = $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)

$(BUILD)/obj/tools/%.o: tools/%.c $(COMMON_HDR) $(AIODCTL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Icommon -Itools $(JANSSON_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/aiodctl: $(AIODCTL_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/librtio-client.a
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(PKG_LIBS_TALLOC) $(JANSSON_LIBS)

# ---- the Samba module ----

VFS_SRC := $(wildcard vfs_rtio/*.c)
VFS_HDR := $(wildcard vfs_rtio/*.h)

$(BUILD)/vfsobj/%.o: %.c $(VFS_HDR) $(COMMON_HDR) | $(SAMBA_GEN)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -fvisibility=hidden $(SAMBA_WARN_RELAX) $(SAMBA_CPPFLAGS) -Icommon -c $< -o $@

# rtio_size: rtio:register min size is spelt as aiod.ini spells sizes
$(BUILD)/rtio.so: $(VFS_SRC:%.c=$(BUILD)/vfsobj/%.o) $(COMMON_SRC:%.c=$(BUILD)/vfsobj/%.o) \
		$(BUILD)/vfsobj/common/rtio_size.o
	$(CC) $(BASE_CFLAGS) -shared -o $@ $^ $(SAMBA_LDFLAGS) $(SAMBA_LIBS)

# The tests need the module where smbd looks for it.
# A new file renamed over the old one: smbd processes that have the old one
# mapped keep it (overwriting it in place crashes them).
install-module: $(BUILD)/rtio.so
	install -D -m 0644 $(BUILD)/rtio.so $(DESTDIR)$(SAMBA_VFS_DIR)/rtio.so.new
	mv -f $(DESTDIR)$(SAMBA_VFS_DIR)/rtio.so.new $(DESTDIR)$(SAMBA_VFS_DIR)/rtio.so

# ---- unit tests: each built twice, plainly and with ASan + UBSan ----

UNIT_TESTS := test_proto test_size test_queue test_cache test_shm_dir test_edf test_engine test_engine_behind test_config test_stream test_session replay_session \
	test_dataplane test_writeback test_passthrough test_readahead test_tuning test_record test_defer test_sqos test_notify \
	test_qos_pacing test_qos_rates test_qos_policy test_qos_flows test_aiodctl test_doctor test_pagecache test_startup_plan
test_proto_SRC  := common/rtio_proto.c common/rtio_shm.c
test_size_SRC   := common/rtio_size.c
# a real file on /var/tmp (not tmpfs: the test drops and reads back its pages)
test_pagecache_SRC := common/rtio_client_pagecache.c
test_queue_SRC  := common/rtio_queue.c
test_cache_SRC  := aiod/cache.c aiod/cache_dir.c common/rtio_shm.c
test_shm_dir_SRC := aiod/cache.c aiod/cache_dir.c common/rtio_shm.c
test_edf_SRC    := aiod/edf.c
# the start-up plan: pure, talloc only
test_startup_plan_SRC := aiod/startup_plan.c
# the io_uring engine (engine.h is its interface)
ENGINE_SRC := aiod/engine.c aiod/engine_grow.c aiod/engine_pick.c aiod/engine_behind.c
# the real io_uring engine on a temporary file
test_engine_SRC := $(ENGINE_SRC) aiod/edf.c aiod/log.c
test_engine_behind_SRC := $(test_engine_SRC)
# config.c hands [qos.NAME] sections to the policy unit
QOS_POLICY_SRC := aiod/qos_policy.c aiod/qos_match.c aiod/qos_rule.c aiod/qos_values.c
# what aiod/config.c needs: value parsers, the ini reader, section families, keys as text, the policy
CONFIG_SRC := aiod/config_values.c aiod/config_sections.c aiod/config_keys.c aiod/ini.c $(QOS_POLICY_SRC)
# the QoS flow table and its pacing: pure; the threaded test needs only the -lpthread every unit gets
test_qos_pacing_SRC := common/rtio_qos.c
test_qos_pacing_LIBS := -lm
test_qos_rates_SRC := aiod/qos_rates.c common/rtio_qos.c
test_qos_rates_LIBS := -lm
test_notify_SRC := aiod/notify.c aiod/log.c
test_config_SRC := aiod/config.c $(CONFIG_SRC) aiod/config_dump.c aiod/tuning.c \
	aiod/profile.c aiod/log.c common/rtio_size.c
# the machine's RAM is the test's to choose ([cache] size larger than RAM)
test_config_CFLAGS := -Wl,--wrap=aiod_phys_mem_bytes
test_stream_SRC := aiod/stream.c aiod/admission.c aiod/admission_plan.c aiod/startup_plan.c aiod/besteffort.c aiod/config.c $(CONFIG_SRC) aiod/log.c aiod/cache.c aiod/cache_dir.c \
	$(ENGINE_SRC) aiod/edf.c aiod/profile.c common/rtio_size.c
test_tuning_SRC := aiod/tuning.c aiod/calibrate.c aiod/profile.c aiod/admission.c aiod/admission_plan.c aiod/startup_plan.c aiod/besteffort.c aiod/cache.c aiod/cache_dir.c common/rtio_shm.c aiod/config.c $(CONFIG_SRC) aiod/log.c \
	$(ENGINE_SRC) aiod/edf.c common/rtio_size.c
test_record_SRC := aiod/record.c aiod/admission.c aiod/admission_plan.c aiod/startup_plan.c aiod/besteffort.c aiod/cache.c aiod/cache_dir.c common/rtio_shm.c aiod/profile.c aiod/config.c $(CONFIG_SRC) aiod/log.c \
	$(ENGINE_SRC) aiod/edf.c common/rtio_size.c
# the QoS policy is pure: talloc and the size parser, nothing else
test_qos_policy_SRC := aiod/qos_policy.c aiod/qos_match.c aiod/qos_rule.c aiod/qos_values.c common/rtio_size.c
test_qos_policy_LIBS := $(PKG_LIBS_TALLOC)
# aiodctl's pure parts: the counter table, the Prometheus text, rates
test_aiodctl_SRC := tools/aiodctl_fields.c tools/aiodctl_prom.c tools/aiodctl_rates.c
test_aiodctl_CFLAGS := -Itools
test_aiodctl_LIBS := $(PKG_LIBS_TALLOC)
# doctor's pure parts: the aiod.ini look-up and the module's Samba mark
test_doctor_SRC := tools/aiodctl_doctor_ini.c tools/aiodctl_doctor_mark.c
test_doctor_CFLAGS := -Itools
test_doctor_LIBS := $(PKG_LIBS_TALLOC)
# the module's one pure decision, without Samba: which files are registered when
test_defer_SRC  := vfs_rtio/vfs_rtio_defer.c
test_defer_CFLAGS := -Ivfs_rtio
# MS-SQOS on the wire and its option handling, without Samba
test_sqos_SRC   := vfs_rtio/vfs_rtio_sqos_wire.c
test_sqos_CFLAGS := -Ivfs_rtio
# the whole daemon but main.c and calibrate.c: an aiod context inside a test
AIOD_INPROC_SRC := $(filter-out aiod/main.c aiod/calibrate.c,$(wildcard aiod/*.c)) \
	common/rtio_proto.c common/rtio_shm.c common/rtio_qos.c common/rtio_sock.c common/rtio_queue.c common/rtio_size.c
test_session_SRC := $(AIOD_INPROC_SRC) $(CLIENT_SRC)
# aiod's QoS flows in an in-process aiod
test_qos_flows_SRC := $(AIOD_INPROC_SRC)
# the request layer against a fake engine, linked without liburing: the engine
# interface (aiod/engine.h) is the only door to it
test_dataplane_SRC := $(filter-out $(ENGINE_SRC),$(AIOD_INPROC_SRC)) tests/unit/fake_engine.c
test_dataplane_LIBS := $(shell pkg-config --libs talloc tevent 2>/dev/null) -lm
test_writeback_SRC := $(test_dataplane_SRC)
test_writeback_LIBS := $(test_dataplane_LIBS)
test_readahead_SRC := $(test_dataplane_SRC)
test_readahead_LIBS := $(test_dataplane_LIBS)
test_passthrough_SRC := $(test_dataplane_SRC)
test_passthrough_LIBS := $(test_dataplane_LIBS)
# the session fuzzer's corpus, replayed without libFuzzer (tests/fuzz/README.md)
FUZZ_HDR := $(wildcard tests/fuzz/*.h)
UNIT_HDR := $(wildcard tests/unit/*.h)
FUZZ_SESSION_CORPUS := tests/fuzz/corpus/session
replay_session_MAIN := tests/fuzz/replay_session.c
replay_session_SRC := tests/fuzz/session_harness.c $(AIOD_INPROC_SRC)
replay_session_CFLAGS := -Itests/fuzz -DFUZZ_SESSION_CORPUS='"$(CURDIR)/$(FUZZ_SESSION_CORPUS)"' \
	-DFUZZ_SESSION_CRASHES='"$(CURDIR)/tests/fuzz/crashes"'

# A test's main file is tests/unit/NAME.c unless NAME_MAIN names another.
unit_main = $(or $($(1)_MAIN),tests/unit/$(1).c)

define unit_rules
$(BUILD)/unit/$(1): $(call unit_main,$(1)) $$($(1)_SRC) $(COMMON_HDR) $(AIOD_HDR) $(FUZZ_HDR) \
		$(UNIT_HDR) $(VFS_HDR) $(AIODCTL_HDR)
	@mkdir -p $$(dir $$@)
	$(CC) $(BASE_CFLAGS) $$($(1)_CFLAGS) -Icommon -Iaiod $(PKG_CFLAGS) -o $$@ $$< \
		$$($(1)_SRC) -lcmocka $$(or $$($(1)_LIBS),$(PKG_LIBS_AIOD)) -lrt -lpthread
$(BUILD)/unit-asan/$(1): $(call unit_main,$(1)) $$($(1)_SRC) $(COMMON_HDR) $(AIOD_HDR) $(FUZZ_HDR) \
		$(UNIT_HDR) $(VFS_HDR) $(AIODCTL_HDR)
	@mkdir -p $$(dir $$@)
	$(CC) $(BASE_CFLAGS) $(SAN) $$($(1)_CFLAGS) -Icommon -Iaiod $(PKG_CFLAGS) \
		-o $$@ $$< $$($(1)_SRC) -lcmocka $$(or $$($(1)_LIBS),$(PKG_LIBS_AIOD)) -lrt -lpthread
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rules,$(t))))

BENCH_TESTS := $(BUILD)/emudisk-test $(BUILD)/rtio-stream-test

unit-build: $(UNIT_TESTS:%=$(BUILD)/unit/%) $(UNIT_TESTS:%=$(BUILD)/unit-asan/%) $(BENCH_TESTS)

unit: unit-build
	@BUILD=$(BUILD) BENCH_TESTS="$(BENCH_TESTS)" tests/unit/run.sh $(UNIT_TESTS)

check: deps-build
	@$(MAKE) --no-print-directory install-module
	@BUILD=$(BUILD) UNIT_TESTS="$(UNIT_TESTS)" BENCH_TESTS="$(BENCH_TESTS)" tests/run-all.sh

integration: deps-build
	@$(MAKE) --no-print-directory install-module
	@BUILD=$(BUILD) tests/integration/run.sh

demo: deps-build
	@$(MAKE) --no-print-directory install-module
	@BUILD=$(BUILD) scripts/demo.sh

bench: deps-build
	@$(MAKE) --no-print-directory install-module
	@BUILD=$(BUILD) bench/run.sh

# Mixed load with faults against the ASan aiod and real smbd (tests/soak/run.sh).
SOAK_SECONDS ?= 3600
soak: deps-build asan
	@$(MAKE) --no-print-directory install-module
	@BUILD=$(BUILD) SOAK_SECONDS=$(SOAK_SECONDS) tests/soak/run.sh

# ---- fuzzing (clang/libFuzzer) ----

FUZZ_SECONDS ?= 60
FUZZ_CFLAGS = $(WARN) -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all
$(BUILD)/fuzz/fuzz_msg: tests/fuzz/fuzz_msg.c common/rtio_proto.c common/rtio_shm.c $(COMMON_HDR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Icommon -o $@ $< common/rtio_proto.c common/rtio_shm.c

# The whole session (control socket + request queue) against an in-process aiod.
$(BUILD)/fuzz/fuzz_session: tests/fuzz/fuzz_session.c tests/fuzz/session_harness.c \
		$(AIOD_INPROC_SRC) $(COMMON_HDR) $(AIOD_HDR) $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Icommon -Iaiod -Itests/fuzz $(PKG_CFLAGS) -o $@ \
		tests/fuzz/fuzz_session.c tests/fuzz/session_harness.c $(AIOD_INPROC_SRC) \
		$(PKG_LIBS_AIOD) -lrt

fuzz-session: $(BUILD)/fuzz/fuzz_session

# Rewrites the committed seed corpus and the reproducers of what the fuzzer found
# (tests/fuzz/mkseeds_session.c says what each is).
$(BUILD)/fuzz/mkseeds_session: tests/fuzz/mkseeds_session.c $(FUZZ_HDR) $(COMMON_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Icommon -Itests/fuzz -o $@ $<

fuzz-seeds: $(BUILD)/fuzz/mkseeds_session
	$(BUILD)/fuzz/mkseeds_session $(FUZZ_SESSION_CORPUS) tests/fuzz/crashes

# New inputs go to build/; the committed seeds are read, never written.
fuzz: deps $(BUILD)/fuzz/fuzz_msg $(BUILD)/fuzz/fuzz_session
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/corpus-session
	$(BUILD)/fuzz/fuzz_msg -max_total_time=$(FUZZ_SECONDS) -max_len=1024 $(BUILD)/fuzz/corpus
	$(BUILD)/fuzz/fuzz_session -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
		-artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus-session $(FUZZ_SESSION_CORPUS)

# ---- install ----

install: $(BUILD)/rtio.so $(BUILD)/aiod $(BUILD)/aiodctl install-module
	install -D -m 0755 $(BUILD)/aiod $(DESTDIR)$(SBINDIR)/aiod
	install -D -m 0755 $(BUILD)/aiodctl $(DESTDIR)$(BINDIR)/aiodctl
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/aiod/aiod.ini ]; then \
		echo "keeping existing $(DESTDIR)$(SYSCONFDIR)/aiod/aiod.ini"; \
	else \
		install -D -m 0644 conf/aiod.ini $(DESTDIR)$(SYSCONFDIR)/aiod/aiod.ini; \
	fi
	sed 's|@SBINDIR@|$(SBINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' conf/aiod.service > $(BUILD)/aiod.service
	install -D -m 0644 $(BUILD)/aiod.service $(DESTDIR)$(UNITDIR)/aiod.service
	install -D -m 0644 conf/90-rtio-mqueue.conf $(DESTDIR)$(SYSCONFDIR)/sysctl.d/90-rtio-mqueue.conf
	install -D -m 0644 docs/aiod.8 $(DESTDIR)$(MANDIR)/man8/aiod.8
	install -D -m 0644 docs/vfs_rtio.8 $(DESTDIR)$(MANDIR)/man8/vfs_rtio.8
	install -D -m 0644 docs/aiodctl.8 $(DESTDIR)$(MANDIR)/man8/aiodctl.8

uninstall:
	rm -f $(DESTDIR)$(SAMBA_VFS_DIR)/rtio.so $(DESTDIR)$(SBINDIR)/aiod \
		$(DESTDIR)$(BINDIR)/aiodctl $(DESTDIR)$(UNITDIR)/aiod.service \
		$(DESTDIR)$(SYSCONFDIR)/sysctl.d/90-rtio-mqueue.conf \
		$(DESTDIR)$(MANDIR)/man8/aiod.8 $(DESTDIR)$(MANDIR)/man8/vfs_rtio.8 \
		$(DESTDIR)$(MANDIR)/man8/aiodctl.8
	@echo "left $(DESTDIR)$(SYSCONFDIR)/aiod/aiod.ini in place (your configuration)"

clean:
	rm -rf $(BUILD)/obj $(BUILD)/vfsobj $(BUILD)/unit $(BUILD)/unit-asan $(BUILD)/fuzz $(BUILD)/asan \
		$(BUILD)/aiod $(BUILD)/aiodctl $(BUILD)/rtio.so $(BUILD)/librtio-client.a $(BUILD)/deb

# ---- Debian packages ----

# dpkg-buildpackage on debian/ (the README's "Debian packages"), everything it
# writes put into build/deb/ rather than the clone's parent directory and its
# scratch under debian/ removed afterwards (-tc), then lintian: an error fails
# the target, each accepted tag is explained in debian/*.lintian-overrides.
DEB_DIR := $(BUILD)/deb
deb:
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	@v=$$(dpkg-parsechangelog -S Version) && a=$$(dpkg-architecture -qDEB_HOST_ARCH) && \
	RTIO_SAMBA_SRC=$(SAMBA_SRC) RTIO_SAMBA_GEN=$(SAMBA_GEN) RTIO_DEB_DIR=$(DEB_DIR) \
	dpkg-buildpackage -b -us -uc -tc \
		--buildinfo-file=$(DEB_DIR)/rtio_$${v}_$${a}.buildinfo --buildinfo-option=-u$(DEB_DIR) \
		--changes-file=$(DEB_DIR)/rtio_$${v}_$${a}.changes --changes-option=-u$(DEB_DIR) && \
	lintian --fail-on error --info $(DEB_DIR)/rtio_$${v}_$${a}.changes
	@ls -1 $(DEB_DIR)/*.deb

# ---- integration test programs that speak to aiod directly ----

$(BUILD)/test/%: tests/integration/%.c $(BUILD)/librtio-client.a $(COMMON_HDR) \
		tests/integration/aiod_check.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Icommon $(PKG_CFLAGS) -o $@ $< $(BUILD)/librtio-client.a $(PKG_LIBS_TALLOC)

# The whole smbtorture allowlist on plain vs rtio shares (about 14 minutes).
torture: deps-build
	@$(MAKE) --no-print-directory install-module
	@BUILD=$(BUILD) tests/smbtorture/run.sh
