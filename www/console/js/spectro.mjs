// SPDX-License-Identifier: MIT
// spectro.mjs - an upload's spectrogram with its axes: the image is raw
// (doc/uploads.md "The images"), so the frequency axis (Hz, kHz; linear
// or log) and the time axis (from the start of the recording) are drawn
// here around it, from what the page knows: the window, the sample
// rate, the scale and the height (doc/console.md "Spectrogram").
import { html, useState, useEffect, useLoad, ErrorBox, Empty, AXIS_FONT, textWidth, optional } from './ui.mjs';

// The stored image: 1024 x 257, linear, the whole recording.
const STORED_HEIGHT = 257;
const WIDTH = 1024;
// A drawn window: at most 10 minutes (UPLOADVIEWS_WINDOW_MAX_MS).
const WINDOW_MAX_MS = 600000;
const HEIGHTS = [129, 200, 257, 400, 513];
// The log scale's lowest frequency (lib/core/spectro.h).
const logMin = (rate) => Math.min(20, rate / 8);
const LINE = 16; // px of a label's line, the gap included
// Time steps, s: 1, 2, 5 times tenths and hundredths, then the clock's.
const TIME_STEPS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
	7200, 14400, 28800, 86400];
const GAP = 12; // px between two time labels

// 1, 2 and 5 times the powers of ten from lo up to hi.
function niceSteps(lo, hi) {
	const out = [];
	for (let p = Math.floor(Math.log10(lo)); 10 ** p <= hi; p++)
		for (const m of [1, 2, 5]) if (m * 10 ** p >= lo && m * 10 ** p <= hi) out.push(m * 10 ** p);
	return out;
}

// 440 Hz, 1 kHz, 1.5 kHz, 22.05 kHz.
export function hzLabel(f) {
	return f < 1000 ? `${Math.round(f)} Hz` : `${Number((f / 1000).toFixed(2))} kHz`;
}

// m:ss, with tenths or hundredths when the step asks: 0:05, 1:30.5.
export function timeLabel(t, step) {
	const d = step >= 1 ? 0 : step >= 0.1 ? 1 : 2;
	const m = Math.floor(t / 60);
	const s = (t - m * 60).toFixed(d).padStart(d ? 3 + d : 2, '0');
	return `${m}:${s}`;
}

// Keeps the labels (sorted by pos) whose boxes [pos - size/2, pos +
// size/2], moved inside [0, len], do not meet the last kept one's.
function apart(list, len) {
	const kept = [];
	for (const k of list) {
		const a = Math.min(Math.max(k.pos - k.size / 2, 0), len - k.size);
		const last = kept[kept.length - 1];
		if (a < 0 || (last && a < last.at + last.size)) continue;
		kept.push({ ...k, at: a });
	}
	return kept;
}

// The frequency ticks of a plot h px high: {v Hz, l, pos px from the top}.
// Row r from the top is at fraction (h - 1 - r) / (h - 1) of the scale;
// its centre is r + 0.5 px down.
function freqTicks(rate, scale, h) {
	const nyq = rate / 2;
	const row = (frac) => 0.5 + (h - 1) * (1 - frac);
	let list;
	if (scale === 'log') {
		const lo = logMin(rate);
		const y = (f) => row(Math.log(f / lo) / Math.log(nyq / lo));
		// Powers of ten first, then 5s, then 2s, each where it fits.
		const rank = (f) => ({ 1: 0, 5: 1, 2: 2 })[Math.round(f / 10 ** Math.floor(Math.log10(f)))];
		const cand = niceSteps(lo, nyq).sort((a, b) => rank(a) - rank(b));
		list = [];
		for (const f of cand)
			if (list.every((g) => Math.abs(y(g) - y(f)) >= LINE)) list.push(f);
		list = list.map((f) => ({ v: f, pos: y(f) }));
	} else {
		const step = niceSteps(1, nyq).find((s) => (s / nyq) * h >= LINE) || nyq;
		list = [];
		for (let f = 0; f <= nyq; f += step) list.push({ v: f, pos: row(f / nyq) });
	}
	list = list.map((k) => ({ ...k, l: hzLabel(k.v), size: LINE }));
	return apart(list.sort((a, b) => a.pos - b.pos), h);
}

