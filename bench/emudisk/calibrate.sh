#!/bin/bash
# Measures random-read throughput of an emudisk brought up by emudisk-up.sh,
# next to the model's prediction and the paper's Table 5.
#
#   bench/emudisk/calibrate.sh DIR [RUNTIME_S [BS...]]
#
# Lays out DIR/mnt/calib.bin (2 GiB, O_DIRECT writes) if it is missing, then
# per block size runs
#   fio --name=cal --filename=DIR/mnt/calib.bin --direct=1 --rw=randread
#       --bs=BS --ioengine=psync --iodepth=1 --runtime=RUNTIME_S --time_based
# and reads DIR/fuse/stats to show how the kernel cut each read into FUSE
# requests.  Prints a table; the raw fio JSON lands in DIR/calib-BS.json.
set -euo pipefail

die() { echo "calibrate: $*" >&2; exit 1; }

[ $# -ge 1 ] || { echo "usage: $0 DIR [RUNTIME_S [BS...]]" >&2; exit 2; }
DIR=$(realpath -m "$1")
RUNTIME=${2:-20}
shift $(($# >= 2 ? 2 : 1))
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(64k 512k 1m 2m 4m 8m 16m)

for tool in fio jq; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
mountpoint -q "$DIR/mnt" || die "$DIR/mnt is not mounted; run emudisk-up.sh $DIR SIZE first"
[ -r "$DIR/fuse/stats" ] || die "$DIR/fuse/stats not readable; is emudisk running?"

SEEK_MS=$(sed -n 's/.* seek=\([0-9.]*\) ms.*/\1/p' "$DIR/emudisk.log" | head -n 1)
MBPS=$(sed -n 's/.* rate=\([0-9.]*\) MB\/s.*/\1/p' "$DIR/emudisk.log" | head -n 1)
[ -n "$SEEK_MS" ] && [ -n "$MBPS" ] || die "cannot read seek/rate from $DIR/emudisk.log"

FILE=$DIR/mnt/calib.bin
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -lt $((2 << 30)) ]; then
	echo "calibrate: writing 2 GiB $FILE (O_DIRECT, through the model)" >&2
	dd if=/dev/zero of="$FILE" bs=8M count=256 oflag=direct status=none ||
		die "writing $FILE failed"
fi

# Table 5 of the rt-Samba paper, random read, Mbit/s
declare -A PAPER=([64k]=35.0 [512k]=204.5 [1m]=361.2 [2m]=569.9 [4m]=821.7 [8m]=1032.4 [16m]=1216.6)

printf '%-6s %10s %10s %10s %10s %9s  %s\n' bs "MB/s" "model" "paper" "lat_ms" "seeks/io" "FUSE request sizes (bytes:count)"
for bs in "${SIZES[@]}"; do
	bytes=$(numfmt --from=iec "${bs^^}")
	: >"$DIR/fuse/stats" || die "cannot reset $DIR/fuse/stats"
	fio --name=cal --filename="$FILE" --direct=1 --rw=randread --bs="$bs" \
		--ioengine=psync --iodepth=1 --runtime="$RUNTIME" --time_based \
		--output-format=json >"$DIR/calib-$bs.json" || die "fio --bs=$bs failed"
	cp "$DIR/fuse/stats" "$DIR/calib-$bs.stats.json"
	mbs=$(jq '.jobs[0].read.bw_bytes / 1e6' "$DIR/calib-$bs.json")
	lat=$(jq '.jobs[0].read.clat_ns.mean / 1e6' "$DIR/calib-$bs.json")
	ios=$(jq '.jobs[0].read.total_ios' "$DIR/calib-$bs.json")
	model=$(awk -v b="$bytes" -v s="$SEEK_MS" -v r="$MBPS" 'BEGIN { print b / (s / 1e3 + b / (r * 1e6)) / 1e6 }')
	paper=${PAPER[$bs]:-}
	[ -n "$paper" ] && paper=$(awk -v p="$paper" 'BEGIN { printf "%.1f", p / 8 }')
	seeks=$(jq --argjson n "$ios" '.read.seeks / (if $n > 0 then $n else 1 end)' "$DIR/fuse/stats")
	sizes=$(jq -r '.read.sizes | to_entries | map("\(.key):\(.value)") | join(" ")' "$DIR/fuse/stats")
	printf '%-6s %10.2f %10.2f %10s %10.2f %9.2f  %s\n' "$bs" "$mbs" "$model" "${paper:--}" "$lat" "$seeks" "$sizes"
done
