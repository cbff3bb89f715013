"""The markdown of a real-time stream sweep (report.py's OUT.md), and the
labels and orderings report.py shares with it.

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later
"""
import re
from collections import OrderedDict

CONFIG_ORDER = ["plain", "plain-ra", "io_uring", "rtio"]
CONFIG_LABEL = {
    "plain": "plain share",
    "plain-ra": "plain, read_ahead_kb 8192",
    "io_uring": "vfs io_uring",
    "rtio": "rtio (aiod)",
}
SCENARIO_ORDER = ["staggered", "together", "replay", "mixed", "ingest"]
SCENARIO_TEXT = {
    "staggered": "streams start one after another, %s ms apart.",
    "together": "all streams start at the same moment (%s ms apart).",
    "replay": "a warm, full cache. Per run, fresh smbd (and aiod): a first playback, not measured, of M-1 of "
              "the files from their start, %s ms apart, until aiod's cache is full (rtio; then the kernel's "
              "page cache of the files is dropped, aiod's cache kept) or for as long as the same playback "
              "would take to fill it (the others, whose page cache is their warm cache and is kept); then, "
              "without restarting anything, M streams play from the start: the M-1 files again and one not "
              "played before. The count is M.",
    "mixed": "streams of different bitrates and read sizes at once (%s ms apart); each mix is played "
             "as given (1 + confirm runs, stopping at the first late chunk): clean or not, no search.",
    "ingest": "paced recorders (rtio-stream --write: new files, created in every run) write next to the "
              "playing streams, which start %s ms apart; a run is clean only if streams **and** recorders "
              "have no late chunk.",
}


def config_key(c):
    return (CONFIG_ORDER.index(c) if c in CONFIG_ORDER else 99, c)


def scenario_key(s):
    return (SCENARIO_ORDER.index(s) if s in SCENARIO_ORDER else 99, s)


def rate_bps(s):
    """Bits/s of 100M; a mix (4x200M,4x50M) sorts by its total."""
    mul = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
    if "x" in s:
        total = 0.0
        for grp in s.split(","):
            count, _, rest = grp.partition("x")
            total += int(count) * rate_bps(rest.split(":")[0])
        return total
    return float(s[:-1]) * mul[s[-1]] if s and s[-1] in mul else float(s)


def prebuffer_key(p):
    """2 chunks before 4 before 500ms."""
    p = str(p)
    return (1, int(p[:-2])) if p.endswith("ms") else (0, int(p) if p.isdigit() else 0)


def fmt_rate(misses, chunks):
    if chunks == 0:
        return "-"
    if misses == 0:
        return "0"
    return "%.2g%%" % (100.0 * misses / chunks)


def fmt(v, spec="%.1f", none="-"):
    return none if v is None else spec % v


def label(c):
    return CONFIG_LABEL.get(c, c)


def prebuffer_text(r):
    pb = str(r["prebuffer"])
    chunks = r.get("prebuffer_chunks") or []
    if pb.endswith("ms") and chunks:
        return "%s (%s ch)" % (pb, "/".join(str(c) for c in chunks))
    return pb if pb.endswith("ms") else pb + " ch"


def distinct_inis(runs):
    """aiod.ini texts of the rtio runs (the temp dir written $RT_T), with the
    series that used each."""
    inis = OrderedDict()
    for r in runs:
        text = r.get("aiod_ini")
        if not text:
            continue
        text = re.sub(r"/\S*/rtio-rt\.[A-Za-z0-9]+", "$RT_T", text.strip())
        used = "%s %s" % (r.get("scenario", "staggered"), r["bitrate"])
        if r.get("admission_mode") == "refuse":
            used = "admission run"
        inis.setdefault(text, [])
        if used not in inis[text]:
            inis[text].append(used)
    return inis


def md_header(doc, w):
    p = doc["parameters"]
    m = doc["machine"]
    w("# Real-time streams on an emulated single-spindle disk (%s)" % p.get("date", ""))
    w("")
    if p.get("complete") != "true":
        w("**Incomplete: the sweep was interrupted; these are the runs it finished.**")
        w("")
    w("Command: `%s` (%s s)" % (p.get("command", ""), p.get("elapsed_s", "?")))
    w("")
    if p.get("note"):
        w("**Note:** %s" % p["note"])
        w("")
    if p.get("merged_from"):
        w("Merged: this command measured some series again; the others, and their runs, are kept "
          "from an earlier sweep: `%s`." % p["merged_from"])
        w("")
    w("Machine: %s, %s CPUs (%s), %s RAM; `%s`; load average %s at the start, %s at the end "
      "(shared with other work: every run below carries its own load average)." % (
          m["host"], m["nproc"], m["cpu"], m["memory"], p.get("uname") or m.get("uname") or m["kernel"],
          p.get("loadavg_start", "?"), p.get("loadavg_end", "?")))
    w("Software: %s, %s." % (p.get("smbd_version", "smbd ?"), p.get("aiod_version", "aiod ?")))
    w("")


