-- 009_login_throttle: failed logins counted per e-mail and address, so
-- that guessing passwords gets slow (doc/auth.md "Login throttling";
-- the rules and their numbers are lib/domain/throttle.h's, passed in by
-- the caller).
--
-- One row per counter:
--   (email, addr)  one e-mail from one address    ("pair")
--   (email, '')    one e-mail from every address  ("account")
--   ('', addr)     every e-mail from one address  ("address")
-- email is the SHA-256 (hex) of the e-mail as typed, lower-cased as the
-- login lookup does, whether or not a user has it; addr is the client's
-- address as lib/domain/throttle.c keys it (an IPv6 address by its /64).
--
-- A login attempt is one call of login_throttle_attempt().  It first
-- reads its three rows without locking: a refused attempt (the flood an
-- attacker sends once throttled) writes nothing.  Otherwise it creates
-- and locks them (always in key order, so two attempts cannot deadlock),
-- decides again, and counts the attempt as a failure before the password
-- is checked: concurrent attempts cannot all slip through one opening.
-- A successful login takes it back with login_throttle_success().  Each
-- counting attempt also deletes up to 8 rows that have nothing left to
-- remember (expires_at passed): the table stays as small as the live
-- counters without a cleanup job.  expires_at changes at most once a
-- window (or a day), so the updates of an attempt stay HOT.
--
-- Both writing functions commit asynchronously (synchronous_commit off
-- for their transaction): a crash of the server may forget the last
-- fraction of a second of counting, and a login costs no WAL flush more.
CREATE TABLE login_throttle (
	email text NOT NULL,
	addr text NOT NULL,
	failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
	since timestamptz,   -- first failure of the window
	last_at timestamptz, -- last failure: waits count from it
	ok_at timestamptz,   -- pairs: last successful login from there
	expires_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (email, addr),
	CHECK (email <> '' OR addr <> '')
) WITH (fillfactor = 70);
CREATE INDEX login_throttle_expires_at ON login_throttle (expires_at);

-- The key of an e-mail: lower() is the one the login lookup uses.
CREATE FUNCTION login_throttle_key(p_email text) RETURNS text
LANGUAGE sql STABLE STRICT AS $$
	SELECT encode(sha256(convert_to(lower(p_email), 'UTF8')), 'hex')
$$;

-- Whole seconds left to wait on counter t at time p_at (0: none): once
-- p_free failures are counted in the window (p_win seconds from the
-- first), 2^(failures - p_free) seconds from the last, at most p_cap.
CREATE FUNCTION login_throttle_wait(t login_throttle, p_free integer,
	p_cap integer, p_win integer, p_at timestamptz) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN t.failures IS NULL OR t.failures < p_free
		     OR t.since <= p_at - make_interval(secs => p_win) THEN 0
		ELSE greatest(0, ceil(extract(epoch FROM t.last_at - p_at)
			+ least(p_cap, 2 ^ least(t.failures - p_free, 30))))::integer
	END
$$;

-- One login attempt of p_email from p_addr.  wait > 0: refused, try
-- again in wait seconds (rule says which counter); nothing is counted.
-- wait = 0: go on and check the password; the attempt is counted as a
-- failure on all three counters.  The account rule does not apply to an
-- address that logged this e-mail in within p_known seconds.
CREATE FUNCTION login_throttle_attempt(p_email text, p_addr text,
	p_pair_free integer, p_pair_cap integer,
	p_addr_free integer, p_addr_cap integer,
	p_acct_free integer, p_acct_cap integer,
	p_win integer, p_known integer,
	OUT wait integer, OUT rule text, OUT email_key text)
LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r login_throttle;
	v_pair login_throttle;
	v_acct login_throttle;
	v_addr login_throttle;
	v_at timestamptz;
	w integer;
