/*
 * The check macro of the aiod test programs that speak to aiod directly:
 * prints "ok   WHAT" or "FAIL WHAT (file:line)" and counts the failures.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CHECK_H
#define AIOD_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) \
	do { \
		if (cond) { \
			printf("ok   " __VA_ARGS__); \
			printf("\n"); \
		} else { \
			printf("FAIL " __VA_ARGS__); \
			printf("  (%s:%d)\n", __FILE__, __LINE__); \
			failures++; \
		} \
		fflush(stdout); \
	} while (0)

#endif
