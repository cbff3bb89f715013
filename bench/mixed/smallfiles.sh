#!/usr/bin/env bash
# Small files over SMB (issue 12, part 3): a tree of FILES files of 4-64 KiB
# written with smbclient (recursive mput), read back (recursive mget) and
# deleted (deltree), through a plain share and rtio shares of one private
# smbd, interleaved, RUNS times. Reports the median wall time of each phase
# and the server's CPU seconds (smbd and aiod, from /proc/PID/stat) per 1000
# files; writes bench/results/smallfiles-<date>.{md,json}.
#
#   bench/mixed/smallfiles.sh [RUNS [FILES]]        (defaults: 5 runs, 5000 files)
#   env: BUILD (build dir), BENCH_PORT (default: the first free port from
#        4460), BENCH_DIR (data dir, default /var/tmp: the real disk),
#        SF_CONFIGS (default "plain rtio rtio0"), SF_DIRS (directories of the
#        tree, default 50), SF_CACHE (aiod's [cache] size, default 1G; the
#        README says 8G), SF_SEED (file sizes, default 1)
#
# The shares: plain, rtio (the README's settings, module defaults: files below
# rtio:register min size (1M) are smbd's alone) and rtio0 (every file
# registered with aiod at open, as before that option existed); lib.sh has
# the exact settings.
#
# Each phase is one smbclient connection (one smbd child); between phases the
# dirty data is synced (outside the timing), so each phase starts clean and
# none pays for the previous one's write-back. The write phase finds the
# share empty, the read phase finds the tree in the page cache (just
# written), the delete phase removes it. The first run of each share checks
# every file read back against the source.
#
# Server CPU: smbd's process group (the parent with the children it reaped,
# plus its live helpers) and aiod, each phase measured after the connection's
# smbd child has exited. Client CPU (smbclient) is not counted.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
NAME=smallfiles
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
root=$mixed_root
RUNS=${1:-5}
FILES=${2:-5000}
CONFIGS=${SF_CONFIGS:-plain rtio rtio0}
DIRS=${SF_DIRS:-50}
CACHE=${SF_CACHE:-1G}
SEED=${SF_SEED:-1}
PHASES="write read delete"

mixed_need_root_tools
[ "$RUNS" -ge 1 ] && [ "$FILES" -ge 1 ] || die "usage: smallfiles.sh [RUNS [FILES]]"
PORT=$(mixed_port)
mixed_tmp
mkdir -p "$T/got"
mixed_aiod_ini "$CACHE"
mixed_smb_conf "$PORT" $CONFIGS

# The tree: DIRS directories of FILES files in all, sizes uniform in 4..64 KiB.
echo "bench/mixed/smallfiles: making $FILES files in $DIRS directories"
/usr/bin/python3 - "$T/src/tree" "$FILES" "$DIRS" "$SEED" <<'EOF' || die "making the tree failed"
import os, random, sys
top, files, dirs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
total = 0
for i in range(files):
    d = os.path.join(top, "d%03d" % (i % dirs))
    os.makedirs(d, exist_ok=True)
    size = rng.randint(4096, 65536)
    with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
        f.write(os.urandom(size))
    total += size
print("bench/mixed/smallfiles: %d files, %.1f MiB" % (files, total / 1048576.0))
EOF
TREE_MIB=$(du -s --block-size=1M --apparent-size "$T/src/tree" | cut -f1)
sync
mixed_start
HZ=$(getconf CLK_TCK)

phase_cmd() {
	case $1 in
	write) echo "prompt off; recurse on; lcd $T/src; mput *" ;;
	read) echo "prompt off; recurse on; lcd $T/got; mget *" ;;
	delete) echo "deltree tree" ;;
	esac
}

