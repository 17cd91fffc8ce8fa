/* SPDX-License-Identifier: MIT */
/*
 * hex.h - hexadecimal digits, for the parsers that decode them
 * (percent-encoding in query strings and S3 listings, escapes).
 */
#ifndef XMHUB_HEX_H
#define XMHUB_HEX_H

/* The value (0 to 15) of the hex digit c, either case; -1 when c is not
 * one. */
int hex_value(char c);

#endif
