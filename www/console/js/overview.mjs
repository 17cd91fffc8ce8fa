// SPDX-License-Identifier: MIT
// overview.mjs - the landing page: what an admin looks at first, for the
// facility in view (every facility for a super admin, with a line per
// facility): devices seen in the last hour of those known, the active
// sessions with their sample rates (from the counters of two reads),
// the newest uploads with their state and the failed transcode jobs.
// The figures come from the lists of the API (doc/console.md "Overview").
import { api } from './api.mjs';
import { html, useState, useEffect, useLoad, ErrorBox, Loading, Badge, when, facQuery, view, isSuper } from './ui.mjs';
import { useFacilities } from './admin.mjs';

const HOUR = 3600e3;
const LIVE_MS = 2000;

// Samples per second of each active session: the growth of its counter
// between two reads.
function useRates(sessions) {
	const [prev, setPrev] = useState({});
	const [rates, setRates] = useState({});
	useEffect(() => {
		const now = Date.now();
		const r = {};
		for (const s of sessions || []) {
			const p = prev[s.id];
			if (p && now > p.t) r[s.id] = ((s.total_samples - p.n) * 1000) / (now - p.t);
		}
		setRates((old) => ({ ...old, ...r }));
		setPrev(Object.fromEntries((sessions || []).map((s) => [s.id, { n: s.total_samples, t: now }])));
	}, [sessions]);
	return rates;
}

export function Overview() {
	const q = facQuery();
	const facs = useFacilities();
	const st = useLoad(() => Promise.all([
		api('GET', '/api/v1/devices', { query: q }),
		api('GET', '/api/v1/metadata/sessions', { query: { ...q, status: 'active', per_page: 100 } }),
		api('GET', '/api/v1/uploads', { query: { ...q, per_page: 8 } }),
		api('GET', '/api/v1/transcode-jobs', { query: { ...q, status: 'failed', per_page: 8 } }),
	]), [view.facility]);
	const [devices, sessions, uploads, failed] = st.data || [];
	const rates = useRates(sessions && sessions.items);
	// Live: everything is read again every LIVE_MS.
	useEffect(() => {
		if (!st.data) return undefined;
		const t = setTimeout(st.reload, LIVE_MS);
		return () => clearTimeout(t);
	}, [st.data]);
	if (!st.data) return html`<h1>Overview</h1>${st.error ? html`<${ErrorBox} error=${st.error} />` : html`<${Loading} />`}`;
	const known = devices.filter((d) => d.is_active);
	const seen = known.filter((d) => d.last_seen_at && Date.now() - new Date(d.last_seen_at) < HOUR);
	const devName = (id) => (devices.find((d) => d.id === id) || {}).name || '—';
	const facName = (id) => ((facs.data || []).find((f) => f.id === id) || {}).name || '—';
	const all = isSuper() && !view.facility;
	const rate = (id) => (rates[id] === undefined ? '…' : `${Math.round(rates[id])}/s`);
	const attention = [
		known.length > seen.length && `${known.length - seen.length} device(s) not seen in the last hour`,
		failed.total > 0 && `${failed.total} failed transcode job(s)`,
		sessions.items.some((s) => s.missed_batches > 0) && 'active sessions with missed batches',
	].filter(Boolean);
	return html`<h1>Overview</h1>
	${st.error && html`<${ErrorBox} error=${st.error} />`}
	<ul class="cards">
		<li><span class="big" id="devices-seen">${seen.length} of ${known.length}</span> devices seen in the last hour</li>
		<li><span class="big" id="active-sessions">${sessions.total}</span> active sessions</li>
		<li><span class="big" id="failed-jobs">${failed.total}</span> failed transcode jobs</li>
	</ul>
	<h2>Needs attention</h2>
	${attention.length ? html`<ul class="attention">${attention.map((a) => html`<li>${a}</li>`)}</ul>`
		: html`<p class="state empty">Nothing: every device reported within the hour, no job failed.</p>`}
	${all && html`<h2>By facility</h2>
	<table id="by-facility"><thead><tr><th>Facility</th><th>Devices seen / known</th><th>Active sessions</th></tr></thead>
	<tbody>${(facs.data || []).map((f) => html`<tr><td>${f.name}</td>
		<td>${seen.filter((d) => d.facility_id === f.id).length} / ${known.filter((d) => d.facility_id === f.id).length}</td>
		<td>${sessions.items.filter((s) => s.facility_id === f.id).length}</td></tr>`)}</tbody></table>`}
	<h2>Active sessions</h2>
	${sessions.items.length ? html`<table id="live-sessions"><thead><tr><th>Session</th><th>Device</th>${all && html`<th>Facility</th>`}
		<th>Samples</th><th>Rate</th><th>Missed batches</th><th>Started</th></tr></thead>
	<tbody>${sessions.items.map((s) => html`<tr>
		<td><a href=${`#/sessions/${s.id}`}>${s.name || s.id.slice(0, 8)}</a></td><td>${devName(s.device_id)}</td>
		${all && html`<td>${facName(s.facility_id)}</td>`}
		<td>${s.total_samples}</td><td class="rate">${rate(s.id)}</td><td>${s.missed_batches}</td><td>${when(s.started_at)}</td>
	</tr>`)}</tbody></table>` : html`<p class="state empty">No active sessions: devices start one when they send.</p>`}
	<h2>Recent uploads</h2>
	${uploads.items.length ? html`<table id="recent-uploads"><thead><tr><th>File</th>${all && html`<th>Facility</th>`}<th>State</th><th>Uploaded</th></tr></thead>
	<tbody>${uploads.items.map((u) => html`<tr>
		<td><a href=${`#/uploads/${u.id}`}>${u.original_filename}</a></td>${all && html`<td>${facName(u.facility_id)}</td>`}
		<td><${Badge} s=${u.status} /></td><td>${when(u.created_at)}</td></tr>`)}</tbody></table>`
		: html`<p class="state empty">No uploads yet: <a href="#/uploads">upload files</a>.</p>`}
	<h2>Failed transcode jobs</h2>
	${failed.items.length ? html`<table><thead><tr><th>Upload</th><th>Error</th><th>Attempts</th><th>Finished</th></tr></thead>
	<tbody>${failed.items.map((j) => html`<tr><td><a href=${`#/uploads/${j.upload_id}`}>${j.upload_id.slice(0, 8)}</a></td>
		<td>${j.error_message || '—'}</td><td>${j.attempts}</td><td>${when(j.completed_at)}</td></tr>`)}</tbody></table>`
		: html`<p class="state empty">No failed jobs.</p>`}`;
}
