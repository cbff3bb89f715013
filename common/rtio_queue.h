/*
 * A session's data queues, whichever transport carries them.
 *
 * Requests and replies go over a pair of POSIX message queues. Without
 * CAP_SYS_RESOURCE (aiod started outside systemd, or in a container), the
 * kernel allows few of them: fs.mqueue.queues_max (256) for the whole
 * machine and RLIMIT_MSGQUEUE (800 KiB) for aiod's user, about a hundred
 * sessions. Beyond that aiod hands the session a SOCK_SEQPACKET socket pair
 * instead: the same messages, boundaries and non-blocking semantics, limited
 * only by descriptors. Both ends find out which one they have with
 * rtio_queue_is_socket() on the descriptor, so the wire protocol and the
 * CONNECT exchange are the same for both.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef RTIO_QUEUE_H
#define RTIO_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether fd is a socket (a socket-pair session) rather than a message queue. */
bool rtio_queue_is_socket(int fd);

/*
 * Send one message without blocking. 0, or -1 with errno as mq_send sets it
 * (EAGAIN when full; a socket whose peer is gone gives EPIPE, never SIGPIPE).
 */
int rtio_queue_send(int fd, bool sock, const void *msg, size_t len);

/*
 * Receive one message without blocking into buf (len bytes). Its length, or
 * -1 with errno: EAGAIN when empty, EMSGSIZE for a message longer than len
 * (a socket would truncate it silently), ECONNRESET when a socket's peer
 * closed its end.
 */
ssize_t rtio_queue_recv(int fd, bool sock, void *buf, size_t len);

#endif
