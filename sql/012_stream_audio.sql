-- 012_stream_audio: the audio a bytes stream may declare at session
-- creation (doc/xmbp-audio.md): its codec, sample rate and channels.
-- All three or none; only bytes streams carry audio.  The ingest check
-- reads them with the stream, the WAV read-back decodes by them.
ALTER TABLE ingest_streams
	ADD COLUMN audio_codec text
		CHECK (audio_codec IN ('pcm_s16le', 'ima_adpcm')),
	ADD COLUMN audio_sample_rate_hz integer
		CHECK (audio_sample_rate_hz BETWEEN 1000 AND 192000),
	ADD COLUMN audio_channels smallint
		CHECK (audio_channels BETWEEN 1 AND 8),
	ADD CONSTRAINT ingest_streams_audio_whole
		CHECK ((audio_codec IS NULL) = (audio_sample_rate_hz IS NULL)
		       AND (audio_codec IS NULL) = (audio_channels IS NULL)),
	ADD CONSTRAINT ingest_streams_audio_bytes
		CHECK (audio_codec IS NULL OR value_type = 'bytes');
