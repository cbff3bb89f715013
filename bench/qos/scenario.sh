#!/usr/bin/env bash
# QoS (issue 13) as a facility sees it: one scripted scenario on the emulated
# single-spindle disk (bench/emudisk), through plain Samba and through rtio
# with a QoS policy, the rate of every client over time.
#
#   who       user        what it does                               rtio's rule
#   bay       rtiobay     plays one file at 32 MiB/s (paced reader)  reserve = 32M
#   ingest    rtioingest  records at 40 MB/s (paced writer, 256 KiB) limit_write = 12M,
#                                                                    24M after the reload
#   farm      rtiofarm    three greedy readers, three connections    none (best effort)
#   editor    rtioedit    one greedy reader, one connection,         none (best effort)
#                         from 1/3 to 2/3 of the run
#
# Timeline (D = DURATION seconds): at 0 the bay, the ingest station and the
# farm start; at D/3 the editor joins; at D/2 the ingest limit is raised by
# a reload (aiod.ini edited, SIGHUP to aiod); at 2D/3 the editor leaves; at D
# everybody stops. The plain share (no module: no QoS, whoever has more
# connections wins) runs the same timeline on the same disk and files; its
# "reload" changes nothing.
#
# Each run starts cold: page cache dropped, a fresh aiod (its cache empty)
# and smbd. Runs interleave the configurations (plain, rtio, plain, ...,
# QOS_CONFIGS picks them). The disk is set up once: emudisk-up.sh, aiod
# --calibrate (the profile gives aiod its capacity, io_size and queue depth,
# as the README tells an admin), the files written.
#
# Writes bench/results/qos-scenario-<date>.{md,json,png}: per client and
# phase the rate (median over runs), the ingest limit's accuracy over 1 s
# windows, the bay's reservation held, the total the clients got (rtio vs
# plain), and the rate over time of every client (PNG, medians over runs).
#
#   bench/qos/scenario.sh [RUNS [DURATION]]      (defaults 3, 60)
#   env: BUILD, BENCH_PORT, BENCH_DIR (where the run's directory goes, default
#        /var/tmp), QOS_CONFIGS ("plain rtio"), QOS_PROFILE (an aiod
#        --calibrate profile of this emulated disk: skips the calibration),
#        QOS_KEEP (a directory to copy the raw runs, profile and aiod.ini to)
#
# Needs root (mounts the emulated disk, starts smbd, adds four system users).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
NAME=qos-scenario
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../mixed/lib.sh
. "$here/../mixed/lib.sh"	# die, mixed_port, mixed_need_root_tools, rtio_smb_*, rtio_alive
RUNS=${1:-3}
DURATION=${2:-60}
CONFIGS=${QOS_CONFIGS:-plain rtio}
PY=/usr/bin/python3	# Debian's, with python3-matplotlib (scripts/deps-list.sh)
STREAM=$BUILD/rtio-stream
PASSWORD=rtio-Bench-pw1

# The scenario's parameters (the report prints them)
BAY_RESERVE=32M		# the bay's reservation, and the rate it plays at
INGEST_WANTS=320M	# bit/s the ingest station records at (40 MB/s)
INGEST_LIMIT=12M	# its write limit in the first half
INGEST_LIMIT2=24M	# and after the reload
FARM_CONNS=3
READ_CHUNK=1M		# what a Windows client reads per request
WRITE_CHUNK=256K	# small enough that 1 s windows count whole writes finely
TIMELINE_MS=100
FILE_MIB_PER_S=36	# greedy readers' files: this many MiB/s for DURATION (the editor D/2) before they wrap

# ---- state, and stopping everything we started, whatever happens ----

T=""
EMU=""
SMBD_PID=""
AIOD_PID=""
CLIENT_PIDS=()

# stop_pid PID: SIGTERM, up to 5 s, then SIGKILL; reaps it
stop_pid() {
	local p=$1
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null
	for _ in $(seq 50); do rtio_alive "$p" || break; sleep 0.1; done
	rtio_alive "$p" && kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	return 0
}

# smbd's connection processes share its process group: stop them by pid too
stop_smbd() {
	local p
	[ -n "$SMBD_PID" ] || return 0
	stop_pid "$SMBD_PID"
	for p in $(ps -e -o pid=,pgid= | awk -v g="$SMBD_PID" '$2 == g {print $1}'); do
		kill -TERM "$p" 2>/dev/null
	done
	SMBD_PID=""
}

stop_servers() {
	stop_smbd
	stop_pid "$AIOD_PID"
	AIOD_PID=""
}

