// SPDX-License-Identifier: MIT
// openapi-valid.mjs - checks OpenAPI documents against the OpenAPI
// Initiative's own schemas for their version (3.0 or 3.1), with
// @seriousme/openapi-schema-validator (npm, installed by `./dev deps`
// into $XMHUB_NPM_DIR); $refs must resolve.
//
//   node openapi-valid.mjs DOC.json...
//
// One line a document: "ok DOC (OpenAPI V)" or "not ok DOC: ERRORS";
// the exit status is 1 when one is not valid.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(join(process.env.XMHUB_NPM_DIR || '', 'node_modules', 'x.js'));
const { Validator } = await import(require.resolve('@seriousme/openapi-schema-validator'));

let failed = 0;
for (const file of process.argv.slice(2)) {
	const doc = JSON.parse(readFileSync(file, 'utf8'));
	const res = await new Validator().validate(doc);
	if (res.valid) {
		console.log(`ok ${file} (OpenAPI ${doc.openapi})`);
	} else {
		failed++;
		console.log(`not ok ${file}: ${JSON.stringify(res.errors)}`);
	}
}
process.exit(failed ? 1 : 0);