def md_settings(doc, w):
    p = doc["parameters"]
    w("## rtio settings")
    w("")
    if p.get("rtio.settings_label"):
        w("**%s.**" % p["rtio.settings_label"])
        if p.get("rtio.settings") == "tuned":
            w("These are bench-only values (bench/rt/README.md), not what README.md recommends.")
    else:
        # sweeps before RT_SETTINGS: the tuned values, listed one by one
        w("Bench-only (tuned) settings: cache %s of %s blocks (direct_io = %s), read-ahead io_size %s, engine "
          "queue_depth %s, best_effort_deadline_ms %s, stream prebuffer_ms %s; admission off." % (
              p.get("rtio.cache.size"), p.get("rtio.cache.block_size"), p.get("rtio.cache.direct_io"),
              p.get("rtio.readahead.io_size"), p.get("rtio.engine.queue_depth"),
              p.get("rtio.readahead.best_effort_deadline_ms"), p.get("rtio.stream.prebuffer_ms")))
    w("")
    inis = distinct_inis(doc["runs"])
    if inis:
        w("The aiod.ini of the rtio runs, whole (`[global]` and the `[admission] profile` path are the "
          "bench's plumbing; `$RT_T` is the sweep's temp dir):")
        w("")
        for text, used in inis.items():
            w("Used by: %s." % ", ".join(used))
            w("")
            w("```ini")
            w(text)
            w("```")
            w("")
    if doc.get("calibration"):
        w("The `[admission] profile`: `aiod --calibrate` on the emulated disk, once for the sweep:")
        w("")
        w("```")
        w(doc["calibration"].strip())
        w("```")
        w("")
    w("plain-ra: loop read_ahead_kb %s instead of %s." % (p.get("read_ahead_kb_plain_ra"), p.get("read_ahead_kb")))
    if p.get("tcp_cc"):
        w("TCP congestion control: %s." % p["tcp_cc"])
    w("")


def md_method(doc, w):
    p = doc["parameters"]
    w("## Method")
    w("")
    w("emudisk (%s; one request at a time, a seek unless a request starts where the last ended) with ext4 "
      "on a direct-I/O loop device, its bytes in RAM. One paced client per stream (rtio-stream: own process, "
      "own SMB connection, own file), %s reads unless a mix says otherwise, each playing %s s; client "
      "prebuffer %s (a time is ceil(time / period) chunks at each stream's bitrate and read size); greedy "
      "reader: %s reads (%s) of its own file for as long as streams play. Every run starts cold: fresh smbd "
      "(and aiod), page cache of the files dropped. A count is *clean* when every one of its %d runs had "
      "zero late chunks; the boundary count is re-run, so one late chunk anywhere decides." % (
          p.get("emudisk", "seek 14.5 ms, 168 MB/s"), p.get("chunk"), p.get("duration_s"),
          p.get("client_prebuffer", p.get("client_prebuffer_chunks")), p.get("greedy_chunk"),
          p.get("greedy_pattern", "sequential"), 1 + int(p.get("confirm_runs", "1"))))
    if p.get("greedy_lead_s", "0") not in ("0", ""):
        w("")
        w("The greedy clients start %s s before the first stream." % p["greedy_lead_s"])
    if p.get("stream_file_layout"):
        w("")
        w("Stream files: %s." % p["stream_file_layout"].rstrip("; "))
    if p.get("recorders"):
        w("")
        w("Recorders (ingest): %s." % p["recorders"])
    if p.get("mixes"):
        w("")
        w("Mixes: %s." % p["mixes"].rstrip("; "))
    w("")


