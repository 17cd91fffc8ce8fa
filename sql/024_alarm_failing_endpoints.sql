-- 024_alarm_failing_endpoints: the alarm runner makes no first attempt
-- of a delivery to an endpoint while another of that endpoint's waits
-- for its retry (lib/domain/alarmrun.c claim_sql, doc/alarms.md
-- "Webhooks"): an endpoint that never answers then costs the runner its
-- timeout for its retries and one new event at a time, not for every new
-- event at once, and other facilities' deliveries go first.  This index
-- finds an endpoint's failing deliveries.
CREATE INDEX alarm_deliveries_failing ON alarm_deliveries (endpoint_id)
	WHERE state = 'pending' AND attempts > 0;
