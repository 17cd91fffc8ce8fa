// SPDX-License-Identifier: MIT
// overview.mjs - the landing page: what an admin looks at first, for the
// facility in view (every facility for a super admin, with a line per
// facility): devices seen in the last hour of those known, the active
// sessions with their sample rates (from the counters of two reads),
// the newest uploads with their state, the failed transcode jobs and the
// storage used against the quota. The figures come from the lists of the
// API and the facilities' storage (doc/console.md "Overview").
import { api, auth } from './api.mjs';
import {
	html, useState, useEffect, useLoad, ErrorBox, Loading, Badge, when, bytes, facQuery, view, isSuper, Storage,
} from './ui.mjs';
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

// Each facility's storage ({id: answer}), read with the overview; an
// answer that fails leaves its facility out.
function useStorage(ids, stamp) {
	const [all, setAll] = useState({});
	const key = ids.join(',');
	useEffect(() => {
		let dead = false;
		Promise.all(ids.map((id) => api('GET', `/api/v1/facilities/${id}/storage`).then((s) => [id, s], () => null)))
			.then((list) => !dead && setAll(Object.fromEntries(list.filter(Boolean))));
		return () => { dead = true; };
	}, [key, stamp]);
	return all;
}

// Used of quota for the table: "1.2 MiB of 10.0 MiB (12 %)" or "1.2 MiB
// (no quota)".
function usedOf(s) {
	if (!s) return '…';
	if (s.quota_bytes == null) return `${bytes(s.used_bytes)} (no quota)`;
	return `${bytes(s.used_bytes)} of ${bytes(s.quota_bytes)} (${Math.round((100 * s.used_bytes) / Math.max(1, s.quota_bytes))} %)`;
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
	const all = isSuper() && !view.facility;
	// The facility in view (one's own, or the one a super admin picked),
	// else every facility (a super admin on all facilities); read again
	// every minute, not at every refresh of the lists.
	const fac = view.facility || (auth.user && auth.user.facility_id);
	const [minute, setMinute] = useState(0);
	useEffect(() => {
		const t = setInterval(() => setMinute((m) => m + 1), 60000);
		return () => clearInterval(t);
	}, []);
	const store = useStorage(all ? (facs.data || []).map((f) => f.id) : [], minute);
	const total = Object.values(store).reduce((a, s) => a + s.used_bytes, 0);
	const full = Object.values(store).filter((s) => s.quota_bytes != null && s.used_bytes >= 0.9 * s.quota_bytes);
	// Live: everything is read again LIVE_MS after the last read ended,
	// also when it failed (the last figures stay, under the error).
	useEffect(() => {
		if (st.loading || !st.data) return undefined;
		const t = setTimeout(st.reload, LIVE_MS);
		return () => clearTimeout(t);
	}, [st.loading]);
	if (!st.data) return html`<h1>Overview</h1>${st.error ? html`<${ErrorBox} error=${st.error} />` : html`<${Loading} />`}`;
	const known = devices.filter((d) => d.is_active);
	const seen = known.filter((d) => d.last_seen_at && Date.now() - new Date(d.last_seen_at) < HOUR);
	const devName = (id) => (devices.find((d) => d.id === id) || {}).name || '—';
	const facName = (id) => ((facs.data || []).find((f) => f.id === id) || {}).name || '—';
	const rate = (id) => (rates[id] === undefined ? '…' : `${Math.round(rates[id])}/s`);
	const attention = [
		known.length > seen.length && `${known.length - seen.length} device(s) not seen in the last hour`,
		failed.total > 0 && `${failed.total} failed transcode job(s)`,
		sessions.items.some((s) => s.missed_batches > 0) && 'active sessions with missed batches',
		full.length > 0 && `${full.length} facilit${full.length === 1 ? 'y' : 'ies'} at 90 % of the storage quota or more`,
	].filter(Boolean);
	return html`<h1>Overview</h1>
	${st.error && html`<${ErrorBox} error=${st.error} />`}
	<ul class="cards">
		<li><span class="big" id="devices-seen">${seen.length} of ${known.length}</span> devices seen in the last hour</li>
		<li><span class="big" id="active-sessions">${sessions.total}</span> active sessions</li>
		<li><span class="big" id="failed-jobs">${failed.total}</span> failed transcode jobs</li>
		${all && html`<li><span class="big" id="storage-total">${bytes(total)}</span> stored in all facilities</li>`}
	</ul>
	${!all && html`<${Storage} id=${fac} key=${`${fac}-${minute}`} />`}
	<h2>Needs attention</h2>
	${attention.length ? html`<ul class="attention">${attention.map((a) => html`<li>${a}</li>`)}</ul>`
		: html`<p class="state empty">Nothing: every device reported within the hour, no job failed.</p>`}
	${all && html`<h2>By facility</h2>
	<table id="by-facility"><thead><tr><th>Facility</th><th>Devices seen / known</th><th>Active sessions</th><th>Storage used</th></tr></thead>
	<tbody>${(facs.data || []).map((f) => html`<tr data-facility=${f.id}><td>${f.name}</td>
		<td>${seen.filter((d) => d.facility_id === f.id).length} / ${known.filter((d) => d.facility_id === f.id).length}</td>
		<td>${sessions.items.filter((s) => s.facility_id === f.id).length}</td>
		<td class="storage-used">${usedOf(store[f.id])}</td></tr>`)}</tbody></table>`}
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