out=$T/results.jsonl
load0=$(cut -d' ' -f1 /proc/loadavg)
for r in $(seq "$RUNS"); do
	# rotate the order each round so no configuration always goes first
	set -- $CONFIGS
	for _ in $(seq $(((r - 1) % $#))); do set -- "${@:2}" "$1"; done
	for c in "$@"; do
		rm -rf "${T:?}/got" && mkdir -p "$T/got"
		for ph in $PHASES; do
			sync
			mixed_settle
			s0=$(mixed_smbd_ticks)
			a0=$(mixed_aiod_ticks "$c")
			q0=$(mixed_aiod_stat requests)
			t0=$(date +%s.%N)
			smbclient "//127.0.0.1/$c" -p "$PORT" -U "$USER_NAME%$PASS" \
				--option='client min protocol=SMB3' -c "$(phase_cmd "$ph")" \
				> "$T/log/client.out" 2>&1 ||
				die "smbclient $c $ph failed: $(tail -3 "$T/log/client.out")"
			t1=$(date +%s.%N)
			mixed_settle
			s1=$(mixed_smbd_ticks)
			a1=$(mixed_aiod_ticks "$c")
			q1=$(mixed_aiod_stat requests)
			case $ph in
			write)
				n=$(find "$T/share/$c/tree" -type f | wc -l)
				[ "$n" = "$FILES" ] || die "$c: $n files on the share after the write, want $FILES"
				;;
			read)
				n=$(find "$T/got/tree" -type f 2> /dev/null | wc -l)
				[ "$n" = "$FILES" ] || die "$c: $n files read back, want $FILES"
				if [ "$r" = 1 ]; then
					diff -r -q "$T/src/tree" "$T/got/tree" > "$T/log/diff.out" ||
						die "$c: files read back differ: $(head -3 "$T/log/diff.out")"
				fi
				;;
			delete)
				[ ! -e "$T/share/$c/tree" ] || die "$c: the tree is still there after deltree"
				;;
			esac
			printf '{"run":%d,"config":"%s","phase":"%s","files":%d,"seconds":%s,"smbd_cpu":%s,"aiod_cpu":%s,"aiod_requests":%d,"load":"%s"}\n' \
				"$r" "$c" "$ph" "$FILES" "$(mixed_calc "$t1 - $t0")" "$(mixed_calc "($s1 - $s0) / $HZ")" \
				"$(mixed_calc "($a1 - $a0) / $HZ")" "$((q1 - q0))" "$(cut -d' ' -f1 /proc/loadavg)" >> "$out"
			tail -n 1 "$out"
		done
	done
done
load1=$(cut -d' ' -f1 /proc/loadavg)

stamp=$(date -u +%Y-%m-%d-%H%M%S)
mkdir -p "$root/bench/results"
command="bench/mixed/smallfiles.sh $RUNS $FILES"
[ -n "${SF_CONFIGS:-}" ] && command="SF_CONFIGS=\"$SF_CONFIGS\" $command"
/usr/bin/python3 - "$out" "$root/bench/results/smallfiles-$stamp" "$command" "$TREE_MIB" "$DIRS" \
	"$load0" "$load1" "$T/aiod.ini" "$(df --output=source,fstype "$T" | tail -n 1)" <<'EOF' ||
import json, os, platform, statistics, subprocess, sys

src, prefix, command, tree_mib, dirs, load0, load1, ini, disk = sys.argv[1:10]
rows = [json.loads(l) for l in open(src) if l.strip()]
cpu = "?"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
smbd = subprocess.run(["smbd", "--version"], capture_output=True, text=True).stdout.strip()
machine = {"kernel": platform.release(), "cpus": os.cpu_count(), "cpu": cpu,
           "mem_GiB": round(mem_gib, 1), "smbd": smbd, "data_dir": disk}
configs = []
for r in rows:
    if r["config"] not in configs:
        configs.append(r["config"])
