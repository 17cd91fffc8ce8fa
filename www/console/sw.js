// SPDX-License-Identifier: MIT
// sw.js - the console's service worker: it only shares refreshes
// (doc/console.md "One refresh at a time, across reloads").
//
// A refresh rotates the refresh token, and the API takes a used one,
// presented again, as stolen (the whole login ends).  A page reloaded
// while its refresh is in flight loses the answer with the page and
// presents the old token again.  This worker makes the request for the
// page and outlives it: the answer to a token is kept for SHARE_MS, and
// whoever presents that token meanwhile (the reloaded page, a tab
// duplicated with its sessionStorage) gets the same answer instead of a
// second request.  It touches no other request.
const SHARE_MS = 60000;
const answers = new Map();

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));

// The answer to one refresh request, {status, body}, made once: the body
// is the token (the console sends {"refresh_token": ...} alone).
function answer(body) {
	let p = answers.get(body);
	if (!p) {
		// Not the page's request: the page may be gone before it ends.
		p = fetch('/api/auth/refresh', {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body,
			cache: 'no-store',
		}).then(async (r) => ({ status: r.status, body: await r.text() }));
		answers.set(body, p);
		p.then(() => setTimeout(() => answers.delete(body), SHARE_MS),
			() => answers.delete(body));
	}
	return p;
}

self.addEventListener('fetch', (e) => {
	const url = new URL(e.request.url);
	if (e.request.method !== 'POST' || url.origin !== self.location.origin
		|| url.pathname !== '/api/auth/refresh') return;
	const done = e.request.text().then(answer).then((a) => new Response(a.body, {
		status: a.status,
		headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
	}));
	e.respondWith(done);
	e.waitUntil(done.catch(() => null));
});
