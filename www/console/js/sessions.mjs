// SPDX-License-Identifier: MIT
// sessions.mjs - ingest sessions: the list, and a session's page with
// one uPlot chart per numeric stream, drawn from bucketed read-back of
// the visible window (doc/queries.md "Buckets"), refined on zoom and
// followed live while the session is active, and a spectrogram of each
// XMBP audio stream (doc/xmbp-audio.md).
import { api } from './api.mjs';
import {
	html, useState, useEffect, useLoad, Loaded, ErrorBox, Pager, when, bytes, Badge,
	facQuery, view, AXIS_FONT, textWidth, Empty, optional,
} from './ui.mjs';
import { Spectrogram } from './spectro.mjs';

const NUMERIC = new Set(['f32', 'f64', 'i8', 'i16', 'i32', 'i64', 'bool']);
const SESSION_STATES = ['active', 'closing', 'closed', 'error'];

export function Sessions() {
	const [status, setStatus] = useState('');
	const [device, setDevice] = useState('');
	const [page, setPage] = useState(1);
	const devices = useLoad(() => api('GET', '/api/v1/devices', { query: facQuery() }), [view.facility]);
	const st = useLoad(() => api('GET', '/api/v1/metadata/sessions', {
		query: { ...facQuery(), status, device_id: device, page, per_page: 20 },
	}), [status, device, page, view.facility]);
	const name = (id) => ((devices.data || []).find((d) => d.id === id) || {}).name || '—';
	return html`<h1>Ingest sessions</h1>
	<div class="filters">
		<label>Status <select value=${status} onChange=${(e) => { setStatus(e.target.value); setPage(1); }}>
			<option value="">any</option>${SESSION_STATES.map((s) => html`<option value=${s}>${s}</option>`)}</select></label>
		<label>Device <select value=${device} onChange=${(e) => { setDevice(e.target.value); setPage(1); }}>
			<option value="">any</option>${(devices.data || []).map((d) => html`<option value=${d.id}>${d.name} (${d.device_uid})</option>`)}</select></label>
		<button type="button" onClick=${st.reload}>Refresh</button>
	</div>
	<${Loaded} st=${st} empty="No ingest sessions.">${(d) => html`
	<table><thead><tr><th>Session</th><th>Device</th><th>State</th><th>Samples</th><th>Missed batches</th><th>Started</th></tr></thead>
	<tbody>${d.items.map((s) => html`<tr>
		<td><a href=${`#/sessions/${s.id}`}>${s.name || s.id.slice(0, 8)}</a></td><td>${name(s.device_id)}</td>
		<td><${Badge} s=${s.status} /></td><td>${s.total_samples}</td><td>${s.missed_batches}</td><td>${when(s.started_at)}</td>
	</tr>`)}</tbody></table>
	<${Pager} page=${page} data=${d} onPage=${setPage} />`}<//>`;
}

// uPlot is loaded on the first chart only (the first page stays small).
let uplotReady = null;
function loadUplot() {
	if (!uplotReady) {
		uplotReady = new Promise((resolve, reject) => {
			const css = document.createElement('link');
			css.rel = 'stylesheet';
			css.href = 'vendor/uplot.css';
			document.head.append(css);
			const s = document.createElement('script');
			s.src = 'vendor/uplot.js';
			s.onload = () => resolve(window.uPlot);
			s.onerror = () => reject(new Error('the chart library did not load'));
			document.head.append(s);
		});
	}
	return uplotReady;
}

const samplesPath = (sid, idx) => `/api/v1/metadata/sessions/${sid}/streams/${idx}/samples`;
const COARSE = 1048576; // µs: a first look at a stream's extent

// The stream's extent [first, end) in µs and its coarse buckets, null
// when it has no samples: its first sample, then buckets of COARSE µs
// (64 times wider while one answer is not enough) up to the last.  One
// pass over the samples: the whole view is drawn from these buckets.
async function extent(sid, idx) {
	const first = await api('GET', samplesPath(sid, idx), { query: { limit: 1 } });
	if (!first.samples.length) return null;
	const t0 = first.samples[0][0];
	for (let b = COARSE; ; b *= 64) {
		const d = await api('GET', samplesPath(sid, idx), { query: { from_us: t0, bucket_us: b, limit: 100000 } });
		if (d.next_from_us === null) {
			const last = d.buckets[d.buckets.length - 1];
			return { from: t0, to: last.start_us + b, bucket: b, buckets: d.buckets };
		}
	}
}

// Samples of the stream from `from` on: one bucket of the whole stream,
// which the server adds up from the chunks' stored aggregates (cheap).
const WHOLE = 2 ** 52; // µs, 142 years
async function countFrom(sid, idx, from) {
	const d = await api('GET', samplesPath(sid, idx), { query: { from_us: from, bucket_us: WHOLE } });
	return d.buckets.reduce((n, k) => n + k.count + k.nan_count, 0);
}

// ext (of extent) with the buckets added since: those from its last
// bucket's start on, in its bucket width; the whole extent again when
// there are too many or none were there, or when samples arrived late
// (timestamps before the last bucket): the stream then holds more than
// the buckets count.  The count is read first, so that samples arriving
// meanwhile only add to the buckets.
async function grow(sid, idx, ext) {
	if (!ext.buckets.length) return extent(sid, idx);
	const total = await countFrom(sid, idx, ext.from);
	const last = ext.buckets[ext.buckets.length - 1];
	const d = await api('GET', samplesPath(sid, idx), { query: { from_us: last.start_us, bucket_us: ext.bucket, limit: 100000 } });
	if (d.next_from_us !== null || !d.buckets.length) return extent(sid, idx);
	const buckets = ext.buckets.slice(0, -1).concat(d.buckets);
	if (buckets.reduce((n, k) => n + k.count + k.nan_count, 0) < total) return extent(sid, idx);
	const end = buckets[buckets.length - 1].start_us + ext.bucket;
	return { ...ext, to: end, buckets };
}

// Buckets merged into at most `width` groups (min of mins, max of maxes,
// the mean weighted by count), as uPlot's columns (x in seconds).
function columns(buckets, width) {
	const g = Math.max(1, Math.ceil(buckets.length / Math.max(50, width)));
	const x = [], lo = [], hi = [], mean = [];
	for (let i = 0; i < buckets.length; i += g) {
		let mn = null, mx = null, sum = 0, n = 0;
		for (const k of buckets.slice(i, i + g)) {
			const a = num(k.min), b = num(k.max), m = num(k.mean);
			if (a !== null && (mn === null || a < mn)) mn = a;
			if (b !== null && (mx === null || b > mx)) mx = b;
			if (m !== null && k.count > 0) {
				sum += m * k.count;
				n += k.count;
			}
		}
		x.push(buckets[i].start_us / 1e6);
		lo.push(mn);
		hi.push(mx);
		mean.push(n ? sum / n : null);
	}
	return { data: [x, lo, hi, mean], bucket: g, count: x.length };
}

// Buckets of [from, to] at about `width` points.
async function fetchWindow(sid, idx, from, to, width) {
	const bucket = Math.max(1, Math.ceil((to - from) / Math.max(50, width)));
	const d = await api('GET', samplesPath(sid, idx), {
		query: { from_us: Math.floor(from), to_us: Math.ceil(to), bucket_us: bucket, limit: 100000 },
	});
	const c = columns(d.buckets, width);
	return { ...c, bucket };
}
const num = (v) => (v === null || typeof v === 'string' ? null : Number(v));

// The visible window's samples as CSV (pages followed, at most 1e6).
async function csv(sid, idx, from, to) {
	const parts = [];
	let q = { format: 'csv', from_us: Math.floor(from), to_us: Math.ceil(to), limit: 100000 };
	for (let n = 0; n < 10; n++) {
		const res = await api('GET', samplesPath(sid, idx), { query: q, raw: true });
		const text = await res.text();
		parts.push(n === 0 ? text : text.slice(text.indexOf('\n') + 1));
		const next = res.headers.get('X-Next-From-Us');
		if (next === null) break;
		q = { ...q, from_us: next, skip: res.headers.get('X-Next-Skip') || 0 };
	}
	return new Blob(parts, { type: 'text/csv' });
}

// Time axes (doc/console.md "Charts"): local time or UTC, labels as
// precise as the tick step, and ticks at least TICK_SPACE px apart, the
// width of the widest label with a gap, so that no two labels meet
// whatever the chart's width.
const UTC_KEY = 'xmhub.utc';
const TICK_SPACE = Math.ceil(textWidth('00:00:00.000')) + 16;
const pad = (n, w = 2) => String(n).padStart(w, '0');

// The calendar fields of t (seconds since the epoch), local or UTC.
function fieldsOf(t, utc) {
	const d = new Date(t * 1000);
	return utc
		? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()]
		: [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds()];
}

