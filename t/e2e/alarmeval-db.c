/* SPDX-License-Identifier: MIT */
/*
 * alarmeval-db - threshold rules evaluated in ingest rounds
 * (lib/domain/alarmeval.c through lib/domain/ingest.c's ingest_commit)
 * against a real PostgreSQL, no stack: a run of violating samples carried
 * across batches, one alarm per rule and device while it is open, the
 * event and delivery it makes, a run broken by a sample within the
 * limits, a band with a duration (for_seconds) and NaN, and a round that
 * fails after the evaluation (a trigger refuses the event) storing
 * neither its samples nor its alarm, then the same batch sent again
 * raising it.  t/e2e/alarms.t proves the same through the stack and
 * the webhooks.  Run by t/e2e/alarmeval-db.t with a migrated database of
 * its own in XMHUB_TEST_DATABASE_URL.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/xmbpenc.h"
#include "core/conf.h"
#include "domain/alarms.h"
#include "domain/ingest.h"
#include "tap.h"
#include "testdb.h"

static struct db *db;
static char fac[64], sid[64];
static uint16_t seq;

static const char *
one(const char *sql, const char *param)
{
	static char out[256];

	testdb_one(db, sql, param, out, sizeof(out));
	return out;
}

/* Runs sql (no parameters, no rows wanted); false when it fails. */
static bool
run(const char *sql)
{
	PGresult *res = NULL;
	bool good = db_query(db, &res, sql, 0, NULL) == DB_OK;

	PQclear(res);
	return good;
}

/* Commits one batch of n samples of stream index (f64) at ts_s[i]
 * seconds with values v[i], batch_seq s; the job's status. */
static enum ingest_status
send_at(uint16_t s, uint16_t index, const double *ts_s, const double *v, int n)
{
	uint8_t buf[4096];
	struct xmbp_enc e;
	struct ingest_job j = {0}, *jobs[1] = {&j};
	size_t len = 0;

	xmbp_enc_init(&e, buf, sizeof(buf));
	xmbp_enc_begin(&e, s, NULL);
	xmbp_enc_stream(&e, index, SAMPLE_F64);
	for (int i = 0; i < n; i++)
		xmbp_enc_f64(&e, (uint64_t)(ts_s[i] * 1e6), v[i]);
	if (xmbp_enc_finish(&e, &len) != XMBP_ENC_OK)
		return INGEST_ERROR;
	j.facility_id = fac;
	j.session_id = sid;
	j.batch = buf;
	j.len = len;
	ingest_commit(db, jobs, 1, false);
	return j.status;
}

/* The same, stream 0, one sample a second from the next timestamp. */
static enum ingest_status
send(const double *v, int n)
{
	static double t = 100;
	double ts[16];

	for (int i = 0; i < n; i++)
		ts[i] = t++;
	return send_at(seq++, 0, ts, v, n);
}

static const char *
count(const char *table)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	return one(sql, NULL);
}

static const char *
open_alarms(void)
{
	return one("SELECT count(*) || ' ' || coalesce(max(value)::text, '-') "
		   "FROM alarms WHERE state <> 'cleared' AND rule_id = "
		   "(SELECT id FROM alarm_rules WHERE name = $1)",
		   "hot");
}

static void
rule(const struct alarms_rule *r)
{
	PGresult *res = NULL;
	enum db_status st;

	is_int(alarms_rule_create(db, r, 1000, &res, &st), ALARMS_OK,
	       "rule %s created", r->name);
	PQclear(res);
}

static void
test_runs(void)
{
	const double a[] = {20, 31, 32}, b[] = {33}, c[] = {10, 40, 41},
		     d[] = {42};

	is_int(send(a, 3), INGEST_OK, "two samples over 30: stored");
	is_str(open_alarms(), "0 -", "no alarm: the rule needs three");
	is_str(one("SELECT run_samples FROM alarm_rule_state", NULL), "2",
	       "the run of two is kept");
	is_str(one("SELECT alarm_runs FROM ingest_sessions", NULL), "t",
	       "the session says a run goes on");
	is_int(send(b, 1), INGEST_OK, "a third in the next batch");
	is_str(open_alarms(), "1 33", "one alarm, with the value");
	is_str(count("alarm_events"), "1", "one event (the outbox row)");
	is_str(count("alarm_deliveries"), "1", "one delivery per endpoint");
	is_int(send(c, 3), INGEST_OK, "a sample within the limit, two over");
	is_str(open_alarms(), "1 33", "the run broke: nothing moved");
	is_int(send(d, 1), INGEST_OK, "a third over again");
	is_str(open_alarms(), "1 42", "the same alarm, its value moved");
	is_str(count("alarm_events"), "1", "no second event");
	is_int(send((const double[]){5}, 1), INGEST_OK, "a sample within");
	is_str(one("SELECT alarm_runs FROM ingest_sessions", NULL), "f",
	       "no run goes on: the next rounds read none");
}

