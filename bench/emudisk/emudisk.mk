# Emulated single-spindle disk (FUSE).  Included by the top Makefile, which
# defines BUILD.  Standalone: make -f bench/emudisk/emudisk.mk BUILD=build
BUILD ?= build
# tests/ holds its own main(); only the top directory makes the daemon
# (and the size parser every rtio tool shares, from common/)
EMUDISK_SRCS := $(wildcard bench/emudisk/*.c) common/rtio_size.c
EMUDISK_HDRS := $(wildcard bench/emudisk/*.h) common/rtio_size.h
EMUDISK_CFLAGS := -Wall -Wextra -Werror -O2 -g -std=gnu11 -pthread -Icommon \
	$(shell pkg-config --cflags fuse3 2>/dev/null)
EMUDISK_LIBS := $(shell pkg-config --libs fuse3 2>/dev/null) -pthread -lm

$(BUILD)/emudisk: $(EMUDISK_SRCS) $(EMUDISK_HDRS)
	@pkg-config --exists fuse3 || { echo "emudisk: pkg-config fuse3 not found (apt-get install libfuse3-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(EMUDISK_CFLAGS) $(CFLAGS_EXTRA) -o $@ $(EMUDISK_SRCS) $(EMUDISK_LIBS)

# Model tests without FUSE (cmocka): $(BUILD)/emudisk-test [GLOB of test names]
EMUDISK_TEST_SRCS := bench/emudisk/tests/test_disk_model.c bench/emudisk/disk_model.c \
	bench/emudisk/req_stats.c

$(BUILD)/emudisk-test: $(EMUDISK_TEST_SRCS) $(EMUDISK_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -Werror -O2 -g -std=gnu11 -pthread $(CFLAGS_EXTRA) \
		-o $@ $(EMUDISK_TEST_SRCS) -lcmocka -pthread -lm