// The time ticks of a plot w px wide over secs seconds: {v s, l, pos}.
function timeTicks(secs, w) {
	const widest = textWidth(timeLabel(secs, 0.01)) + GAP;
	const step = TIME_STEPS.find((s) => (s / secs) * w >= widest) || secs;
	const list = [];
	for (let k = 0; k * step <= secs + 1e-9; k++) {
		const l = timeLabel(k * step, step);
		list.push({ v: Number((k * step).toFixed(3)), l, pos: (k * step * w) / secs, size: textWidth(l) + GAP });
	}
	return apart(list, w);
}

// The image's request: the stored image when it is the one asked for,
// else the first ten minutes (at most) drawn with height and scale.
function request(id, u, height, scale) {
	const secs = (u.duration_ms || 0) / 1000;
	if ((height === STORED_HEIGHT && scale === 'linear') || !u.duration_ms)
		return { path: `/api/v1/uploads/${id}/spectrogram.png`, secs, height: STORED_HEIGHT, scale: 'linear' };
	const to = Math.min(u.duration_ms, WINDOW_MAX_MS);
	return {
		path: `/api/v1/uploads/${id}/spectrogram.png`,
		query: { from_ms: 0, to_ms: to, width: WIDTH, height, scale },
		secs: to / 1000, height, scale,
	};
}

// The width of el, followed.
function useWidth(el) {
	const [w, setW] = useState(0);
	useEffect(() => {
		if (!el) return undefined;
		const ro = new ResizeObserver(() => setW(el.clientWidth));
		ro.observe(el);
		setW(el.clientWidth);
		return () => ro.disconnect();
	}, [el]);
	return w;
}

export function Spectrogram({ id, u }) {
	const [height, setHeight] = useState(STORED_HEIGHT);
	const [scale, setScale] = useState('linear');
	const rq = request(id, u, height, scale);
	const st = useLoad(async () => {
		const r = await optional(rq.path, rq.query);
		return r.none !== undefined ? r : { url: URL.createObjectURL(await r.blob()), rq };
	}, [id, height, scale]);
	useEffect(() => () => st.data && st.data.url && URL.revokeObjectURL(st.data.url), [st.data]);
	const [el, setEl] = useState(null);
	const w = useWidth(el);
	const shown = st.data && st.data.rq;
	const rate = u.sample_rate_hz;
	const controls = html`<div class="filters">
		<label>Frequency scale <select value=${scale} onChange=${(e) => setScale(e.target.value)}>
			<option value="linear">linear</option><option value="log">log</option></select></label>
		<label>Height <select value=${height} onChange=${(e) => setHeight(Number(e.target.value))}>
			${HEIGHTS.map((x) => html`<option value=${x}>${x} px</option>`)}</select></label>
	</div>`;
	if (st.error) return html`${controls}<${ErrorBox} error=${st.error} />`;
	if (!st.data) return html`${controls}<p class="state">Loading spectrogram…</p>`;
	if (st.data.none !== undefined) return html`<${Empty}>No spectrogram for this upload (${st.data.none}).<//>`;
	const h = shown.height;
	const fticks = rate && w ? freqTicks(rate, shown.scale, h) : [];
	const tticks = w && shown.secs > 0 ? timeTicks(shown.secs, w) : [];
	return html`${controls}
	<figure class="spectro" data-scale=${shown.scale} data-rate=${rate || ''}>
		<ol class="axis-f" style=${`height:${h}px`} aria-label=${`frequency axis (${shown.scale})`} data-font=${AXIS_FONT}>
			${fticks.map((k) => html`<li data-v=${k.v} style=${`top:${k.at}px`}>${k.l}</li>`)}</ol>
		<div class="spectro-img" ref=${setEl}>
			<img class="spectrogram" src=${st.data.url} style=${`height:${h}px`}
				alt=${`spectrogram of the upload, ${shown.scale} frequency scale: time left to right, frequency upwards`} /></div>
		<ol class="axis-t" aria-label="time axis (from the start of the recording)" data-font=${AXIS_FONT}>
			${tticks.map((k) => html`<li data-v=${k.v} style=${`left:${k.at + GAP / 2}px`}>${k.l}</li>`)}</ol>
		<figcaption class="muted">${shown.scale === 'log' ? `${hzLabel(logMin(rate || 8000))} to ` : '0 Hz to '}${rate ? hzLabel(rate / 2) : 'half the sample rate'},
			${timeLabel(shown.secs, 0.01)} of ${timeLabel((u.duration_ms || 0) / 1000, 0.01)}</figcaption>
	</figure>`;
}
