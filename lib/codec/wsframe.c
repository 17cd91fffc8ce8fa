/* SPDX-License-Identifier: MIT */
/*
 * wsframe.c - WebSocket frame headers and walks (see wsframe.h).
 */
#include "config.h"

#include <string.h>

#include "codec/be.h"
#include "codec/wsframe.h"

#define LEN_MAX 0x7fffffffffffffffULL

enum wsframe_status
wsframe_head(const uint8_t *p, size_t n, struct wsframe_head *h)
{
	size_t need = 2;
	uint8_t len7;

	if (n < 2)
		return WSFRAME_MORE;
	memset(h, 0, sizeof(*h));
	h->fin = (p[0] & 0x80) != 0;
	h->rsv = (uint8_t)((p[0] >> 4) & 0x7);
	h->opcode = p[0] & 0x0f;
	h->masked = (p[1] & 0x80) != 0;
	len7 = p[1] & 0x7f;
	if (len7 == 126)
		need += 2;
	else if (len7 == 127)
		need += 8;
	if (h->masked)
		need += 4;
	if (n < need)
		return WSFRAME_MORE;
	if (len7 == 126)
		h->len = be16_get(p + 2);
	else if (len7 == 127)
		h->len = be64_get(p + 2);
	else
		h->len = len7;
	/* RFC 6455: "the most significant bit MUST be 0". */
	if (h->len > LEN_MAX)
		return WSFRAME_BAD;
	if (h->masked)
		memcpy(h->mask, p + need - 4, 4);
	h->head_len = need;
	return WSFRAME_HEAD;
}

size_t
wsframe_put(uint8_t *out, struct wsframe_head *h)
{
	uint64_t len = h->len > LEN_MAX ? LEN_MAX : h->len;
	size_t n = 2;

	out[0] = (uint8_t)((h->fin ? 0x80 : 0) | (h->rsv & 0x7) << 4 |
			   (h->opcode & 0x0f));
	out[1] = h->masked ? 0x80 : 0;
	if (len < 126) {
		out[1] |= (uint8_t)len;
	} else if (len <= 0xffff) {
		out[1] |= 126;
		be16_put(out + 2, (uint16_t)len);
		n += 2;
	} else {
		out[1] |= 127;
		be64_put(out + 2, len);
		n += 8;
	}
	if (h->masked) {
		memcpy(out + n, h->mask, 4);
		n += 4;
	}
	h->head_len = n;
	return n;
}

size_t
wsframe_close(uint8_t *out, uint16_t code, const char *reason)
{
	size_t r = strlen(reason);

	if (r > WSFRAME_CONTROL_MAX - 2)
		r = WSFRAME_CONTROL_MAX - 2;
	out[0] = 0x80 | WSFRAME_CLOSE;
	out[1] = (uint8_t)(2 + r);
	be16_put(out + 2, code);
	memcpy(out + 4, reason, r);
	return 4 + r;
}

/* The rules of RFC 6455 a client's header must keep; NULL when it
 * does. */
static const char *
client_fault(const struct wsframe_walk *w, const struct wsframe_head *h)
{
	bool control = (h->opcode & 0x8) != 0;

	if (!h->masked)
		return "a client frame must be masked";
	if (h->rsv != 0)
		return "RSV bits set, but no extension was negotiated";
	if (h->opcode > WSFRAME_BINARY && h->opcode != WSFRAME_CLOSE &&
	    h->opcode != WSFRAME_PING && h->opcode != WSFRAME_PONG)
		return "a reserved opcode";
	if (control && !h->fin)
		return "a fragmented control frame";
	if (control && h->len > WSFRAME_CONTROL_MAX)
		return "a control frame longer than 125 bytes";
	if (h->opcode == WSFRAME_CONT && !w->in_msg)
		return "a continuation frame outside a message";
	if ((h->opcode == WSFRAME_TEXT || h->opcode == WSFRAME_BINARY) &&
	    w->in_msg)
		return "a new message inside a fragmented one";
	return NULL;
}

size_t
wsframe_step(struct wsframe_walk *w, const uint8_t *p, size_t n)
{
	struct wsframe_head h;
	bool data;

	if (w->verdict != WSFRAME_PASS || n == 0)
		return 0;
	if (w->left > 0) {
		size_t k = w->left < n ? (size_t)w->left : n;

		w->left -= k;
		return k;
	}
	switch (wsframe_head(p, n, &h)) {
	case WSFRAME_MORE:
		return 0;
	case WSFRAME_BAD:
		w->verdict = WSFRAME_PROTOCOL;
		w->why = "a 64-bit length with its top bit set";
		return 0;
	case WSFRAME_HEAD:
		break;
	}
	w->head = h;
	data = (h.opcode & 0x8) == 0;
	if (w->client) {
		if ((w->why = client_fault(w, &h)) != NULL) {
			w->verdict = WSFRAME_PROTOCOL;
			return 0;
		}
		/* w->msg <= w->max holds: no overflow. */
		if (data && h.len > w->max - (w->in_msg ? w->msg : 0)) {
			w->verdict = WSFRAME_TOO_BIG;
			w->why = "the message is too big";
			return 0;
		}
	}
	if (data) {
		uint64_t before = w->in_msg ? w->msg : 0;

		/* Saturated: a server's messages are not limited. */
		w->msg = h.len > UINT64_MAX - before ? UINT64_MAX
						     : before + h.len;
		w->in_msg = !h.fin;
	} else if (h.opcode == WSFRAME_CLOSE) {
		w->closed = true;
	}
	w->left = h.len;
	return h.head_len;
}
