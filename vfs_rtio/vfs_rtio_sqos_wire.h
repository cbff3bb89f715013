/*
 * vfs_rtio: MS-SQOS (Storage Quality of Service Protocol) on the wire, and
 * what the server does with each request, without Samba (vfs_rtio_sqos.c
 * hands it an open's state and aiod's policy; tests/unit/test_sqos.c feeds
 * it short and garbage buffers).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An initiator (Hyper-V) sends FSCTL_STORAGE_QOS_CONTROL on an open file
 * with a STORAGE_QOS_CONTROL_REQUEST: join the open to a logical flow (a
 * GUID), set or probe the flow's policy, report its I/O counters, ask the
 * flow's status. The status answer (STORAGE_QOS_CONTROL_RESPONSE) carries
 * the rates the initiator must keep to: here those of the aiod.ini rule that
 * paces the open, converted as vfs_rtio_sqos_policy_from() says. aiod.ini is
 * the policy: what an initiator asks for is remembered and echoed, never
 * applied, and the status says so (UnknownPolicyId, ConfigurationMismatch).
 *
 * Layouts (little-endian, offsets in bytes; the spec's 2.2.2.2 and 2.2.2.3):
 *
 *   request   0 ProtocolVersion(2) 2 Reserved(2) 4 Options(4) 8 LogicalFlowID(16)
 *            24 PolicyID(16) 40 InitiatorID(16) 56 Limit(8) 64 Reservation(8)
 *            72 InitiatorNameOffset(2) 74 ..Length(2) 76 InitiatorNodeNameOffset(2)
 *            78 ..Length(2) 80 IoCountIncrement(8) 88 NormalizedIoCountIncrement(8)
 *            96 LatencyIncrement(8) 104 LowerLatencyIncrement(8)
 *           112 BandwidthLimit(8) 120 KilobyteCountIncrement(8)   [1.1 only]
 *           then the two UTF-16 names where their offsets say
 *   response  0 ProtocolVersion(2) 2 Reserved(2) 4 Options(4) 8 LogicalFlowID(16)
 *            24 PolicyID(16) 40 InitiatorID(16) 56 TimeToLive(4) 60 Status(4)
 *            64 MaximumIoRate(8) 72 MinimumIoRate(8) 80 BaseIoSize(4) 84 Reserved(4)
 *            88 MaximumBandwidth(8)                                [1.1 only]
 *
 * The spec's example in 4.3 prints MaximumBandwidth before BaseIoSize; its
 * structure diagram and Microsoft's own test suite put BaseIoSize at 80, as
 * here.
 */
#ifndef VFS_RTIO_SQOS_WIRE_H
#define VFS_RTIO_SQOS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VFS_RTIO_SQOS_FSCTL 0x00090350u	/* FSCTL_STORAGE_QOS_CONTROL */

#define VFS_RTIO_SQOS_V1_0 0x0100u
#define VFS_RTIO_SQOS_V1_1 0x0101u

/* Request Options */
#define VFS_RTIO_SQOS_SET_LOGICAL_FLOW_ID 0x01u
#define VFS_RTIO_SQOS_SET_POLICY          0x02u
#define VFS_RTIO_SQOS_PROBE_POLICY        0x04u
#define VFS_RTIO_SQOS_GET_STATUS          0x08u
#define VFS_RTIO_SQOS_UPDATE_COUNTERS     0x10u
#define VFS_RTIO_SQOS_OPTIONS             0x1fu

/* Response Status (2.2.2.1) */
#define VFS_RTIO_SQOS_STATUS_OK                      0u
#define VFS_RTIO_SQOS_STATUS_INSUFFICIENT_THROUGHPUT 1u
#define VFS_RTIO_SQOS_STATUS_UNKNOWN_POLICY_ID       2u
#define VFS_RTIO_SQOS_STATUS_CONFIGURATION_MISMATCH  4u
#define VFS_RTIO_SQOS_STATUS_NOT_AVAILABLE           5u

#define VFS_RTIO_SQOS_REQ_V1_0_LEN  112u	/* the fixed part, names follow */
#define VFS_RTIO_SQOS_REQ_V1_1_LEN  128u
#define VFS_RTIO_SQOS_RESP_MIN_LEN  80u		/* the least output buffer a status needs (3.2.5.1.4) */
#define VFS_RTIO_SQOS_RESP_V1_0_LEN 88u
#define VFS_RTIO_SQOS_RESP_V1_1_LEN 96u
#define VFS_RTIO_SQOS_NAME_MAX      0x200u	/* STORAGE_QOS_INITIATOR_NAME_SIZE */
#define VFS_RTIO_SQOS_NAME_MIN_OFF  104u	/* a name may not start before this (3.2.5.1.2) */
/* Windows refuses Limit, Reservation or BandwidthLimit above this (the spec's <8>). */
#define VFS_RTIO_SQOS_RATE_MAX      1000000000ull

/* The normalized I/O size: an I/O of n bytes counts ceil(n / 8192) (4.1). */
#define VFS_RTIO_SQOS_BASE_IO_SIZE  8192u
/*
 * TimeToLive of a status: an initiator asks again after this. aiod.ini is
 * the policy and a reload applies to running connections within a second
 * (aiod(8)): the initiator's own pacing follows within the same second.
 */
