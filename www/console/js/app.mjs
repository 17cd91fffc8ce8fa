// SPDX-License-Identifier: MIT
// app.mjs - the console's shell: sign in, the navigation (by role), the
// facility switch of a super admin and the hash routes of the pages.
import { login, signOut, resume, onAuthChange, auth } from './api.mjs';
import {
	html, render, useState, useEffect, ErrorBox, useAction, isAdmin, isSuper, view, Loading,
} from './ui.mjs';
import { Facilities, Users, ApiKeys, Devices, Tags, useFacilities } from './admin.mjs';
import { Uploads, UploadPage } from './uploads.mjs';
import { Sessions, SessionPage } from './sessions.mjs';
import { Face, FaceVideo } from './face.mjs';
import { Overview } from './overview.mjs';
import { Alarms } from './alarms.mjs';

function SignIn() {
	const [run, busy, error] = useAction();
	const submit = (e) => {
		e.preventDefault();
		const f = e.target;
		run(() => login(f.email.value, f.password.value));
	};
	return html`<main class="signin" id="main">
		<h1>xmhub console</h1>
		<form onSubmit=${submit} aria-label="sign in">
			<label>E-mail <input name="email" type="email" autocomplete="username" required autofocus /></label>
			<label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
			<${ErrorBox} error=${error} />
			<button disabled=${busy}>Sign in</button>
		</form>
	</main>`;
}

const PAGES = [
	{ path: 'overview', name: 'Overview', page: Overview },
	{ path: 'uploads', name: 'Uploads', page: Uploads },
	{ path: 'sessions', name: 'Sessions', page: Sessions },
	{ path: 'alarms', name: 'Alarms', page: Alarms },
	{ path: 'devices', name: 'Devices', page: Devices },
	{ path: 'tags', name: 'Tags', page: Tags },
	{ path: 'users', name: 'Users', page: Users, admin: true },
	{ path: 'api-keys', name: 'API keys', page: ApiKeys, admin: true },
	{ path: 'facilities', name: 'Facilities', page: Facilities, super: true },
	{ path: 'face', name: 'Face', page: Face },
	{ path: 'face-video', name: 'Face video', page: FaceVideo },
];

const allowed = (p) => (!p.admin || isAdmin()) && (!p.super || isSuper());

// The page of an empty hash (`/`, where signing in starts) and of `#/`.
const LANDING = 'overview';

function route() {
	const [first, id] = location.hash.replace(/^#\/?/, '').split('/');
	const top = first || LANDING;
	if (top === 'uploads' && id) return { key: 'upload', el: html`<${UploadPage} id=${id} />`, top };
	if (top === 'sessions' && id) return { key: 'session', el: html`<${SessionPage} id=${id} />`, top };
	const p = PAGES.find((x) => x.path === top && allowed(x));
	if (!p) return { key: 'none', el: html`<h1>Not found</h1><p>No such page. <a href="#/overview">Overview</a></p>`, top };
	return { key: p.path, el: html`<${p.page} />`, top };
}

function FacilitySwitch({ onChange }) {
	const facs = useFacilities();
	if (!isSuper()) return null;
	return html`<label class="facility">Facility
		<select id="facility-switch" value=${view.facility} onChange=${(e) => { view.facility = e.target.value; onChange(); }}>
			<option value="">all facilities</option>
			${(facs.data || []).map((f) => html`<option value=${f.id}>${f.name}</option>`)}
		</select></label>`;
}

function Shell() {
	const [r, setR] = useState(route());
	const [n, bump] = useState(0);
	const [menu, setMenu] = useState(false);
	useEffect(() => {
		const on = () => {
			setR(route());
			setMenu(false);
		};
		addEventListener('hashchange', on);
		return () => removeEventListener('hashchange', on);
	}, []);
	useEffect(() => {
		document.title = `${(PAGES.find((p) => p.path === r.top) || { name: 'xmhub' }).name} · xmhub console`;
	}, [r]);
	const u = auth.user;
	return html`<a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById('main').focus(); }}>Skip to content</a>
	<header class="top">
		<a class="brand" href="#/overview">xmhub</a>
		<button type="button" class="menu-btn" aria-expanded=${menu} aria-controls="nav" onClick=${() => setMenu(!menu)}>Menu</button>
		<nav id="nav" class=${menu ? 'open' : ''} aria-label="main">
			${PAGES.filter(allowed).map((p) => html`<a href=${`#/${p.path}`} aria-current=${r.top === p.path ? 'page' : undefined}>${p.name}</a>`)}
		</nav>
		<div class="who">
			<${FacilitySwitch} onChange=${() => bump(n + 1)} />
			<span class="muted">${u.display_name || u.email} (${u.role})</span>
			<button type="button" class="small" id="sign-out" onClick=${signOut}>Sign out</button>
		</div>
	</header>
	<main id="main" tabindex="-1" key=${`${r.key}-${n}`}>${r.el}</main>`;
}

function App() {
	const [user, setUser] = useState(undefined);
	useEffect(() => {
		const off = onAuthChange((x) => setUser(x || null));
		resume().then((ok) => { if (!ok) setUser(null); });
		return off;
	}, []);
	if (user === undefined) return html`<${Loading} />`;
	return user ? html`<${Shell} />` : html`<${SignIn} />`;
}

// Shares refreshes across reloads (sw.js, doc/console.md); without it
// (a browser that refuses workers) the console runs all the same.
if ('serviceWorker' in navigator) navigator.serviceWorker.register('sw.js').catch(() => null);
render(html`<${App} />`, document.getElementById('app'));
