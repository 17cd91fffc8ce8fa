-- 008_authn_state: what every request checks about its caller, and the
-- notifications that keep each process's copy of it current
-- (doc/auth.md "Account state on every request").
--
-- token_version counts the changes that end a user's access tokens: a
-- new password, another role or facility, a deactivation.  Tokens carry
-- the version they were issued under ("ver"); a request whose access
-- token has another version is refused.  A refresh reads the user anew
-- and issues tokens of the current version (a new password revokes the
-- refresh tokens too: lib/api/users.c).
ALTER TABLE users ADD COLUMN token_version integer NOT NULL DEFAULT 0;

CREATE FUNCTION users_token_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.password_hash IS DISTINCT FROM OLD.password_hash
	    OR NEW.role IS DISTINCT FROM OLD.role
	    OR NEW.facility_id IS DISTINCT FROM OLD.facility_id
	    OR (OLD.is_active AND NOT NEW.is_active) THEN
		NEW.token_version = OLD.token_version + 1;
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER users_token_version BEFORE UPDATE ON users
	FOR EACH ROW EXECUTE FUNCTION users_token_version();

-- Every process that caches callers LISTENs on xmhub_authn and drops its
-- whole cache on any notification (changes are rare; PostgreSQL folds
-- the identical notifications of one transaction into one).  Only the
-- columns a request's check reads notify: logins (last_login_at) and key
-- use (last_used_at) do not.
CREATE FUNCTION authn_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('xmhub_authn', TG_TABLE_NAME);
	RETURN NULL;
END
$$;
CREATE TRIGGER users_authn AFTER UPDATE ON users
	FOR EACH ROW WHEN (NEW.is_active IS DISTINCT FROM OLD.is_active
		OR NEW.role IS DISTINCT FROM OLD.role
		OR NEW.facility_id IS DISTINCT FROM OLD.facility_id
		OR NEW.token_version IS DISTINCT FROM OLD.token_version)
	EXECUTE FUNCTION authn_notify();
CREATE TRIGGER users_authn_delete AFTER DELETE ON users
	FOR EACH ROW EXECUTE FUNCTION authn_notify();
CREATE TRIGGER facilities_authn AFTER UPDATE ON facilities
	FOR EACH ROW WHEN (NEW.is_active IS DISTINCT FROM OLD.is_active)
	EXECUTE FUNCTION authn_notify();
CREATE TRIGGER facilities_authn_delete AFTER DELETE ON facilities
	FOR EACH ROW EXECUTE FUNCTION authn_notify();
CREATE TRIGGER api_keys_authn AFTER UPDATE ON api_keys
	FOR EACH ROW WHEN (NEW.is_active IS DISTINCT FROM OLD.is_active
		OR NEW.expires_at IS DISTINCT FROM OLD.expires_at
		OR NEW.scopes IS DISTINCT FROM OLD.scopes
		OR NEW.facility_id IS DISTINCT FROM OLD.facility_id)
	EXECUTE FUNCTION authn_notify();
CREATE TRIGGER api_keys_authn_delete AFTER DELETE ON api_keys
	FOR EACH ROW EXECUTE FUNCTION authn_notify();