// A tick label for a step of incr seconds: 2026-11-29, 14:05, 14:05:30
// or 14:05:30.250.
function tickLabel(t, incr, utc) {
	const [y, mo, d, h, mi, sec, ms] = fieldsOf(t, utc);
	if (incr >= 86400) return `${y}-${pad(mo)}-${pad(d)}`;
	const hm = `${pad(h)}:${pad(mi)}`;
	if (incr >= 60) return hm;
	return incr >= 1 ? `${hm}:${pad(sec)}` : `${hm}:${pad(sec)}.${pad(ms, 3)}`;
}

// The whole time, for the legend: 2026-11-29 14:05:30.250.
const fullTime = (t, utc) => `${tickLabel(t, 86400, utc)} ${tickLabel(t, 0, utc)}`;

function Chart({ sid, stream, live, utc }) {
	const name = stream.name || `stream ${stream.stream_index}`;
	const unit = stream.unit ? ` ${stream.unit}` : '';
	const [el, setEl] = useState(null);
	const [state, setState] = useState({ loading: true, error: null, empty: false, info: '' });
	const [ctl, setCtl] = useState(null);
	const [ticks, setTicks] = useState({ utc, list: [] });
	useEffect(() => {
		if (!el) return undefined;
		setTicks({ utc, list: [] });
		let plot = null, dead = false, full = null, zoomed = false, seq = 0, timer = null;
		const width = () => Math.max(280, el.clientWidth);
		const fail = (e) => !dead && setState({ loading: false, error: e, empty: false, info: '' });
		// Loads [from, to] into the chart (the newest request wins).
		const load = async (from, to, reset) => {
			const my = ++seq;
			const w = await fetchWindow(sid, stream.stream_index, from, to, width());
			if (dead || my !== seq) return;
			setState({ loading: false, error: null, empty: false,
				info: `${w.count} points from buckets of ${w.bucket} µs` });
			plot.setData(w.data, reset);
			if (!reset) plot.setScale('x', { min: from / 1e6, max: to / 1e6 });
		};
		let ext = null;
		const reload = async () => {
			// Live: only the buckets from the last one on are asked
			// for again (aligned as before), not the whole stream.
			ext = ext ? await grow(sid, stream.stream_index, ext) : await extent(sid, stream.stream_index);
			if (dead) return;
			if (!ext) {
				setState({ loading: false, error: null, empty: true, info: '' });
				return;
			}
			full = [ext.from, ext.to];
			if (!plot) {
				const U = await loadUplot();
				if (dead) return;
				let shown = [];
				const value = (u, v) => (v == null ? '—' : `${Number(v.toPrecision(6))}${unit}`);
				plot = new U({
					width: width(), height: 220,
					title: undefined,
					tzDate: utc ? (t) => U.tzDate(new Date(t * 1000), 'Etc/UTC') : (t) => new Date(t * 1000),
					scales: { x: { time: true } },
					axes: [{
						label: utc ? 'time (UTC)' : 'time (local)', font: AXIS_FONT, labelFont: AXIS_FONT,
						space: TICK_SPACE,
						values: (u, splits, ax, space, incr) => {
							shown = splits.map((v) => [v, tickLabel(v, incr, utc)]);
							return shown.map(([, l]) => l);
						},
					}, { label: stream.unit || '', font: AXIS_FONT, labelFont: AXIS_FONT }],
					series: [{ label: utc ? 'time (UTC)' : 'time (local)', value: (u, v) => (v == null ? '—' : fullTime(v, utc)) },
						{ label: `${name} min`, stroke: '#9db4e0', width: 1, value },
						{ label: `${name} max`, stroke: '#9db4e0', width: 1, value },
						{ label: `${name} mean`, stroke: '#1f4fa8', width: 1.5, value }],
					bands: [{ series: [2, 1], fill: 'rgba(51,102,204,0.15)' }],
					hooks: {
						// The ticks as drawn (centres in px of the
						// chart box), listed for screen readers.
						draw: [(u) => {
							const x0 = u.over.getBoundingClientRect().left - el.getBoundingClientRect().left;
							setTicks({ utc, list: shown.map(([v, l]) => ({ v, l, x: x0 + u.valToPos(v, 'x') })) });
						}],
						setSelect: [(u) => {
							if (u.select.width < 2) return;
							const a = u.posToVal(u.select.left, 'x') * 1e6;
							const b = u.posToVal(u.select.left + u.select.width, 'x') * 1e6;
							u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
							zoom(a, b);
						}],
					},
					cursor: { drag: { x: true, y: false, setScale: false } },
				}, [[], [], [], []], el);
			}
			if (zoomed) return;
			// Enough coarse buckets: drawn as they are (one pass over
			// the samples); a short stream asks for finer ones.
			if (ext.buckets.length >= Math.min(200, width() / 2)) {
				++seq;
				const c = columns(ext.buckets, width());
				setState({ loading: false, error: null, empty: false,
					info: `${c.count} points from buckets of ${ext.bucket} µs` });
				plot.setData(c.data, true);
			} else {
				await load(full[0], full[1], true);
			}
		};
		// Zooms to [a, b] µs with buckets of that window (refined).
		const zoom = (a, b) => {
			zoomed = true;
			load(a, b, false).catch(fail);
		};
		const cur = () => [plot.scales.x.min * 1e6, plot.scales.x.max * 1e6];
		setCtl({
			zoomIn: () => { const [a, b] = cur(); const q = (b - a) / 4; zoom(a + q, b - q); },
			zoomOut: () => { const [a, b] = cur(); const q = (b - a) / 2; zoom(Math.max(full[0], a - q), Math.min(full[1], b + q)); },
			whole: () => { zoomed = false; ext = null; reload().catch(fail); },
			csv: async () => {
				const [a, b] = plot ? cur() : full;
				const blob = await csv(sid, stream.stream_index, a, b);
				const url = URL.createObjectURL(blob);
				const link = document.createElement('a');
				link.href = url;
				link.download = `session-${sid}-stream-${stream.stream_index}.csv`;
				document.body.append(link);
				link.click();
				link.remove();
				setTimeout(() => URL.revokeObjectURL(url), 1000);
			},
		});
		reload().catch(fail);
		const tick = () => {
			timer = setTimeout(() => reload().catch(fail).finally(() => !dead && live.current && tick()), 2000);
		};
		if (live.current) tick();
		const onResize = () => plot && plot.setSize({ width: width(), height: 220 });
		addEventListener('resize', onResize);
		return () => {
			dead = true;
			clearTimeout(timer);
			removeEventListener('resize', onResize);
			if (plot) plot.destroy();
		};
	}, [el, sid, stream.stream_index, utc]);
	const label = `${name} (${stream.value_type}${stream.unit ? `, ${stream.unit}` : ''})`;
	return html`<section class="chart-box" aria-label=${`chart of ${label}`}>
		<h3>${label}</h3>
		${state.loading && html`<p class="state" role="status">Loading chart…</p>`}
		${state.error && html`<${ErrorBox} error=${state.error} />`}
		${state.empty && html`<p class="state empty">No samples yet.</p>`}
		<div class="chart" ref=${setEl} data-stream=${stream.stream_index}></div>
		<ol class="sr ticks" aria-label=${`time axis (${ticks.utc ? 'UTC' : 'local time'})`} data-font=${AXIS_FONT}>
			${ticks.list.map((t) => html`<li data-v=${t.v} data-x=${t.x.toFixed(1)}>${t.l}</li>`)}</ol>
		${ctl && !state.empty && html`<div class="chart-tools">
			<button type="button" class="small" onClick=${ctl.zoomIn}>Zoom in</button>
			<button type="button" class="small" onClick=${ctl.zoomOut}>Zoom out</button>
			<button type="button" class="small" onClick=${ctl.whole}>Whole session</button>
			<button type="button" class="small" onClick=${() => ctl.csv().catch((e) => setState((s) => ({ ...s, error: e })))}>Download CSV of the view</button>
			<span class="muted">${state.info}</span></div>`}
	</section>`;
}

