// face.mjs - try the face service (spec 3) on an image: detect draws the
// boxes and landmarks over it, mask shows the masked image to download.
// The service has its own origin (port); it must list the console's
// origin in FACE_API_CORS_ORIGINS (doc/console.md "Face page").
import { html, useState, useEffect, ErrorBox, useAction } from './ui.mjs';

const FACE = 'xmhub.face-url';
const defaultUrl = () => localStorage.getItem(FACE) || `${location.protocol}//${location.hostname}:8081`;

async function call(base, path, form) {
	const res = await fetch(`${base.replace(/\/$/, '')}${path}`, { method: 'POST', body: form });
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

export function Face() {
	const [base, setBase] = useState(defaultUrl());
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
	const saveBase = (v) => {
		setBase(v);
		localStorage.setItem(FACE, v);
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
		<label>Face service <input type="url" value=${base} onChange=${(e) => saveBase(e.target.value)} /></label>
		<label>Image <input type="file" accept="image/jpeg,image/png,image/webp,image/bmp,image/tiff" onChange=${pick} id="face-file" /></label>
		<label>Method <select value=${method} onChange=${(e) => setMethod(e.target.value)}>
			${['gaussian', 'pixelate', 'solid', 'elliptical'].map((m) => html`<option value=${m}>${m}</option>`)}</select></label>
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
