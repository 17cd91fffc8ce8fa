-- 021_alarms: alarm rules, alarms, webhook endpoints, the outbox of
-- alarm events and their deliveries (doc/alarms.md).
--
-- Rules are a facility's.  A threshold rule watches the streams named
-- stream_name of its device (device_id NULL: every device of the
-- facility) and is evaluated at ingest commit, in the batch's
-- transaction (lib/domain/alarmeval.c); the other kinds by the alarm
-- runner (jobs/alarm.c, lib/domain/alarmrun.c).
CREATE TABLE alarm_rules (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	name text NOT NULL CHECK (name <> ''),
	kind text NOT NULL CHECK (kind IN ('threshold', 'silence',
		'session_error', 'job_failed', 'storage')),
	severity text NOT NULL DEFAULT 'warning'
		CHECK (severity IN ('info', 'warning', 'critical')),
	device_id uuid,
	-- threshold: the stream's name; op above (value > hi), below
	-- (value < lo), outside (value < lo or value > hi)
	stream_name text,
	op text CHECK (op IN ('above', 'below', 'outside')),
	lo double precision,
	hi double precision,
	-- threshold: consecutive violating samples needed (at least 1) and
	-- the time the violation must last, in seconds (0: none)
	for_samples integer NOT NULL DEFAULT 1 CHECK (for_samples >= 1),
	for_seconds integer NOT NULL DEFAULT 0 CHECK (for_seconds >= 0),
	-- silence: minutes without data
	silence_minutes integer CHECK (silence_minutes >= 1),
	-- storage: percent of the facility's quota
	storage_percent integer CHECK (storage_percent BETWEEN 1 AND 100),
	enabled boolean NOT NULL DEFAULT true,
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (facility_id, name),
	UNIQUE (id, facility_id),
	FOREIGN KEY (device_id, facility_id) REFERENCES devices (id, facility_id)
		ON DELETE CASCADE,
	CHECK (kind <> 'threshold' OR (stream_name IS NOT NULL AND op IS NOT NULL
		AND (op = 'above' OR lo IS NOT NULL)
		AND (op = 'below' OR hi IS NOT NULL)
		AND (op <> 'outside' OR lo <= hi))),
	CHECK (kind <> 'silence' OR silence_minutes IS NOT NULL),
	CHECK (kind <> 'storage' OR storage_percent IS NOT NULL)
);
CREATE INDEX alarm_rules_threshold ON alarm_rules (facility_id)
	WHERE kind = 'threshold' AND enabled;