def md_search(rows, groups, w):
    rec = any(r["scenario"] == "ingest" for r in rows)
    replay = any(r["scenario"] == "replay" for r in rows)
    w("| bitrate | greedy | prebuffer | configuration | streams, 0 late | next count: late/chunks | "
      + ("recorders late at max / next | " if rec else "") + ("aiod cache full after 1st playback (its length) | " if replay else "")
      + "greedy MB/s | CPU s | disk MB/s | busy % | mean request KiB | load |")
    w("|---|---|---|---|---:|---|" + ("---|" if rec else "") + ("---|" if replay else "") + "---:|" * 6)
    for r in rows:
        cells = [r["bitrate"], str(r["greedy"]), prebuffer_text(r), label(r["config"]),
                 "**%d**" % r["max_clean_streams"],
                 ("%d: %s" % (r["first_failing"], r["misses_at_first_failing"])) if r["first_failing"] else "-"]
        if rec:
            cells.append("%s / %s" % (r["recorder_misses_at_max"] or "-", r["recorder_misses_at_first_failing"] or "-"))
        if replay:
            cells.append(cache_full_text(r))
        cells += [fmt(r["greedy_mb_per_s_at_max"]) + ("*" if r["greedy_wrapped_at_max"] else ""),
                  fmt(r["cpu_s_at_max"], "%.2f"), fmt(r["disk_mb_per_s_at_max"]), fmt(r["disk_busy_pct_at_max"], "%.0f"),
                  fmt(r["mean_request_kib_at_max"], "%.0f"), fmt(r["loadavg_at_max"], "%.2f")]
        w("| " + " | ".join(cells) + " |")
    w("")


def cache_full_text(r):
    """aiod's cache full after the first playback (rtio), and how long that took"""
    full = r["replay_cache_full"]
    secs = " (%.0f s)" % r["replay_warm_s"] if r["replay_warm_s"] is not None else ""
    if not full:
        return "-" + secs
    return ("yes" if all(full) else "**no**") + secs


def md_fixed(rows, w):
    rec = any(r["scenario"] == "ingest" for r in rows)
    replay = any(r["scenario"] == "replay" for r in rows)
    w("| bitrate or mix | greedy | prebuffer | configuration | streams | result | late/chunks | "
      + ("recorders late | " if rec else "") + ("aiod cache full after 1st playback (its length) | " if replay else "")
      + "worst lateness ms | greedy MB/s | runs |")
    w("|---|---|---|---|---:|---|---|" + ("---|" if rec else "") + ("---|" if replay else "") + "---:|---:|---:|")
    for r in rows:
        cells = [r["bitrate"], str(r["greedy"]), prebuffer_text(r), label(r["config"]), str(r["count"]),
                 "**clean**" if r["clean"] else "late", r["misses_at_count"] or "-"]
        if rec:
            cells.append(r["recorder_misses_at_max"] or "-")
        if replay:
            cells.append(cache_full_text(r))
        cells += [fmt(r["worst_lateness_ms_at_max"]), fmt(r["greedy_mb_per_s_at_max"]), str(r["runs_at_max"])]
        w("| " + " | ".join(cells) + " |")
    w("")


def md_miss_rates(keys, groups, w):
    counts = sorted({n for k in keys for n in groups[k]})
    if not counts:
        return
    w("Late chunks / all chunks (streams and recorders) over every run at each count (runs in brackets when "
      "more than one):")
    w("")
    w("| bitrate | greedy | prebuffer | configuration | " + " | ".join(str(n) for n in counts) + " |")
    w("|---|---|---|---|" + "---:|" * len(counts))
    for k in keys:
        cells = []
        for n in counts:
            rs = groups[k].get(n, [])
            if not rs:
                cells.append("")
                continue
            cell = fmt_rate(sum(r["all_misses"] for r in rs),
                            sum(r["chunks"] + r.get("record_chunks", 0) for r in rs))
            if any(r.get("error_count") for r in rs):
                cell += " (err)"
            if len(rs) > 1:
                cell += " [%d]" % len(rs)
            cells.append(cell)
        w("| %s | %d | %s | %s | %s |" % (k[2], k[3], k[4], label(k[1]), " | ".join(cells)))
    w("")


