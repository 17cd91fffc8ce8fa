// SPDX-License-Identifier: MIT
// openapi-check.cjs - checks real answers of the platform API against
// its OpenAPI document (doc/platform-www/openapi.json) with Ajv's draft
// 2020-12 validator, the dialect of OpenAPI 3.1 (ajv and ajv-formats from
// npm, installed by `./dev deps` into $XMHUB_NPM_DIR).
//
//   node openapi-check.cjs OPENAPI.json
//   node openapi-check.cjs OPENAPI.json --schemas
//
// reads one JSON object a line on stdin,
//   {"method": "GET", "path": "/api/v1/x/ID", "status": 200,
//    "type": "application/json", "body": "..." | null}
// (path without its query, body the answer's text) and writes one line
// per request: {"ok": true} or {"ok": false, "errors": ["..."]}.
// An answer passes when the document has its path and method and lists
// its status with its Content-Type, and a JSON body validates against the
// schema there. A path the document does not have must be a 404, a method
// it does not have a 405, both with the {"detail"} error body.
// With --schemas it checks instead that every schema of the document is
// valid JSON Schema 2020-12 and compiles (exit status 1 and the errors
// otherwise).
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const npm = path.join(process.env.XMHUB_NPM_DIR || '', 'node_modules');
const Ajv2020 = require(path.join(npm, 'ajv/dist/2020')).default;
const addFormats = require(path.join(npm, 'ajv-formats')).default;

const DOC = 'openapi.json';
const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
// strict off: the document's schemas carry OpenAPI's own keywords.
const ajv = new Ajv2020({strict: false, allErrors: true, validateSchema: false});
addFormats(ajv);
ajv.addSchema(doc, DOC);

const pointer = (parts) =>
	'#/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

// The templates, literal ones first so /a/b wins over /a/{id}.
const templates = Object.keys(doc.paths)
	.map((t) => ({
		t,
		re: new RegExp('^' + t.replace(/[.]/g, '\\.').replace(/\{[^}/]+\}/g, '[^/]+') + '$'),
		vars: (t.match(/\{/g) || []).length,
	}))
	.sort((a, b) => a.vars - b.vars);

const compiled = new Map();
function validator(ptr) {
	if (!compiled.has(ptr)) compiled.set(ptr, ajv.compile({$ref: DOC + ptr}));
	return compiled.get(ptr);
}

function resolve(obj, at) {
	while (obj && obj.$ref) {
		at = obj.$ref.replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
		obj = at.reduce((o, k) => o[k], doc);
	}
	return [obj, at];
}

function validateBody(schemaAt, r, errors) {
	let body;
	try {
		body = JSON.parse(r.body);
	} catch (e) {
		errors.push(`the body is not JSON: ${e.message}`);
		return;
	}
	const v = validator(pointer(schemaAt));
	if (!v(body))
		for (const e of v.errors)
			errors.push(`body${e.instancePath} ${e.message} (${e.schemaPath})`);
}

function errorBody(r, errors) {
	validateBody(['components', 'schemas', 'Error'], r, errors);
}

function check(r) {
	const errors = [];
	const type = (r.type || '').split(';')[0].trim().toLowerCase();
	const m = templates.find((x) => x.re.test(r.path));
	if (!m) {
		if (r.status !== 404) errors.push(`no path of the document matches ${r.path} (answered ${r.status}, not 404)`);
		else errorBody(r, errors);
		return errors;
	}
	const op = doc.paths[m.t][r.method.toLowerCase()];
	if (!op) {
		if (r.status !== 405) errors.push(`${m.t} has no ${r.method} (answered ${r.status}, not 405)`);
		else errorBody(r, errors);
		return errors;
	}
	const raw = op.responses[String(r.status)];
	if (!raw) {
		errors.push(`${r.method} ${m.t}: status ${r.status} is not documented`);
		return errors;
	}
	let [resp, at] = resolve(raw, ['paths', m.t, r.method.toLowerCase(), 'responses', String(r.status)]);
	const content = resp.content || {};
	if (Object.keys(content).length === 0) {
		if (r.body) errors.push(`${r.method} ${m.t} ${r.status}: a body where the document has none`);
		return errors;
	}
	if (!content[type]) {
		errors.push(`${r.method} ${m.t} ${r.status}: Content-Type ${type || '(none)'} is not one of ${Object.keys(content).join(', ')}`);
		return errors;
	}
	if (type === 'application/json') validateBody([...at, 'content', type, 'schema'], r, errors);
	return errors;
}

// Every schema of the document: components, parameters, bodies, answers.
function schemas(node, at, out) {
	if (!node || typeof node !== 'object') return out;
	for (const [k, v] of Object.entries(node)) {
		if (k === 'schema' || (at.length === 2 && at[0] === 'components' && at[1] === 'schemas'))
			out.push([[...at, k], v]);
		else schemas(v, [...at, k], out);
	}
	return out;
}

if (process.argv[3] === '--schemas') {
	let bad = 0;
	for (const [at, s] of schemas(doc, [], [])) {
		try {
			if (!ajv.validateSchema(s)) throw new Error(ajv.errorsText(ajv.errors));
			validator(pointer(at));
		} catch (e) {
			bad++;
			process.stdout.write(`${pointer(at)}: ${e.message}\n`);
		}
	}
	process.exit(bad ? 1 : 0);
}

const rl = readline.createInterface({input: process.stdin});
rl.on('line', (line) => {
	let errors;
	try {
		errors = check(JSON.parse(line));
	} catch (e) {
		errors = [`checker: ${e.stack || e}`];
	}
	process.stdout.write(JSON.stringify(errors.length ? {ok: false, errors} : {ok: true}) + '\n');
});
