-- 025_alarm_rule_kinds: the alarm runner's pass first asks which kinds
-- of the rules it checks (silence, storage, session errors, failed jobs)
-- there are (lib/domain/alarmrun.c kinds_sql), and runs their statements
-- only for those: this index holds those rules alone, so the question
-- costs a stack without them an empty index scan a second, however many
-- threshold rules its facilities have.
CREATE INDEX alarm_rules_passes ON alarm_rules (kind)
	WHERE kind <> 'threshold';