def md_admission(doc, w):
    adm = doc.get("admission")
    p = doc["parameters"]
    w("## Admission control")
    w("")
    if not adm:
        w("Not run.")
        w("")
        return
    w("`aiod --calibrate` on the emulated disk, then `[admission] mode = refuse` with that profile: capacity "
      "%.1f MB/s for reads of the settings' io_size, minus %d %% headroom, admits %d streams; %d were opened "
      "(staggered)." % (adm["capacity_Bps"] / 1e6, adm["headroom_pct"], adm["admitted_expected"], adm["opened"]))
    w("")
    w("| opens refused by aiod | clients whose open failed | smbclient probe: NT_STATUS_INSUFFICIENT_RESOURCES | "
      "streams served | their chunks | their misses |")
    w("|---:|---:|---|---:|---:|---:|")
    w("| %s | %d | %s | %d | %d | %d |" % (
        adm.get("refused_by_aiod"), len(adm["clients_failed"]),
        "yes" if adm.get("probe_saw_insufficient_resources") else "no",
        adm["served_streams"], adm["served_chunks"], adm["served_misses"]))
    w("")
    w("aiod counts every refused open (the paced client's and the probe's). The probe is `smbclient` "
      "opening the refused stream's file while the admitted streams play: it prints the NT status; "
      "rtio-stream only gets libsmbclient's errno, which maps NT_STATUS_INSUFFICIENT_RESOURCES to EINVAL.")
    w("")
    for c in adm["clients_failed"]:
        w("- %s: `%s`" % (c["client"], c["error"]))
    for l in adm.get("smbclient_probe", []):
        w("- smbclient: `%s`" % l)
    if adm.get("aiod_log"):
        w("- aiod log: `%s`" % adm["aiod_log"][-1])
    if adm.get("smbd_log"):
        w("- smbd log: `%s`" % adm["smbd_log"][0])
    w("")
    if not doc.get("calibration"):
        w("Calibration:")
        w("")
        w("```")
        w(adm.get("calibration", "").strip())
        w("```")
        w("")


def md_runs(doc, w):
    w("## Every run")
    w("")
    w("| run | prebuffer | chunks | late | recorders late | worst lateness ms | worst read ms | greedy MB/s | "
      "CPU smbd s | CPU aiod s | disk MB/s read | write | busy % | requests | seeks | mean KiB | "
      "aiod late reads | aiod RA blocks | aiod disk reads | load |")
    w("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in doc["runs"]:
        d = r["disk"]
        a = r.get("aiod") or {}
        w("| %s%s | %s | %d | %d | %s | %s | %s | %s | %.2f | %.2f | %.1f | %s | %.0f | %d | %d | %.0f | %s | %s | %s | %.2f |" % (
            r["id"], " (errors: %d)" % r["error_count"] if r.get("error_count") else "",
            r["client_prebuffer"], r["chunks"], r["misses"],
            "%d/%d" % (r["record_misses"], r["record_chunks"]) if r.get("recorders") else "-",
            fmt(r["worst_lateness_ms"]), fmt(r["worst_read_ms"]),
            (fmt(r["greedy_mb_per_s"]) + ("*" if r.get("greedy_wrapped") else "")) if r["greedy"] else "-",
            r["cpu_s"]["smbd"], r["cpu_s"]["aiod"],
            d.get("read_mb_per_s", 0), fmt(d.get("write_mb_per_s")), d.get("busy_pct", 0),
            d.get("read_requests", 0), d.get("read_seeks", 0), d.get("mean_request_kib", 0),
            a.get("deadline_misses", "-"), a.get("readahead_blocks", "-"), a.get("disk_reads", "-"),
            r["loadavg"]["start"]))
    w("")
    w("aiod late reads = aiod's `deadline_misses` (a stream read that found its block not yet in the "
      "cache). A replay run's aiod counters and disk numbers are those of the measured playback only.")
    w("")


def md_sweep(doc, groups, rows):
    out = []
    w = out.append
    p = doc["parameters"]
    md_header(doc, w)
    md_settings(doc, w)
    md_method(doc, w)
    staggers = dict(kv.split("=") for kv in p.get("stagger_ms", "").split() if "=" in kv)
    for scen in sorted({r["scenario"] for r in rows}, key=scenario_key):
        mine = [r for r in rows if r["scenario"] == scen]
        w("## Scenario: %s" % scen)
        w("")
        stag = staggers.get(scen) or "/".join(sorted({str(r["stagger_ms"]) for r in mine}))
        w(SCENARIO_TEXT.get(scen, "%s ms apart.") % stag)
        w("")
        search = [r for r in mine if r["kind"] == "search"]
        fixed = [r for r in mine if r["kind"] == "fixed"]
        if search:
            w("Most streams with zero late chunks (greedy MB/s, CPU, disk and load: means over the runs at "
              "that count; CPU is smbd's and aiod's; \\* the greedy reader read past the end of its file):")
            w("")
            md_search(search, groups, w)
            keys = sorted({k for k in groups if k[0] == scen and any(
                (r["config"], r["bitrate"], r["greedy"], r["prebuffer"]) == (k[1], k[2], k[3], k[4])
                for r in search)}, key=lambda k: (rate_bps(k[2]), k[3], prebuffer_key(k[4]), config_key(k[1])))
            md_miss_rates(keys, groups, w)
        if fixed:
            w("Played as given:")
            w("")
            md_fixed(fixed, w)
    md_admission(doc, w)
    md_runs(doc, w)
    return "\n".join(out)
