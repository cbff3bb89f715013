# fio benchmark: the rtio fio ioengine and the cache-hit round-trip probe.
# Included by the top Makefile, which defines BUILD. Standalone:
#   make -f bench/fio/fio.mk BUILD=build build/fio/rtio_engine.so build/fio/hit_rtt
# bench/fio/build.sh runs these recipes (through the top Makefile) with aiod and aiodctl.
BUILD ?= build
FIO_SRC ?= $(BUILD)/src/fio
# fio's headers need the config-host.h its configure writes; configure runs
# in a copy so the unpacked source (scripts/deps.sh) stays pristine.
FIO_CFG_DIR := $(BUILD)/fio/fio-src
FIO_CLIENT_SRC := $(wildcard common/rtio_client*.c) common/rtio_proto.c common/rtio_shm.c common/rtio_sock.c common/rtio_queue.c
FIO_CLIENT_HDR := $(wildcard common/*.h)
FIO_BENCH_CFLAGS := -Wall -Wextra -Werror -O2 -g -std=gnu11 -D_GNU_SOURCE -fPIC -Icommon \
	$(shell pkg-config --cflags talloc 2>/dev/null)
FIO_BENCH_LIBS := $(shell pkg-config --libs talloc 2>/dev/null)
# the engine's own reads (rtio_route=module) go through a private io_uring
FIO_ENGINE_LIBS := $(FIO_BENCH_LIBS) $(shell pkg-config --libs liburing 2>/dev/null)

$(FIO_CFG_DIR)/config-host.h:
	@test -f $(FIO_SRC)/configure || { echo "no fio source in $(FIO_SRC): run scripts/deps.sh" >&2; exit 1; }
	rm -rf $(FIO_CFG_DIR)
	mkdir -p $(FIO_CFG_DIR)
	cp -a $(FIO_SRC)/. $(FIO_CFG_DIR)/
	cd $(FIO_CFG_DIR) && ./configure --disable-native --prefix=/usr > configure.log 2>&1 \
		|| { cat configure.log >&2; exit 1; }

# fio's headers are not -Wextra clean: include them as system headers.
$(BUILD)/fio/rtio_engine.so: bench/fio/rtio_engine.c $(FIO_CLIENT_SRC) $(FIO_CLIENT_HDR) \
		$(FIO_CFG_DIR)/config-host.h
	@mkdir -p $(dir $@)
	$(CC) $(FIO_BENCH_CFLAGS) -isystem $(FIO_CFG_DIR) -include $(FIO_CFG_DIR)/config-host.h \
		-shared -o $@ bench/fio/rtio_engine.c $(FIO_CLIENT_SRC) $(FIO_ENGINE_LIBS)

$(BUILD)/fio/hit_rtt: bench/fio/hit_rtt.c $(FIO_CLIENT_SRC) $(FIO_CLIENT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(FIO_BENCH_CFLAGS) -o $@ bench/fio/hit_rtt.c $(FIO_CLIENT_SRC) $(FIO_BENCH_LIBS) -lrt

.PHONY: fio-bench-build
fio-bench-build: $(BUILD)/fio/rtio_engine.so $(BUILD)/fio/hit_rtt