cleanup() {
	local p
	for p in "${CLIENT_PIDS[@]}"; do stop_pid "$p"; done
	stop_servers
	bench_tcp_cc_restore
	if [ -n "$EMU" ] && [ -f "$EMU/state" ]; then
		"$mixed_root/bench/emudisk/emudisk-down.sh" "$EMU" >> "$T/log/emudisk.log" 2>&1 ||
			echo "bench/qos/scenario: emudisk-down.sh $EMU failed: see $T (kept)" >&2
	fi
	# a disk that did not come down keeps its directory (and the logs)
	if [ -n "$T" ] && ! { [ -n "$EMU" ] && [ -f "$EMU/state" ]; }; then
		rm -rf --one-file-system "$T"
	fi
}

# ---- once: the disk, the users, the files ----

# setup_dir: the run's directory $T (under BENCH_DIR), removed at exit
setup_dir() {
	T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/rtio-$NAME.XXXXXX") || die "mktemp failed"
	chmod 755 "$T"
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	rtio_smb_dirs "$T"
	mkdir -p "$T"/{aiod,log,runs}
	mixed_tcp_cc
}

# file_mib MIB_PER_S SECONDS: a file that lasts that long at that rate, in whole MiB
file_mib() { echo $(($1 * $2)); }

# setup_disk: the emulated disk, big enough for the files and the recordings
setup_disk() {
	local gib
	BAY_MIB=$(file_mib "$(numfmt --from=iec --to-unit=1Mi "$BAY_RESERVE")" $((DURATION + 10)))
	READER_MIB=$(file_mib "$FILE_MIB_PER_S" "$DURATION")
	EDITOR_MIB=$(file_mib "$FILE_MIB_PER_S" $((DURATION / 2)))
	INGEST_MIB=$(((${INGEST_WANTS%M} * DURATION * 1000000 / 8 >> 20) + 64))
	gib=$(((BAY_MIB + FARM_CONNS * READER_MIB + EDITOR_MIB + INGEST_MIB + 512 + 1023) / 1024 + 1))
	EMU=$T/emu
	MNT=$EMU/mnt
	log "emulated disk: ${gib}G (tmpfs-backed) at $EMU"
	BUILD=$BUILD "$mixed_root/bench/emudisk/emudisk-up.sh" "$EMU" "${gib}G" > "$T/log/emudisk.log" 2>&1 ||
		die "emudisk-up.sh failed: $(tail -n 5 "$T/log/emudisk.log")"
	mkdir -p "$MNT/media"
}

# setup_profile: aiod --calibrate on the emulated disk (or QOS_PROFILE)
setup_profile() {
	PROFILE=$T/device.profile
	if [ -n "${QOS_PROFILE:-}" ]; then
		cp "$QOS_PROFILE" "$PROFILE" || die "QOS_PROFILE $QOS_PROFILE: cannot copy"
		return 0
	fi
	log "aiod --calibrate on the emulated disk (about a minute)"
	"$BUILD/aiod" --calibrate "$MNT" --profile "$PROFILE" --calibrate-size 512M \
		--calibrate-seconds 2 > "$T/log/calibrate.log" 2>&1 ||
		die "aiod --calibrate failed: $(tail -n 5 "$T/log/calibrate.log")"
	rm -f "$MNT/.aiod-calibrate.dat"
}

# setup_users: one system user and smbpasswd entry per client
setup_users() {
	local u
	for u in rtiobay rtioingest rtiofarm rtioedit; do
		id "$u" > /dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$u" || die "useradd $u failed"
	done
}