#define VFS_RTIO_SQOS_TTL_MS        1000u

/* A decoded STORAGE_QOS_CONTROL_REQUEST; GUIDs as their 16 wire bytes. */
struct vfs_rtio_sqos_req {
	uint16_t version;
	uint32_t options;
	uint8_t flow_id[16];
	uint8_t policy_id[16];
	uint8_t initiator_id[16];
	uint64_t limit;		/* normalized IOPS the initiator asks as a maximum, 0 = none */
	uint64_t reservation;	/* normalized IOPS it asks as a minimum */
	uint16_t name_off, name_len;
	uint16_t node_off, node_len;
	uint64_t bandwidth_limit;	/* KiB/s (1.1 only, else 0) */
	size_t size;		/* the whole request as received (RequestSize) */
};

/*
 * What an open knows of its logical flow: the spec's Open.LogicalFlowID and
 * the flow's PolicyID, InitiatorID and requested values, kept per open (the
 * module's flow "table" is its opens).
 */
struct vfs_rtio_sqos_flow {
	bool associated;
	uint8_t flow_id[16];
	uint8_t policy_id[16];
	uint8_t initiator_id[16];
	uint64_t limit;		/* as the initiator asked (SET_POLICY, PROBE_POLICY) */
	uint64_t reservation;
	uint64_t bandwidth_limit;
};

/* The server's policy for an open, in the spec's units. */
struct vfs_rtio_sqos_policy {
	bool available;		/* false: aiod could not be asked (Status NotAvailable) */
	uint64_t max_iops;	/* MaximumIoRate: normalized IOPS, 0 = no limit */
	uint64_t min_iops;	/* MinimumIoRate: normalized IOPS reserved, 0 = none */
	uint64_t max_kibps;	/* MaximumBandwidth: KiB/s, 0 = no limit */
};

/* Why a request fails; the caller maps it to its NTSTATUS. */
enum vfs_rtio_sqos_result {
	VFS_RTIO_SQOS_OK = 0,
	VFS_RTIO_SQOS_INVALID_PARAMETER,	/* STATUS_INVALID_PARAMETER */
	VFS_RTIO_SQOS_REVISION_MISMATCH,	/* STATUS_REVISION_MISMATCH */
	VFS_RTIO_SQOS_NOT_FOUND,		/* STATUS_NOT_FOUND: no logical flow on the open */
};

/*
 * Decode len bytes at in (in may be NULL when len is 0): an unknown version
 * is REVISION_MISMATCH, a buffer shorter than its version's fixed part or
 * Options without a known flag INVALID_PARAMETER (3.2.5.1).
 */
enum vfs_rtio_sqos_result vfs_rtio_sqos_parse(const uint8_t *in, size_t len,
					      struct vfs_rtio_sqos_req *req);

/*
 * Do what req asks of the open's flow (3.2.5.1.1 to 3.2.5.1.4): join or
 * leave a logical flow, record a set or probed policy, check what a status
 * needs (max_out, the output buffer's size). On failure *flow is unchanged:
 * every check comes before the first change.
 */
enum vfs_rtio_sqos_result vfs_rtio_sqos_apply(struct vfs_rtio_sqos_flow *flow,
					      const struct vfs_rtio_sqos_req *req, size_t max_out);

/*
 * The STORAGE_QOS_CONTROL_RESPONSE for a status request that
 * vfs_rtio_sqos_apply() accepted, into out (VFS_RTIO_SQOS_RESP_V1_1_LEN
 * bytes): its length, the version's size, or max_out when that is smaller
 * (an initiator may give the spec's 80 bytes; the rest is BaseIoSize, which
 * it assumes to be 8192 anyway, and 1.1's MaximumBandwidth).
 */
size_t vfs_rtio_sqos_status(const struct vfs_rtio_sqos_flow *flow,
			    const struct vfs_rtio_sqos_req *req,
			    const struct vfs_rtio_sqos_policy *policy, size_t max_out, uint8_t *out);

/*
 * aiod's rule (bytes/s, requests/s; 0 = none) in the spec's units, rounded
 * so that an initiator keeping to them keeps to every configured value:
 *
 *   a byte limit L: an I/O of n bytes counts ceil(n / 8192) >= n / 8192
 *   normalized I/Os, so L / 8192 (rounded down, at least 1) normalized IOPS
 *   never let more than L bytes/s through. limit bounds reads and writes
 *   together; limit_read and limit_write bound the total only together
 *   (their sum); one of them alone leaves the total unbounded.
 *   limit_iops N: every I/O counts at least one normalized I/O, so N
 *   normalized IOPS never let more than N requests/s through.
 *   MaximumIoRate is the smaller of the two. MaximumBandwidth is L in KiB/s
 *   (rounded down, at least 1).
 *
 *   reserve R: a flow given R bytes/s completes at least R / 8192
 *   normalized IOPS, whatever its I/O sizes: MinimumIoRate, rounded down
 *   (a promise, so never up).
 *
 * weight and burst have no counterpart in MS-SQOS.
 */
void vfs_rtio_sqos_policy_from(uint64_t limit_Bps, uint64_t limit_read_Bps,
			       uint64_t limit_write_Bps, uint64_t limit_iops, uint64_t reserve_Bps,
			       struct vfs_rtio_sqos_policy *out);

#endif
