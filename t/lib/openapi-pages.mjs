// SPDX-License-Identifier: MIT
// openapi-pages.mjs - opens the platform API's pages /api/docs (Swagger
// UI) and /api/redoc (ReDoc) in headless Debian chromium (playwright-core)
// for t/e2e/openapi.t: each must render every operation of the document
// without a script error and ask nothing of another origin.  One JSON
// line per check on standard output: {"ok": bool, "name": "...",
// "diag": "..."}.
//
//   node openapi-pages.mjs ORIGIN OPERATIONS
//
// ORIGIN the platform's (http://127.0.0.1:PORT), OPERATIONS the number of
// operations in the document. Environment: XMHUB_NPM_DIR (node_modules'
// parent), CONSOLE_CHROMIUM (default /usr/bin/chromium).
import { createRequire } from 'node:module';
import { join } from 'node:path';

const env = process.env;
const require = createRequire(join(env.XMHUB_NPM_DIR, 'node_modules', 'x.js'));
const { chromium } = require('playwright-core');
const [origin, nops] = [process.argv[2], Number(process.argv[3])];

function check(ok, name, diag) {
	process.stdout.write(JSON.stringify({ ok: !!ok, name, diag: diag === undefined ? '' : String(diag) }) + '\n');
}

const browser = await chromium.launch({
	executablePath: env.CONSOLE_CHROMIUM || '/usr/bin/chromium',
	args: ['--no-sandbox'],
});
// What a page shows per operation: Swagger UI an .opblock, ReDoc an
// operation's section (data-section-id "operation/...").
const pages = [
	['/api/docs', '.opblock'],
	['/api/redoc', '[data-section-id^="operation/"]'],
];
try {
	for (const [path, selector] of pages) {
		const ctx = await browser.newContext();
		const page = await ctx.newPage();
		const foreign = [];
		const errors = [];
		page.on('request', (r) => {
			const u = r.url();
			if (!u.startsWith(origin + '/') && !u.startsWith('data:') && !u.startsWith('blob:'))
				foreign.push(u);
		});
		page.on('pageerror', (e) => errors.push(e.message));
		page.on('response', (r) => {
			if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
		});
		page.on('console', (m) => {
			if (m.type() === 'error') errors.push(m.text());
		});
		const res = await page.goto(origin + path);
		check(res && res.status() === 200, `${path}: 200 in the browser`, res && res.status());
		let n = 0;
		try {
			await page.waitForFunction(
				([sel, want]) => document.querySelectorAll(sel).length >= want,
				[selector, nops], { timeout: 30000 });
		} catch (e) {
			// counted below
		}
		n = await page.evaluate((sel) => document.querySelectorAll(sel).length, selector);
		check(n === nops, `${path}: renders every operation (${n} of ${nops})`);
		check(errors.length === 0, `${path}: no script error`, errors.join(' | '));
		check(foreign.length === 0, `${path}: asks no other origin`, foreign.join(' '));
		await ctx.close();
	}
} finally {
	await browser.close();
}
