// SPDX-License-Identifier: MIT
// face.mjs - try the face service (spec 3) on an image: detect draws the
// boxes and landmarks over it, mask shows the masked image to download;
// and mask the faces of a video (a job of the service).
// The service has its own origin (port); it must list the console's
// origin in FACE_API_CORS_ORIGINS (doc/console.md "Face page").
import { html, useState, useEffect, ErrorBox, useAction, Badge } from './ui.mjs';

const FACE = 'xmhub.face-url';
const defaultUrl = () => localStorage.getItem(FACE) || `${location.protocol}//${location.hostname}:8081`;

// A call of the face service: the Response, or an Error with its detail.
async function call(base, path, form, method = 'POST') {
	const res = await fetch(`${base.replace(/\/$/, '')}${path}`, { method, body: form });
	if (!res.ok) {
		let detail = `${res.status} ${res.statusText}`;
		try {
			const b = await res.json();
			if (b && b.detail) detail = typeof b.detail === 'string' ? b.detail : JSON.stringify(b.detail);
		} catch (e) {
			/* not JSON */
		}
		throw new Error(detail);
	}
	return res;
}

const MARKS = ['left_eye', 'right_eye', 'nose', 'left_mouth', 'right_mouth'];

// The service's address, a field kept in localStorage.
function useBase() {
	const [base, setBase] = useState(defaultUrl());
	const field = html`<label>Face service <input type="url" value=${base}
		onChange=${(e) => { setBase(e.target.value); localStorage.setItem(FACE, e.target.value); }} /></label>`;
	return [base, field];
}

const METHODS = ['gaussian', 'pixelate', 'solid', 'elliptical'];
const MethodField = ({ method, set }) => html`<label>Method <select value=${method} onChange=${(e) => set(e.target.value)}>
	${METHODS.map((m) => html`<option value=${m}>${m}</option>`)}</select></label>`;

export function Face() {
	const [base, baseField] = useBase();
	const [file, setFile] = useState(null);
	const [src, setSrc] = useState(null);
	const [det, setDet] = useState(null);
	const [masked, setMasked] = useState(null);
	const [method, setMethod] = useState('gaussian');
	const [run, busy, error] = useAction();
	useEffect(() => () => { if (src) URL.revokeObjectURL(src); }, [src]);
	useEffect(() => () => { if (masked) URL.revokeObjectURL(masked.url); }, [masked]);
	const pick = (e) => {
		const f = e.target.files[0];
		if (!f) return;
		setFile(f);
		setSrc(URL.createObjectURL(f));
		setDet(null);
		setMasked(null);
	};
	const form = () => {
		const f = new FormData();
		f.append('image', file, file.name);
		return f;
	};
	const detect = () => run(async () => setDet(await (await call(base, '/api/v1/detect', form())).json()));
	const mask = () => run(async () => {
		const f = form();
		f.append('method', method);
		const res = await call(base, '/api/v1/mask', f);
		const blob = await res.blob();
		setMasked({ url: URL.createObjectURL(blob), faces: res.headers.get('X-Face-Count'), type: blob.type });
	});
	const img = det && det.image;
	return html`<h1>Face detection and masking</h1>
	<form class="inline" onSubmit=${(e) => e.preventDefault()}>
		${baseField}
		<label>Image <input type="file" accept="image/jpeg,image/png,image/webp,image/bmp,image/tiff" onChange=${pick} id="face-file" /></label>
		<${MethodField} method=${method} set=${setMethod} />
		<button type="button" disabled=${!file || busy} onClick=${detect}>Detect faces</button>
		<button type="button" disabled=${!file || busy} onClick=${mask}>Mask faces</button>
	</form>
	<${ErrorBox} error=${error} />
	${busy && html`<p class="state" role="status">Working…</p>`}
	${!file && html`<p class="state empty">Choose an image to try the service.</p>`}
	<div class="face-grid">
	${src && html`<figure>
		<div class="overlay">
			<img src=${src} alt="the chosen image" />
			${img && html`<svg viewBox=${`0 0 ${img.width} ${img.height}`} preserveAspectRatio="none" role="img"
				aria-label=${`${det.detections.length} faces found`} id="face-boxes">
				${det.detections.map((d) => html`<g>
					<rect x=${d.bbox.x1} y=${d.bbox.y1} width=${d.bbox.x2 - d.bbox.x1} height=${d.bbox.y2 - d.bbox.y1}
						fill="none" stroke="#00e070" stroke-width=${Math.max(2, img.width / 300)} />
					${d.landmarks && MARKS.filter((k) => d.landmarks[k]).map((k) => html`<circle cx=${d.landmarks[k].x}
						cy=${d.landmarks[k].y} r=${Math.max(2, img.width / 200)} fill="#ff3b30" />`)}
				</g>`)}
			</svg>`}
		</div>
		<figcaption>${det ? `${det.detections.length} face(s) found` : 'Original'}</figcaption>
	</figure>`}
	${masked && html`<figure>
		<img src=${masked.url} alt="the masked image" id="masked" />
		<figcaption>${masked.faces} face(s) masked —
			<a href=${masked.url} download=${`masked-${file.name}`}>download</a></figcaption>
	</figure>`}
	</div>
	${det && html`<table><thead><tr><th>#</th><th>Confidence</th><th>Box (x1, y1, x2, y2)</th></tr></thead>
		<tbody>${det.detections.map((d, i) => html`<tr><td>${i + 1}</td><td>${d.confidence.toFixed(3)}</td>
			<td>${[d.bbox.x1, d.bbox.y1, d.bbox.x2, d.bbox.y2].map((v) => Math.round(v)).join(', ')}</td></tr>`)}</tbody></table>`}`;
}