phases = ["write", "read", "delete"]
summary = []
for c in configs:
    for ph in phases:
        rs = [r for r in rows if r["config"] == c and r["phase"] == ph]
        if not rs:
            continue
        k = rs[0]["files"] / 1000.0
        summary.append({
            "config": c, "phase": ph, "runs": len(rs), "files": rs[0]["files"],
            "median_s": statistics.median(r["seconds"] for r in rs),
            "min_s": min(r["seconds"] for r in rs), "max_s": max(r["seconds"] for r in rs),
            "median_files_per_s": statistics.median(r["files"] / r["seconds"] for r in rs),
            "median_cpu_s_per_1000": statistics.median((r["smbd_cpu"] + r["aiod_cpu"]) / k for r in rs),
            "median_smbd_cpu_s_per_1000": statistics.median(r["smbd_cpu"] / k for r in rs),
            "median_aiod_cpu_s_per_1000": statistics.median(r["aiod_cpu"] / k for r in rs),
            "median_aiod_requests": statistics.median(r["aiod_requests"] for r in rs),
        })
info = {"command": command, "machine": machine, "tree_MiB": int(tree_mib), "dirs": int(dirs),
        "load_before": load0, "load_after": load1, "aiod_ini": open(ini).read(),
        "summary": summary, "runs": rows}
with open(prefix + ".json", "w") as f:
    json.dump(info, f, indent=1)


def get(c, ph):
    for s in summary:
        if s["config"] == c and s["phase"] == ph:
            return s
    return None


def pct(v, base):
    return "%+.0f %%" % (100.0 * (v - base) / base) if base > 0 else "-"


n = rows[0]["files"] if rows else 0
out = ["# Small files over SMB: plain vs rtio", "",
       "Command: `%s`" % command, "",
       "Machine: %s, %s CPUs, %.1f GiB, kernel %s; %s; data on %s" % (
           cpu, machine["cpus"], machine["mem_GiB"], machine["kernel"], smbd, disk), "",
       "TCP congestion control (the clients' connections to smbd on 127.0.0.1, bench/tcpcc.sh): %s" % os.environ.get("BENCH_TCP_CC_IN_EFFECT", "?"), "",
       "%d files of 4-64 KiB (%s MiB) in %s directories; smbclient: recursive mput (write), "
       "recursive mget (read, from the page cache), deltree (delete); one connection per phase, "
       "synced between phases. Medians over %d interleaved runs (order rotated each round); "
       "load average %s before, %s after." % (n, tree_mib, dirs,
                                              max((s["runs"] for s in summary), default=0),
                                              load0, load1), "",
       "Server CPU = smbd (its process group, children reaped) + aiod, seconds per 1000 files. "
       "Configurations: `plain` no module; `rtio` the README's settings, module defaults "
       "(files under `rtio:register min size` = 1M are not registered with aiod); `rtio0` the "
       "same with `rtio:register min size = 0` (every open registered, as before).", ""]
out.append("| phase | config | wall s | vs plain | files/s | server CPU s/1000 | vs plain "
           "| smbd | aiod | aiod requests |")
out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for ph in phases:
    base = get("plain", ph)
    for c in configs:
        s = get(c, ph)
        if s is None:
            continue
        out.append("| %s | %s | %.2f | %s | %.0f | %.3f | %s | %.3f | %.3f | %d |" % (
            ph, c, s["median_s"], pct(s["median_s"], base["median_s"]) if base and c != "plain" else "",
            s["median_files_per_s"], s["median_cpu_s_per_1000"],
            pct(s["median_cpu_s_per_1000"], base["median_cpu_s_per_1000"]) if base and c != "plain" else "",
            s["median_smbd_cpu_s_per_1000"], s["median_aiod_cpu_s_per_1000"],
            s["median_aiod_requests"]))
out += ["", "Wall time range (min-max s) per phase and configuration:", ""]
for s in summary:
    out.append("- %s %s: %.2f-%.2f" % (s["phase"], s["config"], s["min_s"], s["max_s"]))
out += ["", "aiod.ini (rtio, rtio0):", "", "```", info["aiod_ini"].strip(), "```", ""]
with open(prefix + ".md", "w") as f:
    f.write("\n".join(out) + "\n")
print("\n".join(out))
EOF
	die "report failed"
echo "bench/mixed/smallfiles: results in bench/results/smallfiles-$stamp.{md,json}"
