// SPDX-License-Identifier: MIT
// uploads.mjs - uploads: drag-and-drop multi-upload with progress, the
// list, and an upload's page (player, spectrogram of spectro.mjs,
// waveform, jobs).
import { api, auth, uploadFile, mediaUrl } from './api.mjs';
import {
	html, useState, useEffect, useLoad, Loaded, ErrorBox, Empty, Pager, useAction,
	when, bytes, Badge, isAdmin, facQuery, view, Storage, optional,
} from './ui.mjs';
import { TagChip } from './admin.mjs';
import { UploadSpectrogram } from './spectro.mjs';

// The API key uploads are sent with (POST /api/v1/uploads takes keys
// only): memory of this tab only (doc/console.md).
let uploadKey = '';
export function setUploadKey(k) {
	uploadKey = k;
}

const STATUSES = ['pending', 'processing', 'completed', 'failed'];

function Dropper({ onDone }) {
	const [key, setKey] = useState(uploadKey);
	const [items, setItems] = useState([]);
	const [over, setOver] = useState(false);
	const update = (i, o) => setItems((all) => all.map((x, j) => (j === i ? { ...x, ...o } : x)));
	const send = (files) => {
		if (!key) {
			setItems([{ name: 'no key', error: 'Enter an API key with the upload scope first.' }]);
			return;
		}
		uploadKey = key;
		const base = items.length;
		const list = [...files].map((f) => ({ name: f.name, size: f.size, p: 0 }));
		setItems((all) => [...all, ...list]);
		[...files].forEach((f, k) => uploadFile(f, key, [], (p) => update(base + k, { p }))
			.then((u) => { update(base + k, { p: 1, done: u.id }); onDone(); },
				(e) => update(base + k, { error: e.message })));
	};
	return html`<section class="drop-area" aria-label="upload files">
		<label>API key with the upload scope
			<input type="password" autocomplete="off" value=${key} onInput=${(e) => setKey(e.target.value)} placeholder="xmk_…" /></label>
		<div class=${`drop ${over ? 'over' : ''}`} id="dropzone"
			onDragOver=${(e) => { e.preventDefault(); setOver(true); }}
			onDragLeave=${() => setOver(false)}
			onDrop=${(e) => { e.preventDefault(); setOver(false); send(e.dataTransfer.files); }}>
			<p>Drop audio files here, or</p>
			<label class="button">Choose files<input type="file" multiple class="sr" id="file-input"
				onChange=${(e) => { send(e.target.files); e.target.value = ''; }} /></label>
		</div>
		${items.length > 0 && html`<ul class="progress-list">${items.map((it) => html`<li>
			<span>${it.name}</span>
			${it.error ? html`<span class="error" role="alert">${it.error}</span>`
				: html`<progress max="1" value=${it.p} aria-label=${`upload of ${it.name}`}></progress>
				<span>${it.done ? html`<a href=${`#/uploads/${it.done}`}>done</a>` : `${Math.round(it.p * 100)} %`}</span>`}
		</li>`)}</ul>`}
	</section>`;
}

export function Uploads() {
	const [status, setStatus] = useState('');
	const [page, setPage] = useState(1);
	const st = useLoad(() => api('GET', '/api/v1/uploads', { query: { ...facQuery(), status, page, per_page: 20 } }),
		[status, page, view.facility]);
	// Follow uploads still being transcoded.
	useEffect(() => {
		const busy = st.data && st.data.items.some((u) => u.status === 'pending' || u.status === 'processing');
		if (!busy) return undefined;
		const t = setTimeout(st.reload, 2000);
		return () => clearTimeout(t);
	}, [st.data]);
	// The facility in view: the caller's own, or the one a super admin
	// picked; its storage follows the list.
	const fac = view.facility || (auth.user && auth.user.facility_id);
	return html`<h1>Uploads</h1>
	<${Storage} id=${fac} key=${`${fac}-${st.data ? st.data.total : ''}`} />
	<${Dropper} onDone=${st.reload} />
	<div class="filters">
		<label>Status <select value=${status} onChange=${(e) => { setStatus(e.target.value); setPage(1); }}>
			<option value="">any</option>${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}</select></label>
	</div>
	<${Loaded} st=${st} empty="No uploads yet: drop a file above.">${(d) => html`
	<table><thead><tr><th>File</th><th>Format</th><th>Size</th><th>Status</th><th>Tags</th><th>Uploaded</th></tr></thead>
	<tbody>${d.items.map((u) => html`<tr>
		<td><a href=${`#/uploads/${u.id}`}>${u.original_filename}</a></td><td>${u.original_format || '—'}</td>
		<td>${bytes(u.original_size_bytes)}</td><td><${Badge} s=${u.status} /></td>
		<td>${(u.tags || []).map((t) => html`<${TagChip} t=${t} />`)}</td><td>${when(u.created_at)}</td>
	</tr>`)}</tbody></table>
	<${Pager} page=${page} data=${d} onPage=${setPage} />`}<//>`;
}

// The [min, max] pairs of a waveform answer (audiowaveform's JSON,
// version 2: data holds min, max of each pixel, one channel).
function peaks(w) {
	if (!w || !Array.isArray(w.data) || w.data.length < 2) return null;
	const p = [];
	for (let i = 0; i + 1 < w.data.length; i += 2) p.push([w.data[i], w.data[i + 1]]);
	return p;
}

function Waveform({ id, durationMs }) {
	// About 1000 pixels over the recording (200 per second at most).
	const pps = Math.max(1, Math.min(200, Math.floor(1000 / Math.max(0.001, (durationMs || 5000) / 1000))));
	const st = useLoad(async () => {
		const r = await optional(`/api/v1/uploads/${id}/waveform.json`, { pixels_per_second: pps });
		return r.none !== undefined ? r : r.json();
	}, [id]);
	if (st.loading) return html`<p class="state">Loading waveform…</p>`;
	if (st.error) return html`<${ErrorBox} error=${st.error} />`;
	const p = st.data.none === undefined && peaks(st.data);
	if (!p) return html`<${Empty}>No waveform for this upload${st.data.none ? ` (${st.data.none})` : ''}.<//>`;
	const top = Math.max(1, ...p.map(([a, b]) => Math.max(Math.abs(a), Math.abs(b))));
	const d = p.map(([a, b], i) => `M${i} ${50 - (b / top) * 48}V${50 - (a / top) * 48}`).join('');
	return html`<svg class="waveform" viewBox=${`0 0 ${p.length} 100`} preserveAspectRatio="none" role="img" aria-label="waveform">
		<path d=${d} stroke="#3366cc" stroke-width="1" vector-effect="non-scaling-stroke" /></svg>`;
}

function Player({ id }) {
	const [src, setSrc] = useState(null);
	const [error, setError] = useState(null);
	const renew = () => mediaUrl(`/api/v1/streams/${id}`).then(setSrc, setError);
	useEffect(() => { renew(); }, [id]);
	// A signed URL lives 10 minutes: a new one when the player fails
	// (keeping the position).
	const onError = (e) => {
		const a = e.target;
		const t = a.currentTime;
		mediaUrl(`/api/v1/streams/${id}`).then((u) => {
			if (u === src) return;
			setSrc(u);
			a.addEventListener('loadedmetadata', () => { a.currentTime = t; }, { once: true });
		}, setError);
	};
	if (error) return html`<${ErrorBox} error=${error} />`;
	if (!src) return html`<p class="state">Loading player…</p>`;
	return html`<audio controls preload="metadata" src=${src} id="player" onError=${onError}
		aria-label="transcoded audio"></audio>`;
}

export function UploadPage({ id }) {
	const st = useLoad(() => api('GET', `/api/v1/uploads/${id}`), [id]);
	const jobs = useLoad(() => api('GET', '/api/v1/transcode-jobs', { query: { upload_id: id, per_page: 100 } })
		.then((d) => d.items), [id]);
	const tags = useLoad(() => api('GET', '/api/v1/tags', { query: facQuery() }), []);
	const [run, busy, error] = useAction();
	const u = st.data;
	useEffect(() => {
		if (!u || (u.status !== 'pending' && u.status !== 'processing')) return undefined;
		const t = setTimeout(() => { st.reload(); jobs.reload(); }, 1500);
		return () => clearTimeout(t);
	}, [u]);
	const act = (fn) => run(async () => { await fn(); st.reload(); jobs.reload(); });
	const setTags = (tagId, on) => act(() => api('PATCH', `/api/v1/uploads/${id}`, {
		json: { tags: (on ? [...u.tags.map((t) => t.id), tagId] : u.tags.map((t) => t.id).filter((x) => x !== tagId)) },
	}));
	const del = () => run(async () => {
		if (!confirm('Delete this upload and its transcodes?')) return;
		await api('DELETE', `/api/v1/uploads/${id}`);
		location.hash = '#/uploads';
	});
	return html`<p><a href="#/uploads">← Uploads</a></p>
	<${Loaded} st=${st}>${() => html`
	<h1>${u.original_filename}</h1>
	<dl class="facts">
		<dt>Status</dt><dd><${Badge} s=${u.status} /></dd>
		<dt>Format</dt><dd>${u.original_format || '—'}</dd>
		<dt>Size</dt><dd>${bytes(u.original_size_bytes)}</dd>
		<dt>Duration</dt><dd>${u.duration_ms != null ? `${(u.duration_ms / 1000).toFixed(2)} s` : '—'}</dd>
		<dt>Uploaded</dt><dd>${when(u.created_at)}</dd>
	</dl>
	<${ErrorBox} error=${error} />
	<h2>Listen</h2>
	${u.status === 'completed' ? html`<${Player} id=${id} />` : html`<${Empty}>The audio plays once its transcode has completed.<//>`}
	<h2>Spectrogram</h2><${UploadSpectrogram} id=${id} u=${u} />
	<h2>Waveform</h2><${Waveform} id=${id} durationMs=${u.duration_ms} />
	<h2>Tags</h2>
	<${Loaded} st=${tags} empty="No tags in this facility.">${(all) => html`<fieldset class="tag-pick"><legend class="sr">tags</legend>
		${all.filter((t) => t.facility_id === u.facility_id).map((t) => html`<label class="check">
			<input type="checkbox" checked=${u.tags.some((x) => x.id === t.id)} disabled=${busy}
				onChange=${(e) => setTags(t.id, e.target.checked)} /> <${TagChip} t=${t} /></label>`)}</fieldset>`}<//>
	<h2>Transcode jobs</h2>
	<${Loaded} st=${jobs} empty="No transcode jobs.">${(list) => html`
	<table><thead><tr><th>Target</th><th>Status</th><th>Attempts</th><th>Queued</th><th>Error</th><th><span class="sr">Actions</span></th></tr></thead>
	<tbody>${list.map((j) => html`<tr><td>${j.target_format}</td><td><${Badge} s=${j.status} /></td>
		<td>${j.attempts}/${j.max_attempts}</td><td>${when(j.queued_at)}</td><td>${j.error_message || ''}</td>
		<td>${isAdmin() && (j.status === 'queued' || j.status === 'running') && html`<button type="button" class="small" data-edit
			onClick=${() => act(() => api('POST', `/api/v1/transcode-jobs/${j.id}/cancel`))}>Cancel</button>`}</td></tr>`)}</tbody></table>`}<//>
	<p class="actions">
		<button type="button" disabled=${busy} onClick=${() => act(() => api('POST', `/api/v1/uploads/${id}/retranscode`))}>Transcode again</button>
		<button type="button" class="danger" disabled=${busy} onClick=${del}>Delete upload</button>
	</p>`}<//>`;
}
