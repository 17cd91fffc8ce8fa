/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - what the programs' seccomp filters and rlimits need to
 * know of the build: the architecture a filter checks calls against,
 * and whether AddressSanitizer runs (its shadow memory is larger than
 * any address-space limit).  Used by lib/core/child.c (the decoders'
 * trampoline) and the face service's worker.
 */
#ifndef XMHUB_SANDBOX_H
#define XMHUB_SANDBOX_H

#include <linux/audit.h>

/* The AUDIT_ARCH_ of this build; undefined where no filter is written
 * for it (a sandbox then refuses to start). */
#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

/* Defined in a build with AddressSanitizer (gcc or clang). */
#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_UNDER_ASAN 1
#endif
#endif

#endif
