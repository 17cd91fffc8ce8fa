// SPDX-License-Identifier: MIT
// ui.mjs - shared pieces of the console's pages: htm bound to Preact,
// loading / empty / error states, the pager, the facility in view.
import { h, render } from '../vendor/preact.mjs';
import { useState, useEffect, useCallback } from '../vendor/hooks.mjs';
import htm from '../vendor/htm.mjs';
import { api, auth, ApiError } from './api.mjs';

export const html = htm.bind(h);
export { h, render, useState, useEffect, useCallback };

export const ROLES = ['user', 'facility_admin', 'super_admin'];
export const rank = (role) => ROLES.indexOf(role);
export const isAdmin = () => auth.user && rank(auth.user.role) >= 1;
export const isSuper = () => auth.user && auth.user.role === 'super_admin';

// The axes' font (charts, spectrogram) and a text's width in it, in px.
export const AXIS_FONT = '12px system-ui, sans-serif';
let measurer = null;
export function textWidth(s) {
	if (!measurer) {
		measurer = document.createElement('canvas').getContext('2d');
		measurer.font = AXIS_FONT;
	}
	return measurer.measureText(s).width;
}

// The facility a super admin looks at ('' = all), kept for the tab.
const FAC = 'xmhub.facility';
export const view = {
	get facility() {
		return isSuper() ? sessionStorage.getItem(FAC) || '' : '';
	},
	set facility(id) {
		sessionStorage.setItem(FAC, id || '');
	},
};
// The facility_id query of a list.
export const facQuery = () => (view.facility ? { facility_id: view.facility } : {});

// useLoad(fn, deps): {data, error, loading, reload} of an async call.
// A reload that fails keeps the data of the last one that worked (with
// the error beside it), so that a live page outlives a passing failure
// (a restart, a 503) and reads again; new deps that fail show no data.
export function useLoad(fn, deps) {
	const [st, set] = useState({ data: null, error: null, loading: true, key: null });
	const [n, bump] = useState(0);
	const key = JSON.stringify(deps);
	useEffect(() => {
		let live = true;
		set((s) => ({ ...s, loading: true, error: null }));
		fn().then(
			(data) => live && set({ data, error: null, loading: false, key }),
			(error) => live && set((s) => ({ data: s.key === key ? s.data : null, error, loading: false, key })),
		);
		return () => {
			live = false;
		};
	}, [...deps, n]);
	return { ...st, reload: () => bump((x) => x + 1) };
}

export const Loading = () => html`<p class="state" role="status">Loading…</p>`;
export const Empty = ({ children }) => html`<p class="state empty">${children}</p>`;
export const ErrorBox = ({ error }) =>
	error ? html`<p class="error" role="alert">${error.message || String(error)}</p>` : null;

// Loaded({st, empty, children}): the states of a useLoad, children(data)
// when there is data (under the error of a reload that failed).
export function Loaded({ st, empty, children }) {
	if (st.loading && !st.data) return html`<${Loading} />`;
	if (st.error && !st.data) return html`<${ErrorBox} error=${st.error} />`;
	const d = st.data;
	const items = Array.isArray(d) ? d : d && d.items;
	const body = items && items.length === 0 ? html`<${Empty}>${empty}<//>` : children(d);
	// The same tree with or without the error: a live page's children
	// (charts) are kept, not made anew.
	return html`<${ErrorBox} error=${st.error} />${body}`;
}

export function Pager({ page, data, onPage }) {
	if (!data || data.total <= data.per_page) return null;
	const last = Math.max(1, Math.ceil(data.total / data.per_page));
	return html`<nav class="pager" aria-label="pages">
		<button type="button" disabled=${page <= 1} onClick=${() => onPage(page - 1)}>Previous</button>
		<span>page ${page} of ${last} (${data.total})</span>
		<button type="button" disabled=${page >= last} onClick=${() => onPage(page + 1)}>Next</button>
	</nav>`;
}

export const when = (t) => (t ? new Date(t).toLocaleString() : '—');
export const bytes = (n) =>
	n == null ? '—' : n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB`
		: `${(n / 1048576).toFixed(1)} MiB`;

// An optional media route (spectrogram, waveform): {none: detail} on
// 404 (not made, or not yet) and 409 (the upload failed).
export async function optional(path, query) {
	try {
		return await api('GET', path, { raw: true, query });
	} catch (e) {
		if (e instanceof ApiError && (e.status === 404 || e.status === 409)) return { none: e.message };
		throw e;
	}
}

// Storage({id}): what facility id stores against its quota
// (GET /api/v1/facilities/{id}/storage, doc/storage.md): a meter and the
// figures; nothing for no facility.
export function Storage({ id }) {
	const st = useLoad(() => (id ? api('GET', `/api/v1/facilities/${id}/storage`) : Promise.resolve(null)), [id]);
	const s = st.data;
	if (!id || !s) return null;
	const of = s.quota_bytes == null ? 'no quota' : `of ${bytes(s.quota_bytes)}`;
	return html`<p class="storage" id=${`storage-${id}`}>
		${s.quota_bytes != null && html`<meter min="0" max=${s.quota_bytes} high=${s.quota_bytes * 0.9}
			value=${Math.min(s.used_bytes, s.quota_bytes)} aria-label="storage used"></meter>`}
		<span>Storage: ${bytes(s.used_bytes)} used ${of} (uploads ${bytes(s.upload_bytes)}, samples ${bytes(s.sample_bytes)})</span></p>`;
}

// A form's fields as an object (FormData), empty strings left out.
export function fields(form) {
	const o = {};
	for (const [k, v] of new FormData(form)) if (v !== '') o[k] = v;
	return o;
}

// useAction(): [run(fn), busy, error] for a button or form that calls
// the API and shows the {"detail"} of a failure.
export function useAction() {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const run = useCallback(async (fn) => {
		setBusy(true);
		setError(null);
		try {
			return await fn();
		} catch (e) {
			setError(e);
			return undefined;
		} finally {
			setBusy(false);
		}
	}, []);
	return [run, busy, error];
}

export const Badge = ({ s }) => html`<span class=${`badge b-${s}`}>${s}</span>`;

// The facility picker of a create form for a super admin.
export function FacilityField({ facilities }) {
	if (!isSuper()) return null;
	return html`<label>Facility
		<select name="facility_id" required value=${view.facility}>
			<option value="">choose…</option>
			${(facilities || []).map((f) => html`<option value=${f.id}>${f.name}</option>`)}
		</select></label>`;
}