// Video anonymization (doc/face-video.md): the video is queued as a job
// of the face service, followed every second until it is over, and the
// masked result fetched as a blob to play and download (the CSP's
// media-src admits blob:, not the service's origin).
const OVER = new Set(['completed', 'failed', 'cancelled']);

export function FaceVideo() {
	const [base, baseField] = useBase();
	const [file, setFile] = useState(null);
	const [method, setMethod] = useState('gaussian');
	const [job, setJob] = useState(null);
	const [result, setResult] = useState(null);
	const [run, busy, error] = useAction();
	const jobPath = (id) => `/api/v1/video-jobs/${id}`;
	useEffect(() => () => { if (result) URL.revokeObjectURL(result.url); }, [result]);
	// Follows the job while it is not over; fetches the result once.
	useEffect(() => {
		if (!job) return undefined;
		if (job.state === 'completed' && !result) {
			run(async () => {
				const blob = await (await call(base, `${jobPath(job.id)}/result`, undefined, 'GET')).blob();
				setResult({ url: URL.createObjectURL(blob), type: blob.type });
			});
		}
		if (OVER.has(job.state)) return undefined;
		const t = setTimeout(() => run(async () => setJob(await (await call(base, jobPath(job.id), undefined, 'GET')).json())), 1000);
		return () => clearTimeout(t);
	}, [job]);
	const submit = () => run(async () => {
		const f = new FormData();
		f.append('method', method);
		f.append('video', file, file.name);
		setResult(null);
		setJob(await (await call(base, '/api/v1/mask-video', f)).json());
	});
	const cancel = () => run(async () => setJob(await (await call(base, jobPath(job.id), undefined, 'DELETE')).json()));
	const ext = result && /matroska/.test(result.type) ? 'mkv' : 'mp4';
	return html`<h1>Video anonymization</h1>
	<form class="inline" onSubmit=${(e) => e.preventDefault()}>
		${baseField}
		<label>Video <input type="file" accept="video/*" id="video-file" onChange=${(e) => { setFile(e.target.files[0] || null); }} /></label>
		<${MethodField} method=${method} set=${setMethod} />
		<button type="button" disabled=${!file || busy || (job && !OVER.has(job.state))} onClick=${submit}>Mask faces in the video</button>
	</form>
	<${ErrorBox} error=${error} />
	${!job && html`<p class="state empty">Choose a video (MP4, WebM, MKV, MOV…): the face service masks every face in every frame,
		as a job that needs its storage on (FACE_API_STORAGE_ENABLED).</p>`}
	${job && html`<section aria-label="the job">
		<dl class="facts">
			<dt>Job</dt><dd><code>${job.id}</code></dd>
			<dt>State</dt><dd id="video-state"><${Badge} s=${job.state} /></dd>
			<dt>Frames</dt><dd><progress max=${job.frames_total || 1} value=${job.frames_done || 0}
				aria-label="frames masked"></progress> ${job.frames_done || 0} of ${job.frames_total || '?'}${job.fps ? ` at ${job.fps.toFixed(1)} frames/s` : ''}</dd>
			${job.faces_masked != null && html`<dt>Faces masked</dt><dd>${job.faces_masked}</dd>`}
			${job.error && html`<dt>Error</dt><dd class="error">${job.error}</dd>`}
		</dl>
		${!OVER.has(job.state) && html`<button type="button" class="danger" onClick=${cancel}>Cancel</button>`}
	</section>`}
	${result && html`<figure>
		<video controls src=${result.url} id="masked-video"></video>
		<figcaption>The masked video — <a href=${result.url} download=${`masked-${file.name.replace(/\.\w+$/, '')}.${ext}`}>download</a></figcaption>
	</figure>`}`;
}
