#!/usr/bin/python3
# MS-SQOS through a real smbd (t_sqos.sh): FSCTL_STORAGE_QOS_CONTROL sent
# with Samba's own client bindings (python3-samba; /usr/bin/python3, whose
# site-packages hold them) and its answers checked against the aiod.ini
# rule. One line per check on stdout; exit 1 if any failed.
#
# Usage: sqos_check.py HOST PORT SHARE NOSQOS_SHARE USER PASSWORD FILE LIMIT RESERVE
#   LIMIT, RESERVE: the rule's limit and reserve in bytes/s
#        sqos_check.py --old HOST PORT SHARE USER PASSWORD FILE
#   against an aiod without QOS_POLICY: unsupported, and the file still reads
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
import random
import struct
import sys

from samba import NTSTATUSError, ntstatus
from samba.credentials import Credentials
from samba.param import LoadParm
from samba.samba3 import libsmb_samba_internal as libsmb
from samba.samba3 import param as s3param

FSCTL = 0x00090350
V1_0, V1_1 = 0x0100, 0x0101
SET_FLOW, SET_POLICY, PROBE, GET_STATUS, UPDATE = 0x01, 0x02, 0x04, 0x08, 0x10
STATUS_OK, UNKNOWN_POLICY_ID, CONFIGURATION_MISMATCH = 0, 2, 4
FLOW = bytes(range(1, 17))
POLICY = bytes(range(0x40, 0x50))

failed = 0


def check(what, ok, detail=""):
    global failed
    print("%s: %s%s" % ("ok  " if ok else "FAIL", what, (" (%s)" % detail) if detail else ""))
    failed += 0 if ok else 1


def request(version, options, flow=FLOW, policy=b"\0" * 16, limit=0, reservation=0):
    """A STORAGE_QOS_CONTROL_REQUEST (MS-SQOS 2.2.2.2), no names."""
    body = struct.pack("<HHI16s16s16sQQHHHHQQQQ", version, 0, options, flow, policy,
                       b"\0" * 16, limit, reservation, 0, 0, 0, 0, 0, 0, 0, 0)
    if version == V1_1:
        body += struct.pack("<QQ", 0, 0)  # BandwidthLimit, KilobyteCountIncrement
    return body


def decode(out):
    """A STORAGE_QOS_CONTROL_RESPONSE (2.2.2.3), as long as it is."""
    names = ("version", "reserved", "options", "flow", "policy", "initiator", "ttl", "status",
             "max_iops", "min_iops", "base_io_size", "reserved2")
    r = dict(zip(names, struct.unpack_from("<HHI16s16s16sIIQQII", out.ljust(88, b"\0"))))
    r["max_kibps"] = struct.unpack_from("<Q", out, 88)[0] if len(out) >= 96 else None
    return r


def fsctl(conn, fnum, blob, max_out):
    """(NTSTATUS, output); 0 for success."""
    try:
        return 0, conn.fsctl(fnum, FSCTL, blob, max_out)
    except NTSTATUSError as e:
        return e.args[0] & 0xffffffff, b""


def connect(host, port, share, user, password):
    # Samba 4.22's libsmb.Conn always dials 445 (then 139): t_sqos.sh runs us
    # in a network namespace where 445 is the test's smbd
    if port != "445":
        sys.exit("libsmb.Conn cannot connect to port %s: only 445" % port)
    s3param.get_context().set("client min protocol", "SMB3")
    lp = LoadParm()
    creds = Credentials()
    creds.guess(lp)
    creds.set_username(user)
    creds.set_password(password)
    return libsmb.Conn(host, share, lp, creds)


def old_aiod(host, port, share, user, password, name):
    conn = connect(host, port, share, user, password)
    fnum = conn.create(name, DesiredAccess=0x120089, ShareAccess=7, CreateDisposition=1)
    st, _ = fsctl(conn, fnum, request(V1_1, SET_FLOW | GET_STATUS), 96)
    check("an aiod without QOS_POLICY: STATUS_INVALID_DEVICE_REQUEST",
          st == ntstatus.NT_STATUS_INVALID_DEVICE_REQUEST, "0x%08x" % st)
    data = conn.read(fnum, 0, 65536)
    check("the file still reads after it", len(data) == 65536, "%d bytes" % len(data))
    conn.close(fnum)
    return 1 if failed else 0