BEGIN
	email_key := login_throttle_key(p_email);
	FOR pass IN 1 .. 2 LOOP
		v_pair := NULL;
		v_acct := NULL;
		v_addr := NULL;
		IF pass = 1 THEN
			-- What is committed; a refusal ends here.
			OPEN c FOR SELECT * FROM login_throttle t
				WHERE (t.email, t.addr) IN ((email_key, p_addr),
					(email_key, ''), ('', p_addr));
		ELSE
			PERFORM set_config('synchronous_commit', 'off', true);
			INSERT INTO login_throttle (email, addr)
			SELECT k.e, k.a FROM (VALUES (email_key, p_addr),
				(email_key, ''), ('', p_addr)) AS k (e, a)
			ORDER BY k.e, k.a
			ON CONFLICT DO NOTHING;
			OPEN c FOR SELECT * FROM login_throttle t
				WHERE (t.email, t.addr) IN ((email_key, p_addr),
					(email_key, ''), ('', p_addr))
				ORDER BY t.email, t.addr FOR UPDATE;
		END IF;
		LOOP
			FETCH c INTO r;
			EXIT WHEN NOT FOUND;
			IF r.email = '' THEN
				v_addr := r;
			ELSIF r.addr = '' THEN
				v_acct := r;
			ELSE
				v_pair := r;
			END IF;
		END LOOP;
		CLOSE c;
		v_at := clock_timestamp();
		wait := login_throttle_wait(v_pair, p_pair_free, p_pair_cap,
			p_win, v_at);
		rule := 'pair';
		w := login_throttle_wait(v_addr, p_addr_free, p_addr_cap, p_win,
			v_at);
		IF w > wait THEN
			wait := w;
			rule := 'address';
		END IF;
		IF v_pair.ok_at IS NULL
		   OR v_pair.ok_at <= v_at - make_interval(secs => p_known) THEN
			w := login_throttle_wait(v_acct, p_acct_free, p_acct_cap,
				p_win, v_at);
			IF w > wait THEN
				wait := w;
				rule := 'account';
			END IF;
		END IF;
		IF wait > 0 THEN
			RETURN;
		END IF;
	END LOOP;
	rule := NULL;
	-- A window that ended starts again with this failure.
	UPDATE login_throttle t SET
		failures = CASE WHEN t.since IS NULL
			OR t.since <= v_at - make_interval(secs => p_win)
			THEN 1 ELSE t.failures + 1 END,
		since = CASE WHEN t.since IS NULL
			OR t.since <= v_at - make_interval(secs => p_win)
			THEN v_at ELSE t.since END,
		last_at = v_at,
		expires_at = CASE WHEN t.since IS NULL
			OR t.since <= v_at - make_interval(secs => p_win)
			THEN greatest(t.expires_at,
				v_at + make_interval(secs => p_win))
			ELSE t.expires_at END
	WHERE (t.email, t.addr) IN ((email_key, p_addr), (email_key, ''),
		('', p_addr));
	DELETE FROM login_throttle d WHERE (d.email, d.addr) IN (
		SELECT o.email, o.addr FROM login_throttle o
		WHERE o.expires_at < v_at ORDER BY o.expires_at LIMIT 8
		FOR UPDATE SKIP LOCKED);
END
$$;

-- A successful login of key p_key (login_throttle_attempt's email_key)
-- from p_addr: the pair and account counters go back to zero (their
-- window runs on), the pair remembers the success (kept p_known seconds
-- at least), the address counter takes back the failure the attempt
-- counted.
CREATE FUNCTION login_throttle_success(p_key text, p_addr text,
	p_known integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	v_at timestamptz;
BEGIN
	PERFORM set_config('synchronous_commit', 'off', true);
	PERFORM 1 FROM login_throttle t
	WHERE (t.email, t.addr) IN ((p_key, p_addr), (p_key, ''), ('', p_addr))
	ORDER BY t.email, t.addr FOR UPDATE;
	v_at := clock_timestamp();
	UPDATE login_throttle t SET
		failures = CASE WHEN t.email = '' THEN greatest(t.failures - 1, 0)
			ELSE 0 END,
		ok_at = CASE WHEN t.email <> '' AND t.addr <> '' THEN v_at
			ELSE t.ok_at END,
		-- Moved a day ahead at a time, not at every login.
		expires_at = CASE WHEN t.email <> '' AND t.addr <> ''
			AND t.expires_at < v_at + make_interval(secs => p_known)
			THEN v_at + make_interval(secs => p_known)
				+ interval '1 day'
			ELSE t.expires_at END
	WHERE (t.email, t.addr) IN ((p_key, p_addr), (p_key, ''), ('', p_addr));
END
$$;

-- Forgets the counters of e-mail p_email (its account row and every
-- pair), of address p_addr (its address row and every pair), or, with
-- both, of that one pair; known addresses go with them.  The number of
-- rows deleted; 0 when both are NULL.
CREATE FUNCTION login_throttle_clear(p_email text, p_addr text)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	k text := login_throttle_key(p_email);
	n integer;
BEGIN
	IF p_email IS NULL AND p_addr IS NULL THEN
		RETURN 0;
	END IF;
	PERFORM 1 FROM login_throttle t
	WHERE (k IS NULL OR t.email = k) AND (p_addr IS NULL OR t.addr = p_addr)
	ORDER BY t.email, t.addr FOR UPDATE;
	DELETE FROM login_throttle t
	WHERE (k IS NULL OR t.email = k) AND (p_addr IS NULL OR t.addr = p_addr);
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$$;