// An audio stream's extent {t0, end} in µs (end within a second before
// its last sample), null when it has none: its first sample, then probes
// of one sample (limit=1) whose step doubles from a second while they
// find one and then halves down to a second; about 2 log2(seconds)
// reads, for a stream that has no buckets (bytes).
async function audioExtent(sid, idx) {
	const at = async (t) => (await api('GET', samplesPath(sid, idx), { query: { from_us: t, limit: 1 } })).samples.length > 0;
	const first = await api('GET', samplesPath(sid, idx), { query: { limit: 1 } });
	if (!first.samples.length) return null;
	const t0 = first.samples[0][0];
	let end = t0, step = 1e6;
	while (await at(end + step)) {
		end += step;
		step *= 2;
	}
	// A sample at or after end, none at or after end + step.
	for (step /= 2; step >= 1e6; step /= 2) if (await at(end + step)) end += step;
	return { t0, end };
}

// An XMBP audio stream's spectrogram (doc/console.md "Spectrogram"):
// windows of AUDIO_WINDOW_S drawn through the session stream route,
// opening on the newest, which is drawn again while the session is live.
const AUDIO_WINDOW_S = 60;
function AudioSpectrogram({ sid, stream, live }) {
	const idx = stream.stream_index;
	const ext = useLoad(() => audioExtent(sid, idx), [sid, idx]);
	const none = ext.data === null && !ext.loading && !ext.error;
	useEffect(() => {
		if (!none || !live.current) return undefined;
		const t = setTimeout(ext.reload, 2000);
		return () => clearTimeout(t);
	}, [none]);
	if (ext.error) return html`<${ErrorBox} error=${ext.error} />`;
	if (none) return html`<${Empty}>No audio in this stream yet.<//>`;
	if (!ext.data) return html`<p class="state">Loading spectrogram…</p>`;
	const { t0, end } = ext.data;
	const rate = stream.audio.sample_rate_hz;
	const src = {
		key: `${sid}/${idx}`, what: 'the stream', rate, total: (end - t0) / 1e6,
		window: AUDIO_WINDOW_S, newest: true, live: live.current,
		draw: async ({ from, to, open, width, height, scale }) => {
			const r = await optional(`/api/v1/metadata/sessions/${sid}/streams/${idx}/spectrogram.png`, {
				from_us: Math.round(t0 + from * 1e6), to_us: open ? undefined : Math.round(t0 + to * 1e6), width, height, scale,
			});
			if (r.none !== undefined) return r;
			// What was drawn: to the stream's end when open.
			const a = (Number(r.headers.get('X-Audio-Start-Us')) - t0) / 1e6;
			return { res: r, from: a, to: a + Number(r.headers.get('X-Audio-Sample-Frames')) / rate };
		},
	};
	return html`<${Spectrogram} src=${src} />`;
}

