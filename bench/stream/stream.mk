# Paced SMB stream client.  Included by the top Makefile, which defines BUILD.
# Standalone: make -f bench/stream/stream.mk BUILD=build build/rtio-stream
BUILD ?= build
# (and the size parser every rtio tool shares, from common/)
STREAM_SRCS := $(wildcard bench/stream/*.c) common/rtio_size.c
STREAM_HDRS := $(wildcard bench/stream/*.h) common/rtio_size.h
STREAM_CFLAGS := -Wall -Wextra -Werror -O2 -g -std=gnu11 -Icommon \
	$(shell pkg-config --cflags smbclient 2>/dev/null)
STREAM_LIBS := $(shell pkg-config --libs smbclient 2>/dev/null) -lm

$(BUILD)/rtio-stream: $(STREAM_SRCS) $(STREAM_HDRS)
	@pkg-config --exists smbclient || { echo "rtio-stream: pkg-config smbclient not found (apt-get install libsmbclient-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(STREAM_CFLAGS) $(CFLAGS_EXTRA) -o $@ $(STREAM_SRCS) $(STREAM_LIBS)

# Pure parts (options, pacing, percentiles) without libsmbclient (cmocka):
# $(BUILD)/rtio-stream-test [GLOB of test names]
STREAM_TEST_SRCS := bench/stream/tests/test_stream.c bench/stream/stream_opts.c \
	bench/stream/pacing.c bench/stream/samples.c bench/stream/timeline.c common/rtio_size.c

$(BUILD)/rtio-stream-test: $(STREAM_TEST_SRCS) $(STREAM_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -Werror -O2 -g -std=gnu11 -Icommon $(CFLAGS_EXTRA) -o $@ \
		$(STREAM_TEST_SRCS) -lcmocka -lm