-- Ingest's cheap question, asked with each session's row lock: does this
-- facility have enabled threshold rules, and which version of them (so
-- that an ingest process keeps a session's rules until they change,
-- lib/domain/alarmeval.c).  Kept by the trigger below.
CREATE TABLE alarm_rule_sets (
	facility_id uuid PRIMARY KEY REFERENCES facilities ON DELETE CASCADE,
	rules integer NOT NULL DEFAULT 0, -- enabled threshold rules
	version bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION alarm_rule_sets_bump() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
	f uuid := CASE TG_OP WHEN 'DELETE' THEN OLD.facility_id
		ELSE NEW.facility_id END;
BEGIN
	-- A facility being deleted takes its row with it.
	IF EXISTS (SELECT 1 FROM facilities WHERE id = f) THEN
		INSERT INTO alarm_rule_sets (facility_id, rules, version)
		SELECT f, count(*), 1 FROM alarm_rules
		WHERE facility_id = f AND kind = 'threshold' AND enabled
		ON CONFLICT (facility_id) DO UPDATE SET
			rules = EXCLUDED.rules,
			version = alarm_rule_sets.version + 1;
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER alarm_rules_sets AFTER INSERT OR UPDATE OR DELETE
	ON alarm_rules FOR EACH ROW EXECUTE FUNCTION alarm_rule_sets_bump();

-- A threshold rule's run of violating samples on one stream, carried
-- from one ingest round to the next (the stream's session row lock
-- serializes its rounds).
CREATE TABLE alarm_rule_state (
	rule_id uuid NOT NULL REFERENCES alarm_rules ON DELETE CASCADE,
	stream_id uuid NOT NULL REFERENCES ingest_streams ON DELETE CASCADE,
	run_samples bigint NOT NULL DEFAULT 0,
	run_start_us numeric(20, 0),
	PRIMARY KEY (rule_id, stream_id)
);
-- A round reads the runs going on of its streams only, and only for a
-- session that has one (alarm_runs, read with the session's row lock).
CREATE INDEX alarm_rule_state_running ON alarm_rule_state (stream_id)
	WHERE run_samples > 0;
ALTER TABLE ingest_sessions
	ADD COLUMN alarm_runs boolean NOT NULL DEFAULT false,
	-- when the session went to error (the reaper), for session_error
	-- rules; set by the trigger below
	ADD COLUMN errored_at timestamptz;

-- Only statements that set status fire it (ingest's rounds do not).
CREATE FUNCTION ingest_sessions_errored() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	NEW.errored_at := now();
	RETURN NEW;
END
$$;
CREATE TRIGGER ingest_sessions_errored BEFORE UPDATE OF status
	ON ingest_sessions FOR EACH ROW
	WHEN (NEW.status = 'error' AND OLD.status <> 'error')
	EXECUTE FUNCTION ingest_sessions_errored();
-- The runner's questions: sessions ended in error and failed transcode
-- jobs of a facility since a time (lib/domain/alarmrun.c).
CREATE INDEX ingest_sessions_errored ON ingest_sessions
	(facility_id, errored_at) WHERE status = 'error';
CREATE INDEX transcode_jobs_failed ON transcode_jobs
	(facility_id, completed_at) WHERE status = 'failed';

-- Alarms: at most one not cleared per rule and device (alarms_open),
-- so a limit crossed again and again updates last_seen_at and
-- last_value instead of raising a storm.  device_id NULL: a rule about
-- the facility (storage).
CREATE TABLE alarms (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	rule_id uuid NOT NULL,
	device_id uuid,
	state text NOT NULL DEFAULT 'active'
		CHECK (state IN ('active', 'acknowledged', 'cleared')),
	severity text NOT NULL,
	message text NOT NULL,
	value double precision,
	first_seen_at timestamptz NOT NULL DEFAULT now(),
	last_seen_at timestamptz NOT NULL DEFAULT now(),
	acknowledged_at timestamptz,
	acknowledged_by uuid REFERENCES users ON DELETE SET NULL,
	cleared_at timestamptz,
	cleared_by uuid REFERENCES users ON DELETE SET NULL,
	FOREIGN KEY (rule_id, facility_id) REFERENCES alarm_rules (id, facility_id)
		ON DELETE CASCADE
);
CREATE UNIQUE INDEX alarms_open ON alarms
	(rule_id, coalesce(device_id, '00000000-0000-0000-0000-000000000000'))
	WHERE state <> 'cleared';
CREATE INDEX alarms_facility ON alarms (facility_id, first_seen_at);

-- The history: every change of an alarm, by whom.
CREATE TABLE alarm_history (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	alarm_id uuid NOT NULL REFERENCES alarms ON DELETE CASCADE,
	state text NOT NULL,
	user_id uuid REFERENCES users ON DELETE SET NULL,
	at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alarm_history_alarm ON alarm_history (alarm_id, id);

-- Where a facility's alarm events go: a POST of the event's JSON, signed
-- with secret (HMAC-SHA256, doc/alarms.md "Webhooks"), or an e-mail
-- through the local MTA (url mailto:ADDRESS, when the runner has one).
CREATE TABLE webhook_endpoints (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	name text NOT NULL CHECK (name <> ''),
	-- mailto: one plain address, nothing a mail header could be made of
	url text NOT NULL CHECK (url ~ '^https?://'
		OR url ~ '^mailto:[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+$'),
	secret text NOT NULL CHECK (length(secret) >= 16),
	enabled boolean NOT NULL DEFAULT true,
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (facility_id, name)
);

-- The outbox: one row per event (an alarm raised), written in the
-- transaction that raised it; payload is the body every endpoint gets.
CREATE TABLE alarm_events (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	alarm_id uuid NOT NULL REFERENCES alarms ON DELETE CASCADE,
	type text NOT NULL,
	payload jsonb NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);

-- One delivery per event and endpoint, made with the event.  The runner
-- claims due ones (FOR UPDATE SKIP LOCKED) and holds the row while it
-- posts: a runner that dies leaves it pending.  Each failure moves
-- next_at on (exponential backoff); after the runner's most attempts
-- it is dead (the dead-letter state), kept for the console.
CREATE TABLE alarm_deliveries (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	event_id uuid NOT NULL REFERENCES alarm_events ON DELETE CASCADE,
	endpoint_id uuid NOT NULL REFERENCES webhook_endpoints ON DELETE CASCADE,
	state text NOT NULL DEFAULT 'pending'
		CHECK (state IN ('pending', 'delivered', 'dead')),
	attempts integer NOT NULL DEFAULT 0,
	next_at timestamptz NOT NULL DEFAULT now(),
	last_status integer,
	last_error text,
	delivered_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (event_id, endpoint_id)
);
CREATE INDEX alarm_deliveries_due ON alarm_deliveries (next_at)
	WHERE state = 'pending';

-- Raises the alarm of rule r on device d (NULL: the facility) with
-- value v and message m, or, while one is open, moves its last_seen_at
-- and value; a new alarm gets its history row, its event and one
-- delivery per enabled endpoint, and wakes the runner (NOTIFY
-- xmhub_alarm).  Returns the alarm's id and whether it is new.  The one
-- place alarms are raised: the ingest evaluation and the runner call it.
CREATE FUNCTION alarm_raise(r uuid, d uuid, v double precision, m text,
	OUT alarm uuid, OUT raised boolean)
LANGUAGE plpgsql AS $$
DECLARE
	rule alarm_rules;
	ev uuid;
BEGIN
	SELECT * INTO rule FROM alarm_rules WHERE id = r;
	-- Deleted since the caller read it: nothing to raise.
	IF NOT FOUND THEN
		raised := false;
		RETURN;
	END IF;
	INSERT INTO alarms (facility_id, rule_id, device_id, severity,
		message, value)
	VALUES (rule.facility_id, r, d, rule.severity, m, v)
	ON CONFLICT (rule_id, coalesce(device_id,
		'00000000-0000-0000-0000-000000000000'))
		WHERE state <> 'cleared'
	DO UPDATE SET last_seen_at = now(), value = EXCLUDED.value
	RETURNING id, xmax = 0 INTO alarm, raised;
	IF NOT raised THEN
		RETURN;
	END IF;
	INSERT INTO alarm_history (alarm_id, state) VALUES (alarm, 'active');
	ev := gen_random_uuid();
	INSERT INTO alarm_events (id, facility_id, alarm_id, type, payload)
	SELECT ev, rule.facility_id, alarm, 'alarm.raised',
		jsonb_build_object('id', ev, 'type', 'alarm.raised', 'alarm',
			jsonb_build_object('id', a.id, 'facility_id',
				a.facility_id, 'rule_id', a.rule_id,
				'rule_name', rule.name, 'kind', rule.kind,
				'device_id', a.device_id, 'state', a.state,
				'severity', a.severity, 'message', a.message,
				'value', a.value, 'first_seen_at',
				a.first_seen_at))
	FROM alarms a WHERE a.id = alarm;
	INSERT INTO alarm_deliveries (event_id, endpoint_id)
	SELECT ev, w.id FROM webhook_endpoints w
	WHERE w.facility_id = rule.facility_id AND w.enabled;
	PERFORM pg_notify('xmhub_alarm', '');
END
$$;
