/* SPDX-License-Identifier: MIT */
/*
 * device.h - the device-side commands of xmhub (doc/sender.md): a
 * store-and-forward sender and a fleet simulator.  Both take the
 * arguments after their word and return the exit status (2 for usage).
 */
#ifndef XMHUB_CLI_DEVICE_H
#define XMHUB_CLI_DEVICE_H

/* xmhub send: CSV samples to a session, spooled until acknowledged. */
int send_main(int argc, char *argv[]);

/* xmhub sim: N simulated devices sending generated streams. */
int sim_main(int argc, char *argv[]);

#endif
