/* SPDX-License-Identifier: MIT */
/*
 * alarm.h - the alarm commands of xmhub (doc/alarms.md): rules, webhook
 * endpoints, the lists and an alarm's acknowledgement and clearing.
 * Each takes the arguments after its words and returns the exit status
 * (2 for usage, after its usage_error; 1 after a message).
 */
#ifndef XMHUB_CLI_ALARM_H
#define XMHUB_CLI_ALARM_H

/* The usage lines' arguments, for the command table. */
#define ALARM_RULE_ARGS                                                        \
	"--facility ID --name N --kind K [--severity S] [--device ID] "        \
	"[--stream S] [--op above|below|outside] [--lo X] [--hi X] "           \
	"[--for-samples N] [--for-seconds N] [--silence-minutes N] "           \
	"[--storage-percent N]"
#define ALARM_RULE_UPDATE_ARGS                                                 \
	"ID [--name N] [--enable|--disable] [--severity S] [--device ID] "     \
	"[--stream S] [--op above|below|outside] [--lo X] [--hi X] "           \
	"[--for-samples N] [--for-seconds N] [--silence-minutes N] "           \
	"[--storage-percent N]"
#define ALARM_WEBHOOK_ARGS "--facility ID --name N --url URL --secret S"
#define ALARM_WEBHOOK_UPDATE_ARGS                                              \
	"ID [--name N] [--enable|--disable] [--url URL] [--secret S]"
#define ALARM_LIST_ARGS "[--facility ID]"

/* xmhub alarm rule-create: prints the rule as JSON. */
int alarm_rule_create(int argc, char *argv[]);

/* xmhub alarm rule-update ID: the options given change the rule (an
 * empty value: none, e.g. --device '' for every device); prints it as
 * JSON. */
int alarm_rule_update(int argc, char *argv[]);

/* xmhub alarm webhook-update ID: the same for an endpoint. */
int alarm_webhook_update(int argc, char *argv[]);

/* xmhub alarm webhook-create: prints the endpoint as JSON. */
int alarm_webhook_create(int argc, char *argv[]);

/* xmhub alarm rules|webhooks|list|deliveries: a JSON array. */
int alarm_rules(int argc, char *argv[]);
int alarm_webhooks(int argc, char *argv[]);
int alarm_list(int argc, char *argv[]);
int alarm_deliveries(int argc, char *argv[]);

/* xmhub alarm ack|clear ID: prints the alarm as JSON. */
int alarm_ack(int argc, char *argv[]);
int alarm_clear(int argc, char *argv[]);

#endif
