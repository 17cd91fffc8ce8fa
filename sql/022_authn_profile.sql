-- 022_authn_profile: the e-mail and display name join what the caches of
-- sql/008 hold, so that /api/auth/me answers from the check that let the
-- request in, with no statement of its own (lib/web/authn.c,
-- doc/auth.md "Account state on every request").  A change of either now
-- notifies and counts (authn_epoch, sql/016) as a change of the state a
-- check reads does: every process of every host reads the new values on
-- its next request.  Such changes are rare; each empties every cache.
DROP TRIGGER users_authn ON users;
CREATE TRIGGER users_authn AFTER UPDATE ON users
	FOR EACH ROW WHEN (NEW.is_active IS DISTINCT FROM OLD.is_active
		OR NEW.role IS DISTINCT FROM OLD.role
		OR NEW.facility_id IS DISTINCT FROM OLD.facility_id
		OR NEW.token_version IS DISTINCT FROM OLD.token_version
		OR NEW.email IS DISTINCT FROM OLD.email
		OR NEW.display_name IS DISTINCT FROM OLD.display_name)
	EXECUTE FUNCTION authn_notify();