export function SessionPage({ id }) {
	const st = useLoad(() => api('GET', `/api/v1/metadata/sessions/${id}`), [id]);
	const [live] = useState({ current: true });
	const [utc, setUtc] = useState(localStorage.getItem(UTC_KEY) === '1');
	const s = st.data;
	live.current = !!s && (s.status === 'active' || s.status === 'closing');
	// Counters and state follow the session while it is active: read
	// again 2 s after the last read ended, also when it failed.
	useEffect(() => {
		if (!live.current || st.loading) return undefined;
		const t = setTimeout(st.reload, 2000);
		return () => clearTimeout(t);
	}, [st.loading]);
	return html`<p><a href="#/sessions">← Sessions</a></p>
	<${Loaded} st=${st}>${() => html`
	<h1>${s.name || 'Session'} <${Badge} s=${s.status} /></h1>
	<dl class="facts">
		<dt>Accepted samples</dt><dd id="total-samples">${s.total_samples}</dd>
		<dt>Missed batches</dt><dd>${s.missed_batches}</dd>
		<dt>Bytes</dt><dd>${bytes(s.total_bytes)}</dd>
		<dt>Started</dt><dd>${when(s.started_at)}</dd>
		<dt>Streams</dt><dd>${(s.streams || []).length}</dd>
	</dl>
	<label class="check"><input type="checkbox" id="utc" checked=${utc}
		onChange=${(e) => { localStorage.setItem(UTC_KEY, e.target.checked ? '1' : '0'); setUtc(e.target.checked); }} />
		Times in UTC (else local time)</label>
	${(s.streams || []).filter((t) => NUMERIC.has(t.value_type)).map((t) =>
		html`<${Chart} key=${t.stream_index} sid=${id} stream=${t} live=${live} utc=${utc} />`)}
	${(s.streams || []).filter((t) => t.audio).map((t) => html`<section class="chart-box" key=${`a${t.stream_index}`}
		aria-label=${`spectrogram of ${t.name || `stream ${t.stream_index}`}`}>
		<h3>${t.name || `stream ${t.stream_index}`} (audio: ${t.audio.codec}, ${t.audio.sample_rate_hz} Hz, ${t.audio.channels} ch)</h3>
		<${AudioSpectrogram} sid=${id} stream=${t} live=${live} /></section>`)}
	${(s.streams || []).filter((t) => !NUMERIC.has(t.value_type) && !t.audio).map((t) => html`<p class="muted">
		${t.name || `stream ${t.stream_index}`} (${t.value_type}): not a numeric stream, no chart.</p>`)}
	`}<//>`;
}
