# SPDX-License-Identifier: MIT
package Xmhub::Objects;

# One object of every kind a route's {id} can name, made in one facility
# through the API by that facility's admin (t/e2e/authz-matrix.t): a user,
# an API key, a device, a tag, an upload (a tiny WAV) with its transcode
# job, an ingest session with one f32 stream, an alarm rule, a webhook
# endpoint and an alarm.  Every name given holds
# $mark, so that a test can tell when an answer shows them.
#
#   my $o = Xmhub::Objects->make($p, $facility_id, $admin_token, 'mxb');
#   $o->{id}{upload}        # the upload's id (kinds: facility user
#                           # api_key device tag upload job session
#                           # alarm_rule webhook alarm)
#   $o->{key}               # the plaintext of its API key (upload, ingest)
#   $o->{texts}             # every name and id made, for leak checks
#   my $wav = Xmhub::Objects::wav(8);   # 8 silent 16-bit mono samples
#   Xmhub::Objects::wav(61, 1, 8)       # 61 frames at 1 Hz, 8 channels
#
# Core modules only.

use strict;
use warnings;
use JSON::PP;

my $json = JSON::PP->new->utf8->canonical;

# wav($n, $rate, $channels): a RIFF WAVE file of $n silent 16-bit
# sample frames, at $rate Hz (8000 by default) of $channels (1).
sub wav {
	my ($n, $rate, $ch) = @_;
	($rate, $ch) = ($rate // 8000, $ch // 1);
	my $data = pack('s<*', (0) x ($n * $ch));
	return pack('a4 V a4 a4 V v v V V v v a4 V', 'RIFF',
		36 + length $data, 'WAVE', 'fmt ', 16, 1, $ch, $rate,
		$rate * 2 * $ch, 2 * $ch, 16, 'data', length $data) . $data;
}

# upload($p, $key, $filename, $data): POST /api/v1/uploads with one file
# part; (status, body) as Xmhub::Platform::req answers them.
sub upload {
	my ($p, $key, $name, $data) = @_;
	my $b = 'xmhub-objects-' . int(rand(1e9));
	my $body = "--$b\r\nContent-Disposition: form-data; name=\"file\"; "
	    . "filename=\"$name\"\r\nContent-Type: audio/wav\r\n\r\n$data"
	    . "\r\n--$b--\r\n";
	return $p->req(POST => '/api/v1/uploads', key => $key, body => $body,
		headers => {'Content-Type' => "multipart/form-data; boundary=$b"});
}

# Dies unless ($st, $body) has status $want.
sub want {
	my ($what, $want, $st, $body) = @_;
	die "$what: $st " . $json->encode($body // {}) . "\n" if $st != $want;
	return $body;
}

sub make {
	my ($class, $p, $fac, $admin, $mark) = @_;
	my %id = (facility => $fac);
	my @texts = ($fac);
	my $n = $p->uniq;
	my $u = want('user', 200, $p->req(POST => '/api/v1/users',
		token => $admin, json => {email => "$mark-$n\@example.org",
			password => "$mark password", display_name => "$mark user",
			role => 'user'}));
	$id{user} = $u->{id};
	push @texts, $u->{email}, $u->{display_name};
	my $k = want('api key', 200, $p->req(POST => '/api/v1/api-keys',
		token => $admin, json => {name => "$mark key"}));
	$id{api_key} = $k->{id};
	push @texts, $k->{key}, $k->{key_prefix}, $k->{name};
	my $d = want('device', 201, $p->req(POST => '/api/v1/devices',
		token => $admin, json => {device_uid => 4242,
			name => "$mark device"}));
	$id{device} = $d->{id};
	push @texts, $d->{name};
	my $t = want('tag', 200, $p->req(POST => '/api/v1/tags',
		token => $admin, json => {name => "$mark tag"}));
	$id{tag} = $t->{id};
	push @texts, $t->{name};
	my $up = want('upload', 200, upload($p, $k->{key}, "$mark take.wav",
		wav(8)));
	$id{upload} = $up->{id};
	push @texts, $up->{original_filename};
	my $jobs = want('jobs', 200, $p->req(GET =>
		'/api/v1/transcode-jobs?per_page=100', token => $admin));
	my ($job) = grep { $_->{upload_id} eq $up->{id} } @{$jobs->{items}};
	die "no transcode job for the upload\n" unless $job;
	$id{job} = $job->{id};
	my $s = want('session', 201, $p->req(POST => '/api/v1/ingest/sessions',
		key => $k->{key}, json => {device_uid => 4243,
			name => "$mark walk", metadata => {site => "$mark site"},
			streams => [{stream_index => 0, name => "$mark stream",
				value_type => 'f32'}]}));
	$id{session} = $s->{id};
	push @texts, $s->{name}, "$mark site", "$mark stream", $s->{device_id};
	my $r = want('alarm rule', 201, $p->req(POST => '/api/v1/alarm-rules',
		token => $admin, json => {name => "$mark rule", kind => 'silence',
			device_id => $d->{id}, silence_minutes => 60}));
	$id{alarm_rule} = $r->{id};
	push @texts, $r->{name};
	my $w = want('webhook', 201, $p->req(POST => '/api/v1/webhooks',
		token => $admin, json => {name => "$mark hook",
			url => "http://127.0.0.1:9/$mark", secret => "$mark secret 0123456789"}));
	$id{webhook} = $w->{id};
	push @texts, $w->{name}, $w->{url};
	# An alarm as the runner raises them (sql/021 alarm_raise).
	$id{alarm} = $p->sql("SELECT alarm FROM alarm_raise('$r->{id}', "
		. "'$d->{id}', 61, '$mark silent')");
	push @texts, "$mark silent";
	push @texts, values %id;
	return bless {id => \%id, key => $k->{key}, texts => \@texts}, $class;
}

1;
