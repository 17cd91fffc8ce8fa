-- 016_scale: state shared by the web hosts of one installation
-- (doc/scaling.md).

-- The account change counter.  Every change an authn check reads (the
-- triggers of sql/008) bumps it in its own transaction, so it is visible
-- exactly when the change is.  A process of a host started with
-- XMHUB_MULTI_HOST=1 reads it before each check and drops its cache when
-- it moved: a change committed through another host is seen by the next
-- request here, also before its notification has arrived.
CREATE TABLE authn_epoch (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	n bigint NOT NULL
);
INSERT INTO authn_epoch (n) VALUES (0);

CREATE OR REPLACE FUNCTION authn_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE authn_epoch SET n = n + 1;
	PERFORM pg_notify('xmhub_authn', TG_TABLE_NAME);
	RETURN NULL;
END
$$;

-- The face service's rate limits and admin lockouts when
-- FACE_API_LIMITS=postgres (lib/face/service/faceapi_limits.c): one row
-- per key ("rate detect IP", "login IP"), a and b as in the file engine,
-- a row whose expires_us has passed is as good as absent.  Each call
-- deletes up to 8 expired rows, so the table stays as small as the live
-- entries without a cleanup job.
CREATE TABLE face_limits (
	key text PRIMARY KEY,
	a bigint NOT NULL DEFAULT 0,
	b bigint NOT NULL DEFAULT 0,
	expires_us bigint NOT NULL DEFAULT 0
);
CREATE INDEX face_limits_expires ON face_limits (expires_us);

-- Deletes up to 8 expired rows, then returns key's row locked (made
-- when missing; an expired one counts as new).
CREATE FUNCTION face_limits_take(k text, now_us bigint,
	OUT a bigint, OUT b bigint)
LANGUAGE plpgsql AS $$
DECLARE
	e bigint;
BEGIN
	DELETE FROM face_limits WHERE key IN (SELECT f.key FROM face_limits f
		WHERE f.expires_us <= now_us AND f.key <> k
		LIMIT 8 FOR UPDATE SKIP LOCKED);
	INSERT INTO face_limits AS f (key) VALUES (k)
	ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key
	RETURNING f.a, f.b, f.expires_us INTO a, b, e;
	IF e <= now_us THEN
		a := 0;
		b := 0;
	END IF;
END
$$;

-- GCRA (t = period/limit, tau = period - t) as faceapi_limits.c's
-- rate_fn: 0 when the request is allowed, else the microseconds until
-- the next one is.
CREATE FUNCTION face_rate_allow(k text, now_us bigint, t bigint, tau bigint,
	period bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	cur bigint;
	tat bigint;
	wait bigint := 0;
BEGIN
	SELECT l.a INTO cur FROM face_limits_take(k, now_us) l;
	tat := least(greatest(cur, now_us), now_us + period);
	IF tat - now_us > tau THEN
		wait := tat - tau - now_us;
	ELSE
		tat := tat + t;
	END IF;
	UPDATE face_limits SET a = tat, expires_us = tat WHERE key = k;
	RETURN wait;
END
$$;

-- The admin lockout as faceapi_limits.c's lockout_fn: mode 0 looks,
-- 1 records a failure, 2 a success; returns until when key is locked
-- out (0 or a past time: it is not).
CREATE FUNCTION face_lockout(k text, mode integer, now_us bigint,
	window_us bigint, failures integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	fails bigint;
	until bigint;
BEGIN
	IF mode = 0 THEN
		SELECT l.b INTO until FROM face_limits l
		WHERE l.key = k AND l.expires_us > now_us;
		RETURN coalesce(until, 0);
	ELSIF mode = 2 THEN
		DELETE FROM face_limits WHERE key = k;
		RETURN 0;
	END IF;
	SELECT l.a, l.b INTO fails, until FROM face_limits_take(k, now_us) l;
	IF until <= now_us THEN
		until := 0;
		fails := fails + 1;
		IF fails >= failures THEN
			fails := 0;
			until := now_us + window_us;
		END IF;
		UPDATE face_limits SET a = fails, b = until,
			expires_us = CASE WHEN until > 0 THEN until
				ELSE now_us + window_us END
		WHERE key = k;
	END IF;
	RETURN until;
END
$$;