# setup_files: what the readers read, written once through the emulated disk
setup_files() {
	local i
	log "writing $((BAY_MIB + FARM_CONNS * READER_MIB + EDITOR_MIB)) MiB of files onto the emulated disk"
	dd if=/dev/urandom of="$MNT/media/bay.bin" bs=1M count="$BAY_MIB" oflag=direct status=none ||
		die "writing bay.bin failed"
	for i in $(seq "$FARM_CONNS") edit; do
		dd if=/dev/urandom of="$MNT/media/reader$i.bin" bs=1M oflag=direct status=none \
			count="$([ "$i" = edit ] && echo "$EDITOR_MIB" || echo "$READER_MIB")" ||
			die "writing reader$i.bin failed"
	done
	chmod 1777 "$MNT/media"
	chmod 644 "$MNT/media"/*.bin
}

# ---- per run: fresh servers ----

# policy LIMIT: rtio's aiod.ini with the ingest station's write limit
policy() {
	cat > "$T/aiod.ini" <<EOI
[global]
socket_path = $T/aiod/aiod.sock

[cache]
size = 512M
direct_io = yes

[admission]
profile = $PROFILE

[qos.bay]
match_user = rtiobay
reserve = $BAY_RESERVE

[qos.ingest]
match_user = rtioingest
limit_write = $1
EOI
}

# smb_conf: one smbd, two shares of the same directory: plain (no module) and rtio
smb_conf() {
	local u
	{
		rtio_smb_global "$T" "$PORT"
		printf '\tlog level = 0\n\tmax log size = 10000\n'
		printf '[plain]\n\tpath = %s\n\tread only = no\n' "$MNT/media"
		printf '[rtio]\n\tpath = %s\n\tread only = no\n\tvfs objects = rtio\n\trtio:socket = %s\n' \
			"$MNT/media" "$T/aiod/aiod.sock"
	} > "$T/smb.conf"
	for u in rtiobay rtioingest rtiofarm rtioedit; do
		printf '%s\n%s\n' "$PASSWORD" "$PASSWORD" | smbpasswd -c "$T/smb.conf" -a -s "$u" > /dev/null ||
			die "smbpasswd $u failed"
	done
}

# cold_disk: nothing of the last run in any cache, its recording gone
cold_disk() {
	rm -f "$MNT/media/ingest.bin"
	sync
	echo 3 > /proc/sys/vm/drop_caches
}

# start_servers CONFIG RUNDIR: aiod (rtio only) and smbd, logs in RUNDIR
start_servers() {
	local c=$1 dir=$2
	if [ "$c" = rtio ]; then
		policy "$INGEST_LIMIT"
		rm -f "$T/aiod/aiod.sock"
		"$BUILD/aiod" -c "$T/aiod.ini" -F >> "$dir/aiod.log" 2>&1 < /dev/null &
		AIOD_PID=$!
		for _ in $(seq 300); do
			[ -S "$T/aiod/aiod.sock" ] && break
			rtio_alive "$AIOD_PID" || break
			sleep 0.1
		done
		[ -S "$T/aiod/aiod.sock" ] || die "aiod did not start: $(tail -3 "$dir/aiod.log")"
	fi
	smbd -F --debug-stdout -s "$T/smb.conf" > "$dir/smbd.log" 2>&1 < /dev/null &
	SMBD_PID=$!
	for _ in $(seq 200); do (exec 3<> "/dev/tcp/127.0.0.1/$PORT") 2> /dev/null && break; sleep 0.1; done
	rtio_alive "$SMBD_PID" || die "smbd did not start: $(tail -3 "$dir/smbd.log")"
}

# ---- per run: the phases of the scenario ----

# client NAME USER FILE SECONDS ARGS...: one rtio-stream in the background
client() {
	local name=$1 user=$2 file=$3 secs=$4
	shift 4
	"$STREAM" --url "smb://127.0.0.1:$PORT/$SHARE/$file" --user "$user%$PASSWORD" \
		--duration "$secs" --timeline "$TIMELINE_MS" "$@" > "$RUN/$name.json" 2> "$RUN/$name.err" < /dev/null &
	CLIENT_PIDS+=($!)
}

# at SECONDS: sleep until that long after the scenario's start (T0)
at() {
	local s
	s=$(awk -v t0="$T0" -v x="$1" -v now="$(date +%s.%N)" 'BEGIN { d = t0 + x - now; print (d > 0 ? d : 0) }')
	sleep "$s"
}

# 0: the bay plays, the ingest station records, the farm copies
phase_start() {
	local i bay_bps
	T0=$(date +%s.%N)
	: > "$EMU/fuse/stats"
	bay_bps=$(($(numfmt --from=iec "$BAY_RESERVE") * 8))
	client bay rtiobay bay.bin "$DURATION" --bitrate "$bay_bps" --chunk "$READ_CHUNK" --prebuffer 16
	client ingest rtioingest ingest.bin "$DURATION" --write --bitrate "$INGEST_WANTS" --chunk "$WRITE_CHUNK"
	for i in $(seq "$FARM_CONNS"); do
		client "farm$i" rtiofarm "reader$i.bin" "$DURATION" --greedy --chunk "$READ_CHUNK"
	done
}

# D/3: the editor joins, for a third of the run
phase_editor_joins() {
	at "$(mixed_calc "$DURATION / 3")"
	EDITOR_AT=$(mixed_calc "$(date +%s.%N) - $T0")
	client editor rtioedit readeredit.bin "$(mixed_calc "$DURATION / 3")" --greedy --chunk "$READ_CHUNK"
}

# D/2: the ingest limit raised by a reload (rtio only: plain has no limit)
phase_reload() {
	local n
	at "$(mixed_calc "$DURATION / 2")"
	RELOAD_AT=$(mixed_calc "$(date +%s.%N) - $T0")
	[ "$CONFIG" = rtio ] || return 0
	n=$(grep -c "QoS policy of" "$RUN/aiod.log")
	policy "$INGEST_LIMIT2"
	kill -HUP "$AIOD_PID"
	for _ in $(seq 50); do
		[ "$(grep -c "QoS policy of" "$RUN/aiod.log")" -gt "$n" ] && break
		sleep 0.05
	done
	RELOAD_DONE=$(mixed_calc "$(date +%s.%N) - $T0")
	[ "$(grep -c "QoS policy of" "$RUN/aiod.log")" -gt "$n" ] || log "aiod did not log the reload"
}

# 2D/3: the editor's run ends (its --duration), it leaves
phase_editor_leaves() {
	at "$(mixed_calc "$DURATION * 2 / 3")"
}

# D: what the disk did; everybody stops (a paced client that fell behind its
# timeline would go on: SIGTERM ends it after its current request, and it
# still reports); what aiod saw; then the servers go
phase_end() {
	local p errs=0
	at "$DURATION"
	cp "$EMU/fuse/stats" "$RUN/disk.json"
	for p in "${CLIENT_PIDS[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${CLIENT_PIDS[@]}"; do wait "$p" || errs=$((errs + 1)); done
	CLIENT_PIDS=()
	[ "$CONFIG" = rtio ] && "$BUILD/aiodctl" -s "$T/aiod/aiod.sock" qos --json > "$RUN/qos.json" 2>&1
	stop_servers
	[ "$errs" = 0 ] || log "$errs clients exited with an error (see $RUN/*.err)"
}

# run N CONFIG: the whole scenario once
run() {
	RUN=$T/runs/$1-$2
	CONFIG=$2
	SHARE=$2
	RELOAD_DONE=""
	mkdir -p "$RUN"
	cold_disk
	start_servers "$CONFIG" "$RUN"
	log "run $1: $CONFIG (${DURATION}s)"
	phase_start
	phase_editor_joins
	phase_reload
	phase_editor_leaves
	phase_end
	printf '{"run":%d,"config":"%s","t0_unix_s":%s,"editor_at_s":%s,"reload_at_s":%s,"reload_done_s":%s,"load1":%s}\n' \
		"$1" "$CONFIG" "$T0" "$EDITOR_AT" "$RELOAD_AT" "${RELOAD_DONE:-null}" \
		"$(cut -d' ' -f1 /proc/loadavg)" > "$RUN/run.json"
}

log() { echo "bench/qos/scenario: $*" >&2; }

# ---- main ----

mixed_need_root_tools
[ -x "$STREAM" ] || die "$STREAM not built: run make"
[ -x "$PY" ] || die "$PY missing (python3-matplotlib: make deps)"
PORT=$(mixed_port)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
setup_dir
setup_disk
setup_profile
setup_users
setup_files
smb_conf
for r in $(seq "$RUNS"); do
	read -r -a order <<< "$CONFIGS"
	[ $((r % 2)) = 0 ] && read -r -a order <<< "$(printf '%s\n' "${order[@]}" | tac | xargs)"	# ABBA
	for c in "${order[@]}"; do run "$r" "$c"; done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -n "${QOS_KEEP:-}" ]; then	# the raw runs, to run scenario_report.py on them again
	mkdir -p "$QOS_KEEP" && cp -a "$T/runs" "$PROFILE" "$T/aiod.ini" "$QOS_KEEP/"
fi

stamp=$(date -u +%Y-%m-%d-%H%M%S)
mkdir -p "$mixed_root/bench/results"
"$PY" "$here/scenario_report.py" "$T/runs" "$mixed_root/bench/results/qos-scenario-$stamp" \
	--command "bench/qos/scenario.sh $RUNS $DURATION" \
	--commit "$(git -C "$mixed_root" describe --always --dirty 2>/dev/null)" \
	--duration "$DURATION" --bay-reserve "$BAY_RESERVE" --ingest-wants "$INGEST_WANTS" \
	--ingest-limit "$INGEST_LIMIT" --ingest-limit2 "$INGEST_LIMIT2" --farm-conns "$FARM_CONNS" \
	--read-chunk "$READ_CHUNK" --write-chunk "$WRITE_CHUNK" --profile "$PROFILE" \
	--load-start "$LOAD_START" --load-end "$LOAD_END" --aiod-ini "$T/aiod.ini" || {
	keep=${BENCH_DIR:-/var/tmp}/rtio-$NAME-runs-$stamp
	cp -a "$T/runs" "$keep"
	cp "$PROFILE" "$T/aiod.ini" "$keep/"
	die "the report failed; the runs are kept in $keep (scenario_report.py can be run on them again)"
}
echo "bench/qos/scenario: results in bench/results/qos-scenario-$stamp.{md,json,png}"
