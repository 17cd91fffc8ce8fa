// SPDX-License-Identifier: MIT
// bench/console.mjs - the browser half of bench/console.pl: the bytes of
// a cold load of the console's first page (compressed as served, from
// chromium's network events), the time to the first chart of a session,
// and a static file of the same server as the baseline; the overview's
// first paint after a reload against the Tags page's, and the bytes of a
// cold first load through sign-in to the painted overview.  Prints one
// JSON object.  Environment: CONSOLE_URL, CONSOLE_LOGIN ("email password"),
// CONSOLE_SESSION, XMHUB_NPM_DIR, CONSOLE_CHROMIUM, BENCH_RUNS.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const env = process.env;
const require = createRequire(join(env.XMHUB_NPM_DIR, 'node_modules', 'x.js'));
const { chromium } = require('playwright-core');
const base = env.CONSOLE_URL;
const runs = Number(env.BENCH_RUNS || 5);
const login = env.CONSOLE_LOGIN;
const email = login.slice(0, login.indexOf(' '));
const password = login.slice(login.indexOf(' ') + 1);

const browser = await chromium.launch({ executablePath: env.CONSOLE_CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

// A cold load of `path` in a fresh context: bytes on the wire (headers
// included) and decoded body bytes, requests, time to load (until the
// network is idle, or until ready when idle is false).
async function cold(path, ready, idle = true) {
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	const cdp = await ctx.newCDPSession(page);
	await cdp.send('Network.enable');
	await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
	let wire = 0, body = 0, n = 0;
	cdp.on('Network.loadingFinished', (e) => { wire += e.encodedDataLength; n++; });
	cdp.on('Network.dataReceived', (e) => { body += e.dataLength; });
	const t = performance.now();
	await page.goto(`${base}${path}`);
	if (ready) await ready(page);
	if (idle) await page.waitForLoadState('networkidle');
	const ms = performance.now() - t;
	await ctx.close();
	return { wire, body, requests: n, ms };
}

const signIn = async (p) => {
	await p.getByLabel('E-mail').fill(email);
	await p.getByLabel('Password').fill(password);
	await p.getByRole('button', { name: 'Sign in' }).click();
};
// The overview is painted with the fleet: 50 devices known or more (the
// big session's device besides), 10 active sessions (bench/console.pl);
// the Tags page once its list has come.  Each returns the page's clock
// then (ms from its navigation's start).
const overviewPainted = () => {
	const d = document.querySelector('#devices-seen'), a = document.querySelector('#active-sessions');
	const m = d && / of (\d+)$/.exec(d.textContent);
	return m && Number(m[1]) >= 50 && a.textContent === '10' && performance.now();
};
const tagsPainted = () => {
	const h = document.querySelector('main h1');
	return h && h.textContent === 'Tags' && !document.querySelector('main [role=status]') && performance.now();
};
const first = await cold('/', (p) => p.getByRole('button', { name: 'Sign in' }).waitFor());
const staticFile = await cold('/vendor/uplot.js');

// Time to the first chart: signed in, the session page is opened by its
// link's route; done when the first canvas shows the series' colour.
const ctx = await browser.newContext({ viewport: { width: 1000, height: 700 } });
const page = await ctx.newPage();
await page.goto(`${base}/`);
await signIn(page);
await page.locator('#sign-out').waitFor();
const drawn = () => {
	const c = document.querySelector('.chart canvas');
	if (!c) return false;
	const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
	let n = 0;
	for (let i = 0; i < d.length; i += 4)
		if (Math.abs(d[i] - 31) < 40 && Math.abs(d[i + 1] - 79) < 40 && Math.abs(d[i + 2] - 168) < 40 && d[i + 3] > 100) n++;
	return n > 50;
};
const chart = [];
const fetchStatic = [];
for (let i = 0; i < runs; i++) {
	await page.evaluate(() => { location.hash = '#/uploads'; });
	await page.getByRole('heading', { level: 1, name: 'Uploads' }).waitFor();
	const t = await page.evaluate(async ([sid]) => {
		const t0 = performance.now();
		location.hash = `#/sessions/${sid}`;
		return t0;
	}, [env.CONSOLE_SESSION]);
	await page.waitForFunction(drawn, null, { timeout: 60000, polling: 'raf' });
	chart.push(await page.evaluate((t0) => performance.now() - t0, t));
	fetchStatic.push(await page.evaluate(async () => {
		const t0 = performance.now();
		await (await fetch(`vendor/uplot.js?${Math.random()}`, { cache: 'no-store' })).arrayBuffer();
		return performance.now() - t0;
	}));
}
const info = await page.locator('.chart-tools .muted').first().textContent();

// First paint after a reload of the signed-in tab (its refresh token in
// sessionStorage: the reload refreshes it, loads the modules and reads
// the page's lists), the overview and the Tags page alternating.
const paint = async (hash, fn) => {
	await page.evaluate((h) => { location.hash = h; }, hash);
	await page.waitForFunction(fn, null, { timeout: 60000 });
	await page.reload();
	return (await page.waitForFunction(fn, null, { timeout: 60000, polling: 'raf' })).jsonValue();
};
const overview = [];
const tags = [];
for (let i = 0; i < runs; i++) {
	overview.push(await paint('#/overview', overviewPainted));
	tags.push(await paint('#/tags', tagsPainted));
}
const firstLoad = await cold('/', async (p) => {
	await signIn(p);
	await p.waitForFunction(overviewPainted, null, { timeout: 60000, polling: 'raf' });
}, false);
await browser.close();
process.stdout.write(JSON.stringify({
	first_page: first, static_file: staticFile, chart_ms: chart, chart_first_ms: chart[0],
	chart_median_ms: median(chart), static_fetch_median_ms: median(fetchStatic), chart_info: info,
	overview: { ms: overview, median_ms: median(overview), tags_median_ms: median(tags), first_load: firstLoad },
}) + '\n');
