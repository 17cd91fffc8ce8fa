// SPDX-License-Identifier: MIT
// shared-host.mjs - the web console served by a shared host's .htaccess
// (doc/shared-hosting.md), in headless Debian chromium (playwright-core),
// for t/e2e/shared-hosting.t: signing in at / lands on the Overview, the
// service worker's scope is /, the face pages say the service is not
// available, and no page logs an error.  One JSON line per check, as
// console.mjs writes them.
//
// Environment: CONSOLE_URL (the shared host's origin), CONSOLE_LOGIN
// ("email password"), XMHUB_NPM_DIR (node_modules' parent),
// CONSOLE_CHROMIUM (default /usr/bin/chromium).
import { createRequire } from 'node:module';
import { join } from 'node:path';

const env = process.env;
const require = createRequire(join(env.XMHUB_NPM_DIR, 'node_modules', 'x.js'));
const { chromium } = require('playwright-core');
const base = env.CONSOLE_URL;
const [email, password] = [env.CONSOLE_LOGIN.slice(0, env.CONSOLE_LOGIN.indexOf(' ')),
	env.CONSOLE_LOGIN.slice(env.CONSOLE_LOGIN.indexOf(' ') + 1)];

function check(ok, name, diag) {
	process.stdout.write(JSON.stringify({ ok: !!ok, name, diag: diag === undefined ? '' : String(diag) }) + '\n');
}

const browser = await chromium.launch({
	executablePath: env.CONSOLE_CHROMIUM || '/usr/bin/chromium',
	args: ['--no-sandbox'],
});
const errors = [];
try {
	const page = await browser.newPage();
	page.on('console', (m) => { if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`); });
	page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
	const heading = (name) => page.getByRole('heading', { level: 1, name }).first()
		.waitFor({ timeout: 15000 }).then(() => true, (e) => { errors.push(e.message); return false; });

	await page.goto(`${base}/`);
	await page.getByLabel('E-mail').fill(email);
	await page.getByLabel('Password').fill(password);
	await page.getByRole('button', { name: 'Sign in' }).click();
	check(await heading('Overview'), 'signing in at / lands on the Overview');

	const scope = await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.scope));
	check(scope === `${base}/`, "the service worker's scope is /", scope);

	const none = /not available on this server/;
	await page.goto(`${base}/#/face`);
	check(await heading('Face detection and masking') && none.test(await page.locator('main').innerText()),
		'the face page says the service is not available', await page.locator('main').innerText());
	await page.goto(`${base}/#/face-video`);
	check(await heading('Video anonymization') && none.test(await page.locator('main').innerText()),
		'the face video page too', await page.locator('main').innerText());
} finally {
	check(errors.length === 0, 'no console errors', errors.join(' | '));
	await browser.close();
}
