/*
 * aiodctl doctor: what makes or breaks a deployment, one line per check
 * (OK / WARN / FAIL) and, for anything not OK, one line on what to fix.
 * Exit 0 when nothing failed (warnings are advice), 1 when a check failed,
 * 2 for a bad command line. The checks are in aiodctl_doctor_*.c.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aiodctl_doctor.h"
#include "rtio_version.h"

#define DOCTOR_DEFAULT_CONFIG "/etc/aiod/aiod.ini"

void aiodctl_doctor_report(struct aiodctl_doctor *d, enum aiodctl_doctor_level level,
			   const char *check, const char *fix, const char *fmt, ...)
{
	static const char *const names[] = { "OK  ", "WARN", "FAIL" };
	va_list ap;

	printf("%s %s: ", names[level], check);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (level != DOCTOR_OK && fix != NULL) {
		printf("     fix: %s\n", fix);
	}
	d->warns += level == DOCTOR_WARN;
	d->fails += level == DOCTOR_FAIL;
}

/* The child's side of aiodctl_doctor_capture: stdout into the pipe, stderr away. */
static void capture_child(char *const argv[], int wfd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (dup2(wfd, STDOUT_FILENO) < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0 ||
	    dup2(null, STDIN_FILENO) < 0) {
		_exit(127);
	}
	execvp(argv[0], argv);
	_exit(127);
}

static size_t read_all(int fd, char *out, size_t outlen)
{
	size_t n = 0;
	char sink[4096];
	ssize_t r;

	/* Drain past outlen too: a child blocked on a full pipe never exits. */
	for (;;) {
		bool room = n + 1 < outlen;

		r = read(fd, room ? out + n : sink, room ? outlen - 1 - n : sizeof(sink));
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			break;
		}
		n += room ? (size_t)r : 0;
	}
	out[n] = '\0';
	return n;
}

int aiodctl_doctor_capture(char *const argv[], char *out, size_t outlen)
{
	int fds[2], status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(fds[0]);
		close(fds[1]);
		return -err;
	}
	if (pid == 0) {
		capture_child(argv, fds[1]);
	}
	close(fds[1]);
	read_all(fds[0], out, outlen);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			return -errno;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		return -ENOENT;	/* most likely not installed */
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

/* aiod reachable: a monitor connection, STATS, and INFO for its version and pid. */
static void doctor_aiod(struct aiodctl_doctor *d)
{
	int ret;

	/* Not aiodctl_client(): its message on stderr would say this line twice. */
	ret = rtio_client_monitor_connect(NULL, d->ctl->sock, d->ctl->timeout_ms, &d->ctl->c);
	if (ret < 0) {
		d->ctl->c = NULL;
		aiodctl_doctor_report(d, DOCTOR_FAIL, "aiod", "systemctl start aiod; journalctl -u aiod",
				      "no aiod at %s: %s (every rtio share does its I/O locally)",
				      d->ctl->sock, strerror(-ret));
		return;
	}
	ret = rtio_client_stats(d->ctl->c, &d->stats);
	if (ret == 0) {
		ret = rtio_client_info(d->ctl->c, 0, &d->info);
	}
	if (ret < 0) {
		aiodctl_doctor_report(d, DOCTOR_FAIL, "aiod", "restart aiod (systemctl restart aiod)",
				      "aiod at %s does not answer STATS/INFO: %s", d->ctl->sock,
				      strerror(-ret));
		return;
	}
	d->have_aiod = true;
	d->info.version[sizeof(d->info.version) - 1] = '\0';
	if (strcmp(d->info.version, RTIO_VERSION) != 0) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "aiod",
				      "restart aiod after an upgrade (systemctl restart aiod)",
				      "aiod %s (pid %u) at %s, but this aiodctl is %s", d->info.version,
				      d->info.pid, d->ctl->sock, RTIO_VERSION);
		return;
	}
	aiodctl_doctor_report(d, DOCTOR_OK, "aiod", NULL, "aiod %s (pid %u) answers at %s",
			      d->info.version, d->info.pid, d->ctl->sock);
}

static int doctor_options(struct aiodctl_doctor *d, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "module", required_argument, NULL, 'm' },
		{ "smbconf", required_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 0;	/* GNU getopt: start over on the subcommand's arguments */
	while ((opt = getopt_long(argc, argv, "+c:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			d->module = optarg;
			break;
		case 'S':
			d->smbconf = optarg;
			break;
		case 'c':
			d->config = optarg;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int aiodctl_cmd_doctor(struct aiodctl *ctl, int argc, char **argv)
{
	struct aiodctl_doctor d = { .ctl = ctl, .config = DOCTOR_DEFAULT_CONFIG };

	if (doctor_options(&d, argc, argv) != 0) {
		return aiodctl_usage_of(argv[0]);
	}
	aiodctl_doctor_module(&d);
	doctor_aiod(&d);
	aiodctl_doctor_shares(&d);
	aiodctl_doctor_hugepages(&d);
	aiodctl_doctor_mqueue(&d);
	aiodctl_doctor_memlock(&d);
	aiodctl_doctor_profile(&d);
	aiodctl_doctor_admission(&d);
	printf("doctor: %u failed, %u warnings\n", d.fails, d.warns);
	if (fflush(stdout) != 0) {
		return AIODCTL_EXIT_FAIL;
	}
	return d.fails > 0 ? AIODCTL_EXIT_FAIL : AIODCTL_EXIT_OK;
}
