/* SPDX-License-Identifier: MIT */
/*
 * slots.h - per-host slots: at most LIMIT holders at once of one kind of
 * work for one owner (a facility, an API key), across every process of
 * the host (doc/security.md "Fair shares").
 *
 * A slot is a file DIR/KIND/OWNER.N (N from 0 to LIMIT - 1) whose
 * exclusive flock() its holder keeps: slots_take() tries them in turn
 * without waiting and keeps the first it locks.  The lock belongs to the
 * open file, so it is released by slots_release(), by the holder's exit
 * or by its death (kill -9 included): no state to clean up, no job that
 * frees forgotten slots.  The descriptor is close-on-exec, so children
 * (the spectrogram's, ffmpeg) never hold one.  Two takes in one process
 * (threads) are two holders, as in two processes.
 *
 * The files stay (empty, mode 0600): their number is bounded by the
 * owners times LIMIT.  KIND's directory is made at the first take (mode
 * 0700, DIR's parent must exist).  Why per host and not per platform: what
 * the slots protect is the host's own FastCGI pools and websocketd's
 * forks, which another host's requests never take.
 */
#ifndef XMHUB_SLOTS_H
#define XMHUB_SLOTS_H

#include <stdbool.h>
#include <stddef.h>

#define SLOTS_NAME_MAX 64 /* bytes of a KIND or OWNER */

/* A slot held (fd >= 0) or not; SLOTS_NONE before the first take. */
struct slot {
	int fd;
};
#define SLOTS_NONE                                                             \
	{                                                                      \
		-1                                                             \
	}

enum slots_status {
	SLOTS_TAKEN, /* *s holds a slot (or LIMIT is 0: no limit, fd -1) */
	SLOTS_BUSY,  /* LIMIT holders already */
	SLOTS_ERROR  /* a file could not be made or locked: detail says */
};

/*
 * Takes one of owner's LIMIT slots of kind under dir into *s, which must
 * hold none.  kind and owner are letters, digits, '-' and '_' (a UUID),
 * at most SLOTS_NAME_MAX bytes; anything else is SLOTS_ERROR.  limit 0
 * means no limit: SLOTS_TAKEN with nothing held.  detail (len bytes) gets
 * the reason of SLOTS_ERROR.
 */
enum slots_status slots_take(const char *dir, const char *kind,
			     const char *owner, int limit, struct slot *s,
			     char *detail, size_t len);

/* Gives *s's slot back (nothing when it holds none); *s holds none after. */
void slots_release(struct slot *s);

#endif