def main():
    if sys.argv[1] == "--old":
        return old_aiod(*sys.argv[2:8])
    host, port, share, nosqos, user, password, name = sys.argv[1:8]
    limit, reserve = int(sys.argv[8]), int(sys.argv[9])
    want_max, want_min, want_kib = limit // 8192, reserve // 8192, limit // 1024
    conn = connect(host, port, share, user, password)
    fnum = conn.create(name, DesiredAccess=0x12019f, ShareAccess=7, CreateDisposition=1)  # read/write, open

    st, _ = fsctl(conn, fnum, request(V1_1, GET_STATUS), 96)
    check("status before joining a flow: STATUS_NOT_FOUND", st == ntstatus.NT_STATUS_NOT_FOUND,
          "0x%08x" % st)

    st, out = fsctl(conn, fnum, request(V1_1, SET_FLOW | GET_STATUS), 96)
    r = decode(out)
    print("  1.1 status answer, %d bytes: %s" % (len(out), out.hex()))
    print("  decoded: version 0x%04x flow %s TimeToLive %d ms Status %d MaximumIoRate %d "
          "MinimumIoRate %d BaseIoSize %d MaximumBandwidth %s KiB/s" %
          (r["version"], r["flow"].hex(), r["ttl"], r["status"], r["max_iops"], r["min_iops"],
           r["base_io_size"], r["max_kibps"]))
    check("join a flow and get its status (1.1)", st == 0 and len(out) == 96, "0x%08x" % st)
    check("the answer names the flow, 1.1, Status Ok",
          r["version"] == V1_1 and r["flow"] == FLOW and r["status"] == STATUS_OK)
    check("MaximumIoRate is the rule's limit in 8 KiB IOPS (%d)" % want_max,
          r["max_iops"] == want_max, str(r["max_iops"]))
    check("MinimumIoRate is the rule's reserve in 8 KiB IOPS (%d)" % want_min,
          r["min_iops"] == want_min, str(r["min_iops"]))
    check("MaximumBandwidth is the rule's limit in KiB/s (%d)" % want_kib,
          r["max_kibps"] == want_kib, str(r["max_kibps"]))
    check("BaseIoSize 8192, TimeToLive 1000 ms", r["base_io_size"] == 8192 and r["ttl"] == 1000)

    st, out = fsctl(conn, fnum, request(V1_0, PROBE | GET_STATUS | UPDATE), 88)
    r = decode(out)
    check("1.0 status with probe and counters: 88 bytes, same rates",
          st == 0 and len(out) == 88 and r["version"] == V1_0 and r["max_iops"] == want_max
          and r["min_iops"] == want_min, "0x%08x, %d bytes" % (st, len(out)))
    st, out = fsctl(conn, fnum, request(V1_1, GET_STATUS), 80)
    check("an 80-byte output buffer (the spec's minimum) gets 80 bytes",
          st == 0 and len(out) == 80, "0x%08x, %d bytes" % (st, len(out)))

    # what the spec names for what this server does not do or cannot accept
    for what, blob, max_out, want in (
            ("an empty buffer", b"", 96, ntstatus.NT_STATUS_INVALID_PARAMETER),
            ("a 20-byte buffer", request(V1_1, GET_STATUS)[:20], 96,
             ntstatus.NT_STATUS_INVALID_PARAMETER),
            ("a 1.0-sized request claiming 1.1", request(V1_1, GET_STATUS)[:112], 96,
             ntstatus.NT_STATUS_INVALID_PARAMETER),
            ("ProtocolVersion 0xffff", struct.pack("<H", 0xffff) + request(V1_1, GET_STATUS)[2:],
             96, ntstatus.NT_STATUS_REVISION_MISMATCH),
            ("no known option", request(V1_1, 0x20), 96, ntstatus.NT_STATUS_INVALID_PARAMETER),
            ("an output buffer under 80 bytes", request(V1_1, GET_STATUS), 40,
             ntstatus.NT_STATUS_INVALID_PARAMETER),
            ("a probe of the empty flow on a fresh open", None, 96,
             ntstatus.NT_STATUS_INVALID_PARAMETER),
            ("reservation above limit", request(V1_1, SET_POLICY, limit=10, reservation=20), 0,
             ntstatus.NT_STATUS_INVALID_PARAMETER)):
        f = fnum
        if blob is None:  # on a second open, in no flow yet
            f = conn.create(name, DesiredAccess=0x120089, ShareAccess=7, CreateDisposition=1)
            blob = request(V1_1, PROBE | GET_STATUS, flow=b"\0" * 16)
        st, _ = fsctl(conn, f, blob, max_out)
        check("%s: 0x%08x" % (what, want), st == want, "0x%08x" % st)
        if f != fnum:
            conn.close(f)

    # an initiator's own policy is heard, not applied: the Status says so
    st, _ = fsctl(conn, fnum, request(V1_1, SET_POLICY, policy=POLICY), 0)
    st2, out = fsctl(conn, fnum, request(V1_1, GET_STATUS), 96)
    r = decode(out)
    check("SetPolicy with a PolicyID: accepted, Status UnknownPolicyId, aiod's rates",
          st == 0 and st2 == 0 and r["policy"] == POLICY and r["status"] == UNKNOWN_POLICY_ID
          and r["max_iops"] == want_max, "0x%08x 0x%08x status %s" % (st, st2, r["status"]))
    st, _ = fsctl(conn, fnum, request(V1_1, SET_POLICY, limit=100), 0)
    st2, out = fsctl(conn, fnum, request(V1_1, GET_STATUS), 96)
    r = decode(out)
    check("SetPolicy with a Limit of its own: Status ConfigurationMismatch",
          st == 0 and st2 == 0 and r["status"] == CONFIGURATION_MISMATCH and
          r["max_iops"] == want_max, "status %s" % r["status"])

    # garbage: every answer a clean NTSTATUS, the connection and the open still fine
    rnd = random.Random(13)
    statuses = set()
    for i in range(300):
        n = rnd.randrange(0, 200)
        blob = bytes(rnd.randrange(256) for _ in range(n))
        if i % 2:
            blob = struct.pack("<H", rnd.choice((V1_0, V1_1))) + blob[2:]
        st, out = fsctl(conn, fnum, blob, rnd.randrange(0, 200))
        statuses.add(st)
    st, out = fsctl(conn, fnum, request(V1_1, SET_FLOW | GET_STATUS), 96)
    check("300 garbage requests, then a good one still answered", st == 0 and len(out) == 96,
          "statuses seen: %s" % " ".join("0x%08x" % s for s in sorted(statuses)))
    conn.close(fnum)

    # rtio:sqos = no: as without the module
    conn2 = connect(host, port, nosqos, user, password)
    f = conn2.create(name, DesiredAccess=0x120089, ShareAccess=7, CreateDisposition=1)
    st, _ = fsctl(conn2, f, request(V1_1, SET_FLOW | GET_STATUS), 96)
    check("rtio:sqos = no: STATUS_INVALID_DEVICE_REQUEST",
          st == ntstatus.NT_STATUS_INVALID_DEVICE_REQUEST, "0x%08x" % st)
    conn2.close(f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
