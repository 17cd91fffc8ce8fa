/* SPDX-License-Identifier: MIT */
/*
 * alarmsapi.h - alarm rules, webhook endpoints, alarms and deliveries of
 * a facility (/api/v1/alarm-rules, /api/v1/webhooks, /api/v1/alarms,
 * /api/v1/webhook-deliveries; doc/alarms.md).  The operations are
 * lib/domain/alarms'; these check the caller's facility (lib/web/scope:
 * a super_admin every facility, with ?facility_id= on lists and
 * facility_id in creation bodies; anyone else their own, 403 for another
 * facility's rows) and answer JSON.
 */
#ifndef XMHUB_ALARMSAPI_H
#define XMHUB_ALARMSAPI_H

#include "web/app.h"

#define ALARMSAPI_NAME_MAX 100	 /* bytes of a rule's or endpoint's name */
#define ALARMSAPI_URL_MAX 2048	 /* bytes of an endpoint's URL */
#define ALARMSAPI_SECRET_MAX 256 /* bytes of an endpoint's secret */

/* GET: the lists (rules and endpoints by name, alarms and deliveries
 * newest first, at most 1000). */
void alarmsapi_rules(struct app_ctx *ctx);
void alarmsapi_webhooks(struct app_ctx *ctx);
void alarmsapi_alarms(struct app_ctx *ctx);
void alarmsapi_deliveries(struct app_ctx *ctx);

/* POST /api/v1/alarm-rules: 201 AlarmRule; 400 when the fields do not
 * fit the kind; 409 when the name is taken. */
void alarmsapi_rule_post(struct app_ctx *ctx);

/* POST /api/v1/webhooks: {name, url (http, https or mailto:ADDRESS),
 * secret, facility_id?}: 201 Webhook (without its secret). */
void alarmsapi_webhook_post(struct app_ctx *ctx);

/* PATCH /api/v1/alarm-rules/{id}: the members of POST but kind and
 * facility_id (409 when they differ from the rule's), and enabled; 200
 * AlarmRule, 400 as POST. */
void alarmsapi_rule_patch(struct app_ctx *ctx);

/* PATCH /api/v1/webhooks/{id}: {name?, url?, secret?, enabled?}, checked
 * as POST's; 200 Webhook (without its secret). */
void alarmsapi_webhook_patch(struct app_ctx *ctx);

/* DELETE /api/v1/alarm-rules/{id}, /api/v1/webhooks/{id}: 204. */
void alarmsapi_rule_delete(struct app_ctx *ctx);
void alarmsapi_webhook_delete(struct app_ctx *ctx);

/* POST /api/v1/alarms/{id}/acknowledge, .../clear: 200 Alarm; 409 when
 * the alarm is not in a state to move from. */
void alarmsapi_ack(struct app_ctx *ctx);
void alarmsapi_clear(struct app_ctx *ctx);

#endif
