// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_exec [-u UID] [-R] [-l MS] -- PROG [ARG]...
 *
 * A workload that ends in an exec: it drops to UID (setresuid, when
 * given), switches address-space randomisation off (-R, as setarch -R),
 * makes system calls for MS milliseconds (default 0) through
 * before_exec(), and then execs PROG.  The tests attach to its
 * sys_enter_execve: the sample there is taken in the old image, and its
 * user stack must never be the new image's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/personality.h>

#include "wl_common.h"

static NOINLINE void before_exec(long ms)
{
	unsigned long long end = wl_now_ms() + ms;

	while (wl_now_ms() < end)
		wl_sys3(SYS_getppid, 0, 0, 0);
}

int main(int argc, char **argv)
{
	long uid = -1, ms = 0;
	int opt, aslr_off = 0;

	while ((opt = getopt(argc, argv, "u:Rl:")) != -1) {
		switch (opt) {
		case 'u':
			uid = strtol(optarg, NULL, 0);
			break;
		case 'R':
			aslr_off = 1;
			break;
		case 'l':
			ms = strtol(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	if (uid >= 0 && setresuid(uid, uid, uid)) {
		perror("wl_exec: setresuid");
		return 1;
	}
	if (aslr_off && personality(ADDR_NO_RANDOMIZE) == -1) {
		perror("wl_exec: personality");
		return 1;
	}
	before_exec(ms);
	execv(argv[optind], argv + optind);
	perror("wl_exec: execv");
	return 127;
usage:
	fprintf(stderr, "usage: wl_exec [-u UID] [-R] [-l MS] -- PROG [ARG]...\n");
	return 2;
}