static void
test_rollback(void)
{
	const double v[] = {50, 51, 52};
	char total[32];
	PGresult *res = NULL;
	enum db_status st;
	uint16_t s;

	testdb_one(db, "SELECT total_samples FROM ingest_sessions", NULL, total,
		   sizeof(total));
	is_int(alarms_move(db, NULL,
			   one("SELECT id FROM alarms WHERE state = 'active'",
			       NULL),
			   "cleared", NULL, &res, &st),
	       ALARMS_OK, "the alarm cleared");
	PQclear(res);
	ok(run("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql "
	       "AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$") &&
		   run("CREATE TRIGGER refuse BEFORE INSERT ON alarm_events "
		       "EXECUTE FUNCTION refuse()"),
	   "a trigger refuses events");
	s = seq++;
	ok(send_at(s, 0, (const double[]){200, 201, 202}, v, 3) != INGEST_OK,
	   "the round fails after the evaluation");
	is_str(open_alarms(), "0 -", "no alarm");
	is_str(count("alarm_events"), "1", "no event");
	is_str(one("SELECT total_samples FROM ingest_sessions", NULL), total,
	       "and no sample stored");
	ok(run("DROP TRIGGER refuse ON alarm_events"), "the trigger gone");
	is_int(send_at(s, 0, (const double[]){200, 201, 202}, v, 3), INGEST_OK,
	       "the same batch again: stored");
	is_str(open_alarms(), "1 52", "and its alarm raised");
	is_str(count("alarm_events"), "2", "with its event");
}

static void
test_band(void)
{
	const double ts[] = {300, 301, 302, 303, 304, 305};
	const double v[] = {120, 130, NAN, 140, 150, 160};
	const char *n;

	rule(&(struct alarms_rule){.facility_id = fac,
				   .name = "band",
				   .kind = "threshold",
				   .stream_name = "hum",
				   .op = "outside",
				   .lo = "0",
				   .hi = "100",
				   .for_seconds = "2"});
	is_int(send_at(seq++, 1, ts, v, 3), INGEST_OK,
	       "two samples outside the band, then NaN");
	n = one("SELECT count(*) FROM alarms a JOIN alarm_rules r ON "
		"r.id = a.rule_id WHERE r.name = $1",
		"band");
	is_str(n, "0", "NaN breaks the run: no alarm");
	is_int(send_at(seq++, 1, ts + 3, v + 3, 2), INGEST_OK,
	       "outside for one second");
	is_str(one("SELECT count(*) FROM alarms a JOIN alarm_rules r ON "
		   "r.id = a.rule_id WHERE r.name = $1",
		   "band"),
	       "0", "shorter than for_seconds: no alarm");
	is_int(send_at(seq++, 1, ts + 5, v + 5, 1), INGEST_OK,
	       "outside for two seconds");
	is_str(one("SELECT a.value FROM alarms a JOIN alarm_rules r ON "
		   "r.id = a.rule_id WHERE r.name = $1",
		   "band"),
	       "160", "the band's alarm");
}

/* A facility's rules stop at the cap it is given, and start again when
 * one is deleted. */
static void
test_cap(void)
{
	struct alarms_rule r = {
		.facility_id = fac, .kind = "silence", .silence_minutes = "5"};
	long long have = strtoll(count("alarm_rules"), NULL, 10);
	PGresult *res = NULL;
	enum db_status st;
	char id[UUID_LEN + 1], want[24];

	r.name = "cap 1";
	is_int(alarms_rule_create(db, &r, have + 1, &res, &st), ALARMS_OK,
	       "a rule under the cap");
	snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	r.name = "cap 2";
	is_int(alarms_rule_create(db, &r, have + 1, &res, &st), ALARMS_FULL,
	       "the next one at the cap: refused");
	is_int(PQntuples(res), 0, "and nothing inserted");
	PQclear(res);
	snprintf(want, sizeof(want), "%lld", have + 1);
	is_str(count("alarm_rules"), want,
	       "the facility has as many as the cap");
	is_int(alarms_rule_delete(db, fac, id, &st), ALARMS_OK, "one deleted");
	is_int(alarms_rule_create(db, &r, have + 1, &res, &st), ALARMS_OK,
	       "then the next one is taken");
	PQclear(res);
	/* The facility has one endpoint. */
	is_int(alarms_endpoint_create(db, fac, "hook 2", "http://127.0.0.1:9/",
				      "sixteen bytes at least", 2, &res, &st),
	       ALARMS_OK, "a second endpoint under a cap of 2");
	PQclear(res);
	is_int(alarms_endpoint_create(db, fac, "hook 3", "http://127.0.0.1:9/",
				      "sixteen bytes at least", 2, &res, &st),
	       ALARMS_FULL, "a third: refused");
	PQclear(res);
	is_str(count("webhook_endpoints"), "2", "two endpoints");
}

int
main(void)
{
	char detail[256];
	PGresult *res = NULL;
	enum db_status st;

	if ((db = testdb_start("alarmeval", fac, sizeof(fac))) == NULL)
		return 1;
	if (ingest_session_create(db, fac, 7, NULL, NULL,
				  "[{\"stream_index\":0,\"name\":\"temp\","
				  "\"value_type\":\"f64\"},"
				  "{\"stream_index\":1,\"name\":\"hum\","
				  "\"value_type\":\"f64\"}]",
				  sid, detail, sizeof(detail)) != INGEST_OK) {
		printf("Bail out! session: %s\n", detail);
		return 1;
	}
	rule(&(struct alarms_rule){.facility_id = fac,
				   .name = "hot",
				   .kind = "threshold",
				   .stream_name = "temp",
				   .op = "above",
				   .hi = "30",
				   .for_samples = "3"});
	is_int(alarms_endpoint_create(db, fac, "hook", "http://127.0.0.1:9/",
				      "sixteen bytes at least", 20, &res, &st),
	       ALARMS_OK, "an endpoint");
	PQclear(res);
	test_runs();
	test_rollback();
	test_band();
	test_cap();
	db_free(db);
	return tap_done();
}
