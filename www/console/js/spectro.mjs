// SPDX-License-Identifier: MIT
// spectro.mjs - a spectrogram with its axes, of an upload or of an XMBP
// audio stream: the image is raw (doc/uploads.md "The images"), so the
// frequency axis (Hz, kHz; linear or log) and the time axis (from the
// start of the recording) are drawn here around it, from what the page
// knows: the window, the sample rate, the scale and the height; longer
// recordings are drawn a window at a time (doc/console.md "Spectrogram").
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

// The time ticks of a plot w px wide over [a, b] s: {v s, l, pos}.
function timeTicks(a, b, w) {
	const secs = b - a;
	const widest = textWidth(timeLabel(b, 0.01)) + GAP;
	const step = TIME_STEPS.find((s) => (s / secs) * w >= widest) || secs;
	const list = [];
	for (let k = Math.ceil(a / step - 1e-9); k * step <= b + 1e-9; k++) {
		const l = timeLabel(k * step, step);
		list.push({ v: Number((k * step).toFixed(3)), l, pos: ((k * step - a) * w) / secs, size: textWidth(l) + GAP });
	}
	return apart(list, w);
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

const near = (a, b) => Math.abs(a - b) < 1e-3;
// A window in m:ss: 10:00–20:00.
const span = (a, b) => `${timeLabel(a, 1)}–${timeLabel(b, 1)}`;

// Spectrogram({src}): a spectrogram with its axes, its scale and height
// choices, and windows of at most src.window s over a recording of
// src.total s (doc/console.md "Spectrogram"). src is the recording's:
//   key      what it is (a change starts again);
//   what     its name in the image's description ("the upload");
//   rate     its sample rate (Hz), for the frequency axis;
//   total    its length in s as far as known;
//   window   the seconds a drawn image may hold;
//   stored   true when the linear image 257 rows high is the whole
//            recording's (stored, no window);
//   newest   true to open on the newest window rather than the first;
//   live     true while it grows: the newest window is drawn again
//            REDRAW_MS after the last drawing ended;
//   draw({whole, from, to, open, width, height, scale}) the image of [from, to]
//            s (open: to is the end as far as known, which the drawing
//            may pass); its answer {res} (a Response) or {none}, with
//            {from, to} of what was drawn when it differs.
const REDRAW_MS = 10000;
export function Spectrogram({ src }) {
	const [height, setHeight] = useState(STORED_HEIGHT);
	const [scale, setScale] = useState('linear');
	// The window's start in s; null: the newest window, followed.
	const [pos, setPos] = useState(src.newest ? null : 0);
	const [redraw, setRedraw] = useState(0);
	// The length as drawn last (a growing recording's end moves on).
	const [seen, setSeen] = useState({ key: src.key, total: src.total });
	const total = seen.key === src.key ? Math.max(seen.total, src.total) : src.total;
	const whole = src.stored && ((height === STORED_HEIGHT && scale === 'linear') || !src.total);
	const len = whole ? total : src.window;
	const from = whole ? 0 : pos === null ? Math.max(0, total - len) : Math.min(pos, total);
	const to = Math.min(total, from + len);
	const st = useLoad(async () => {
		const r = await src.draw({ whole, from, to, open: to >= total, width: WIDTH, height, scale });
		if (r.none !== undefined) return r;
		const at = { from, to, ...r, height: whole ? STORED_HEIGHT : height, scale: whole ? 'linear' : scale };
		return { url: URL.createObjectURL(await r.res.blob()), at };
	}, [src.key, whole, whole || pos === null ? -1 : from, height, scale, redraw]);
	useEffect(() => () => st.data && st.data.url && URL.revokeObjectURL(st.data.url), [st.data]);
	const shown = st.data && st.data.at;
	useEffect(() => {
		if (shown && shown.to > total) setSeen({ key: src.key, total: shown.to });
	}, [shown]);
	// A growing recording's newest window, drawn again.
	useEffect(() => {
		if (!src.live || pos !== null || whole || st.loading) return undefined;
		const t = setTimeout(() => setRedraw((x) => x + 1), REDRAW_MS);
		return () => clearTimeout(t);
	}, [src.live, pos, whole, st.loading]);
	// And once more when it stops growing: its last seconds.
	useEffect(() => {
		if (!src.live && pos === null && !whole && st.data) setRedraw((x) => x + 1);
	}, [src.live]);
	const [el, setEl] = useState(null);
	const w = useWidth(el);
	const rate = src.rate;
	// Earlier and Later move by a window (the last may be shorter); on a
	// growing recording, the newest is followed again.
	const move = (d) => {
		const a = Math.max(0, shown.from + d * len);
		setPos(src.live && a + len >= total ? null : a);
	};
	const moving = shown && !whole && total > len;
	const controls = html`<div class="filters">
		<label>Frequency scale <select value=${scale} onChange=${(e) => setScale(e.target.value)}>
			<option value="linear">linear</option><option value="log">log</option></select></label>
		<label>Height <select value=${height} onChange=${(e) => setHeight(Number(e.target.value))}>
			${HEIGHTS.map((x) => html`<option value=${x}>${x} px</option>`)}</select></label>
		${moving && html`<span class="chart-tools" role="group" aria-label="spectrogram window">
			<button type="button" class="small" disabled=${shown.from <= 0 || st.loading}
				onClick=${() => move(-1)}><span aria-hidden="true">← </span>Earlier</button>
			<output class="spectro-window" aria-live="polite">${span(shown.from, shown.to)} of ${timeLabel(total, 1)}</output>
			<button type="button" class="small" disabled=${shown.to >= total - 1e-3 || st.loading}
				onClick=${() => move(1)}>Later<span aria-hidden="true"> →</span></button></span>`}
	</div>`;
	if (st.error && !st.data) return html`${controls}<${ErrorBox} error=${st.error} />`;
	if (!st.data) return html`${controls}<p class="state">Loading spectrogram…</p>`;
	if (st.data.none !== undefined) return html`<${Empty}>No spectrogram of ${src.what} (${st.data.none}).<//>`;
	const h = shown.height;
	const fticks = rate && w ? freqTicks(rate, shown.scale, h) : [];
	const tticks = w && shown.to > shown.from ? timeTicks(shown.from, shown.to, w) : [];
	return html`${controls}${st.error && html`<${ErrorBox} error=${st.error} />`}
	<figure class="spectro" data-scale=${shown.scale} data-rate=${rate || ''} data-from=${shown.from} data-to=${shown.to}>
		<ol class="axis-f" style=${`height:${h}px`} aria-label=${`frequency axis (${shown.scale})`} data-font=${AXIS_FONT}>
			${fticks.map((k) => html`<li data-v=${k.v} style=${`top:${k.at}px`}>${k.l}</li>`)}</ol>
		<div class="spectro-img" ref=${setEl}>
			<img class="spectrogram" src=${st.data.url} style=${`height:${h}px`}
				alt=${`spectrogram of ${src.what}, ${span(shown.from, shown.to)}, ${shown.scale} frequency scale: time left to right, frequency upwards`} /></div>
		<ol class="axis-t" aria-label=${`time axis (from the start of ${src.what})`} data-font=${AXIS_FONT}>
			${tticks.map((k) => html`<li data-v=${k.v} style=${`left:${k.at + GAP / 2}px`}>${k.l}</li>`)}</ol>
		<figcaption class="muted">${shown.scale === 'log' ? `${hzLabel(logMin(rate || 8000))} to ` : '0 Hz to '}${rate ? hzLabel(rate / 2) : 'half the sample rate'},
			${span(shown.from, shown.to)} of ${timeLabel(total, 1)}${near(shown.to - shown.from, total) ? '' : ` (a window of at most ${timeLabel(len, 1)})`}</figcaption>
	</figure>`;
}

// An upload's spectrogram: the stored image, or windows of ten minutes
// drawn on demand (GET /api/v1/uploads/{id}/spectrogram.png).
export function UploadSpectrogram({ id, u }) {
	const path = `/api/v1/uploads/${id}/spectrogram.png`;
	const src = {
		key: id, what: 'the upload', rate: u.sample_rate_hz, total: (u.duration_ms || 0) / 1000,
		window: WINDOW_MAX_MS / 1000, stored: true,
		draw: async ({ whole, from, to, width, height, scale }) => {
			const r = await optional(path, whole ? undefined : {
				from_ms: Math.round(from * 1000), to_ms: Math.round(to * 1000), width, height, scale,
			});
			return r.none !== undefined ? r : { res: r };
		},
	};
	return html`<${Spectrogram} src=${src} />`;
}
