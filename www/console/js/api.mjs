// SPDX-License-Identifier: MIT
// api.mjs - the console's calls of the platform API: tokens, refresh,
// errors as {"detail"} (doc/console.md "Tokens").
//
// The access token lives in memory only; the refresh token in
// sessionStorage (this tab only, gone when it closes), so that a reload
// keeps the login.  One refresh at a time: the API takes a refresh token
// presented twice as stolen and ends the login.

const RT = 'xmhub.refresh';
let access = null;
let refreshing = null;
const listeners = new Set();

export const auth = { user: null };

export class ApiError extends Error {
	constructor(status, detail) {
		super(detail);
		this.status = status;
	}
}

export function onAuthChange(fn) {
	listeners.add(fn);
	return () => listeners.delete(fn);
}

function changed() {
	for (const fn of listeners) fn(auth.user);
}

async function errorOf(res) {
	let detail = `${res.status} ${res.statusText}`;
	try {
		const b = await res.json();
		if (b && typeof b.detail === 'string') detail = b.detail;
	} catch (e) {
		/* not JSON: keep the status line */
	}
	return new ApiError(res.status, detail);
}

async function post(path, body) {
	const res = await fetch(path, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify(body),
	});
	if (!res.ok) throw await errorOf(res);
	return res.json();
}

export async function login(email, password) {
	const b = await post('/api/auth/login', { email, password });
	access = b.access_token;
	sessionStorage.setItem(RT, b.refresh_token);
	auth.user = b.user;
	changed();
	return b.user;
}

export function logout() {
	access = null;
	sessionStorage.removeItem(RT);
	auth.user = null;
	changed();
}

// Signing out: the server revokes the login's refresh token
// (POST /api/auth/logout) before the tab forgets both tokens; the tab
// forgets them also when the server cannot be reached.
export async function signOut() {
	if (refreshing) await refreshing;
	const rt = sessionStorage.getItem(RT);
	logout();
	if (!rt) return;
	try {
		await fetch('/api/auth/logout', {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ refresh_token: rt }),
		});
	} catch (e) {
		/* offline: the token expires on its own */
	}
}

// A new token pair from the stored refresh token; shared by concurrent
// callers.  False when there is none or it is refused (signed out).
function refresh() {
	if (!refreshing) {
		refreshing = (async () => {
			const rt = sessionStorage.getItem(RT);
			if (!rt) return false;
			try {
				const b = await post('/api/auth/refresh', { refresh_token: rt });
				access = b.access_token;
				sessionStorage.setItem(RT, b.refresh_token);
				return true;
			} catch (e) {
				if (e.status === 401) logout();
				return false;
			}
		})().finally(() => {
			refreshing = null;
		});
	}
	return refreshing;
}

// Restores a login after a reload: true when signed in.
export async function resume() {
	if (!(await refresh())) return false;
	try {
		auth.user = await api('GET', '/api/auth/me');
		changed();
		return true;
	} catch (e) {
		return false;
	}
}

// Seconds until the JWT's exp (0 when unreadable).
function expiresIn(jwt) {
	try {
		const b = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
		return JSON.parse(atob(b)).exp - Date.now() / 1000;
	} catch (e) {
		return 0;
	}
}

export function authHeader() {
	return access ? { Authorization: `Bearer ${access}` } : {};
}

// api(method, path, {json, query, raw}): the decoded answer (null for
// 204; the Response itself with raw).  An expired access token is
// refreshed once and the call repeated.  Throws ApiError.
export async function api(method, path, opt = {}) {
	const q = opt.query ? new URLSearchParams(Object.entries(opt.query)
		.filter(([, v]) => v !== undefined && v !== null && v !== '')) : null;
	const url = q && [...q].length ? `${path}?${q}` : path;
	const go = () => {
		const headers = { ...authHeader() };
		const init = { method, headers };
		if (opt.json !== undefined) {
			headers['Content-Type'] = 'application/json';
			init.body = JSON.stringify(opt.json);
		}
		return fetch(url, init);
	};
	// Refreshed ahead of its expiry, so that pages do not meet a 401;
	// a 401 all the same (a role change, a clock off) refreshes once.
	if (access === null || expiresIn(access) < 30) await refresh();
	let res = await go();
	if (res.status === 401 && (await refresh())) res = await go();
	if (res.status === 401 && !sessionStorage.getItem(RT)) logout();
	if (!res.ok) throw await errorOf(res);
	if (opt.raw) return res;
	if (res.status === 204) return null;
	return res.json();
}

// A signed URL for a GET route the browser fetches by itself (<audio>).
export async function mediaUrl(path) {
	return (await api('POST', '/api/auth/media-url', { json: { path } })).url;
}

// Uploads one file with an API key (POST /api/v1/uploads takes keys
// only), reporting progress (0..1); resolves to the Upload.
export function uploadFile(file, key, tags, onProgress) {
	return new Promise((resolve, reject) => {
		const xhr = new XMLHttpRequest();
		const form = new FormData();
		if (tags && tags.length) form.append('tags', JSON.stringify(tags));
		form.append('file', file, file.name);
		xhr.open('POST', '/api/v1/uploads');
		xhr.setRequestHeader('X-Api-Key', key);
		xhr.upload.onprogress = (e) => {
			if (e.lengthComputable) onProgress(e.loaded / e.total);
		};
		xhr.onload = () => {
			let b = null;
			try {
				b = JSON.parse(xhr.responseText);
			} catch (e) {
				/* keep null */
			}
			if (xhr.status === 200) resolve(b);
			else reject(new ApiError(xhr.status, (b && b.detail) || `${xhr.status}`));
		};
		xhr.onerror = () => reject(new ApiError(0, 'the network failed'));
		xhr.send(form);
	});
}
