// SPDX-License-Identifier: MIT
// alarms.mjs - the Alarms page (doc/alarms.md): a facility's alarms, newest
// first, read again every REFRESH_MS while the page is shown, acknowledged
// by any of its users and cleared by its admins; for admins its rules and
// webhook endpoints, made, paused, edited and deleted here, and the
// webhook deliveries, dead ones first.
import { api } from './api.mjs';
import { useFacilities } from './admin.mjs';
import {
	html, useState, useEffect, useLoad, Loaded, ErrorBox, useAction, fields, when, Badge, isAdmin,
	facQuery, view, FacilityField,
} from './ui.mjs';

const REFRESH_MS = 10000;

// Reads st again REFRESH_MS after its last read ended, so that reads never
// overlap; in a hidden tab, once it is visible again. Nothing is left
// behind when the page goes (the effect's cleanup).
function useRefresh(st) {
	useEffect(() => {
		if (st.loading) return undefined;
		const due = () => {
			if (document.visibilityState === 'visible') st.reload();
			else document.addEventListener('visibilitychange', due, { once: true });
		};
		const t = setTimeout(due, REFRESH_MS);
		return () => {
			clearTimeout(t);
			document.removeEventListener('visibilitychange', due);
		};
	}, [st.loading]);
}

// The fields of each kind of rule (the API refuses the others).
const KINDS = {
	threshold: ['stream_name', 'op', 'lo', 'hi', 'for_samples', 'for_seconds'],
	silence: ['silence_minutes'],
	session_error: [],
	job_failed: [],
	storage: ['storage_percent'],
};
const NUMBERS = ['lo', 'hi', 'for_samples', 'for_seconds', 'silence_minutes', 'storage_percent'];

// A rule's condition in words.
function condition(r) {
	switch (r.kind) {
	case 'threshold': {
		const band = { above: `> ${r.hi}`, below: `< ${r.lo}`, outside: `outside ${r.lo}…${r.hi}` }[r.op];
		const hold = [r.for_samples && `${r.for_samples} samples`, r.for_seconds && `${r.for_seconds} s`]
			.filter(Boolean).join(', ');
		return `${r.stream_name} ${band}${hold ? ` for ${hold}` : ''}`;
	}
	case 'silence': return `silent for ${r.silence_minutes} min`;
	case 'storage': return `storage above ${r.storage_percent}% of the quota`;
	case 'session_error': return 'an ingest session ends in error';
	default: return 'a transcode job fails';
	}
}

// The form's fields for the rule's kind, numbers as numbers.
function ruleBody(form) {
	const all = fields(form);
	const keep = ['name', 'kind', 'severity', 'facility_id', ...KINDS[all.kind]];
	const b = {};
	for (const k of keep) if (all[k] !== undefined) b[k] = NUMBERS.includes(k) ? Number(all[k]) : all[k];
	return b;
}

// A rule's edit: ruleBody(), and a limit emptied is set to none (null;
// left out, the API would keep the old one).
function ruleChange(form) {
	const b = ruleBody(form);
	for (const k of ['lo', 'hi']) if (KINDS[b.kind].includes(k) && b[k] === undefined) b[k] = null;
	return b;
}

// The fields of a rule of kind (and severity), with r's values when it
// is one being edited.
function RuleFields({ kind, r = {} }) {
	const has = (k) => KINDS[kind].includes(k);
	const sel = (names, v) => names.map((n) => html`<option selected=${n === v}>${n}</option>`);
	return html`${has('stream_name') && html`<label>Stream <input name="stream_name" required maxlength="256" defaultValue=${r.stream_name} /></label>
		<label>Condition <select name="op">${sel(['above', 'below', 'outside'], r.op)}</select></label>
		<label>Low <input name="lo" type="number" step="any" defaultValue=${r.lo} /></label>
		<label>High <input name="hi" type="number" step="any" defaultValue=${r.hi} /></label>
		<label>For samples <input name="for_samples" type="number" min="1" defaultValue=${r.for_samples} /></label>
		<label>For seconds <input name="for_seconds" type="number" min="0" defaultValue=${r.for_seconds} /></label>`}
		${has('silence_minutes') && html`<label>Silent minutes <input name="silence_minutes" type="number" min="1" required defaultValue=${r.silence_minutes} /></label>`}
		${has('storage_percent') && html`<label>Storage % <input name="storage_percent" type="number" min="1" max="100" required defaultValue=${r.storage_percent} /></label>`}
		<label>Severity <select name="severity">${sel(['warning', 'critical', 'info'], r.severity)}</select></label>`;
}

// Admins: the facility's rules and webhook endpoints, made, paused and
// resumed, edited and deleted.
function Setup({ rules }) {
	const facs = useFacilities();
	const hooks = useLoad(() => api('GET', '/api/v1/webhooks', { query: facQuery() }), [view.facility]);
	const [kind, setKind] = useState('threshold');
	const [run, busy, error] = useAction();
	const create = (e, path, body, st) => {
		e.preventDefault();
		const f = e.target;
		run(async () => {
			await api('POST', path, { json: body(f) });
			f.reset();
			setKind('threshold');
			st.reload();
		});
	};
	const del = (path, what, st) => run(async () => {
		if (!confirm(`Delete ${what}?`)) return;
		await api('DELETE', path);
		st.reload();
	});
	const [editing, setEditing] = useState(null);
	const change = (path, json, st) => run(async () => {
		await api('PATCH', path, { json });
		setEditing(null);
		st.reload();
	});
	const toggle = (path, o, st) => change(path, { enabled: !o.enabled }, st);
	const edit = (e, path, body, st) => {
		e.preventDefault();
		change(path, body(e.target), st);
	};
	const pause = (o, what, path, st) => html`<button type="button" class="small" data-edit disabled=${busy}
		aria-label=${`${o.enabled ? 'pause' : 'resume'} ${what} ${o.name}`}
		onClick=${() => toggle(path, o, st)}>${o.enabled ? 'Pause' : 'Resume'}</button>
		<button type="button" class="small" data-edit aria-label=${`edit ${what} ${o.name}`}
		onClick=${() => setEditing(o.id)}>Edit</button>`;
	const cancel = html`<button type="button" onClick=${() => setEditing(null)}>Cancel</button>`;
	return html`<h2>Rules</h2>
	<form class="inline" data-edit aria-label="new alarm rule"
		onSubmit=${(e) => create(e, '/api/v1/alarm-rules', ruleBody, rules)}>
		<label>Name <input name="name" required maxlength="200" /></label>
		<label>Kind <select name="kind" value=${kind} onChange=${(e) => setKind(e.target.value)}>
			${Object.keys(KINDS).map((k) => html`<option value=${k}>${k.replace('_', ' ')}</option>`)}
		</select></label>
		<${RuleFields} kind=${kind} />
		<${FacilityField} facilities=${facs.data} />
		<button disabled=${busy}>Create rule</button>
	</form>
	<${ErrorBox} error=${error} />
	<${Loaded} st=${rules} empty="No rules.">${(rows) => html`
	<table id="rules"><thead><tr><th>Name</th><th>Condition</th><th>Severity</th><th>State</th><th><span class="sr">Actions</span></th></tr></thead>
	<tbody>${rows.map((r) => html`<tr>
		<td>${r.name}</td><td>${condition(r)}</td><td><${Badge} s=${r.severity} /></td>
		<td><${Badge} s=${r.enabled ? 'enabled' : 'paused'} /></td>
		<td>${pause(r, 'rule', `/api/v1/alarm-rules/${r.id}`, rules)}
		<button type="button" class="small danger" data-edit aria-label=${`delete rule ${r.name}`}
			onClick=${() => del(`/api/v1/alarm-rules/${r.id}`, `the rule ${r.name}`, rules)}>Delete</button></td>
	</tr>`)}</tbody></table>
	${rows.filter((r) => r.id === editing).map((r) => html`<form class="inline" data-edit aria-label=${`edit rule ${r.name}`}
		onSubmit=${(e) => edit(e, `/api/v1/alarm-rules/${r.id}`, ruleChange, rules)}>
		<label>Name <input name="name" required maxlength="100" defaultValue=${r.name} /></label>
		<input type="hidden" name="kind" value=${r.kind} />
		<${RuleFields} kind=${r.kind} r=${r} />
		<button disabled=${busy}>Save rule</button>${cancel}
	</form>`)}`}<//>
	<h2>Webhooks</h2>
	<form class="inline" data-edit aria-label="new webhook"
		onSubmit=${(e) => create(e, '/api/v1/webhooks', fields, hooks)}>
		<label>Name <input name="name" required maxlength="200" /></label>
		<label>URL <input name="url" type="url" required /></label>
		<label>Secret <input name="secret" type="password" minlength="16" required autocomplete="new-password" /></label>
		<${FacilityField} facilities=${facs.data} />
		<button disabled=${busy}>Add webhook</button>
	</form>
	<${Loaded} st=${hooks} empty="No webhooks.">${(rows) => html`
	<table id="webhooks"><thead><tr><th>Name</th><th>URL</th><th>State</th><th><span class="sr">Actions</span></th></tr></thead>
	<tbody>${rows.map((w) => html`<tr>
		<td>${w.name}</td><td>${w.url}</td><td><${Badge} s=${w.enabled ? 'enabled' : 'paused'} /></td>
		<td>${pause(w, 'webhook', `/api/v1/webhooks/${w.id}`, hooks)}
		<button type="button" class="small danger" data-edit aria-label=${`delete webhook ${w.name}`}
			onClick=${() => del(`/api/v1/webhooks/${w.id}`, `the webhook ${w.name}`, hooks)}>Delete</button></td>
	</tr>`)}</tbody></table>
	${rows.filter((w) => w.id === editing).map((w) => html`<form class="inline" data-edit aria-label=${`edit webhook ${w.name}`}
		onSubmit=${(e) => edit(e, `/api/v1/webhooks/${w.id}`, fields, hooks)}>
		<label>Name <input name="name" required maxlength="100" defaultValue=${w.name} /></label>
		<label>URL <input name="url" type="url" required defaultValue=${w.url} /></label>
		<label>New secret <input name="secret" type="password" minlength="16" autocomplete="new-password"
			placeholder="unchanged" /></label>
		<button disabled=${busy}>Save webhook</button>${cancel}
	</form>`)}`}<//>`;
}

// The deliveries that need someone: dead first, then pending, then the
// rest, each newest first (the API's order).
const ORDER = { dead: 0, pending: 1, delivered: 2 };
const byState = (a, b) => ORDER[a.state] - ORDER[b.state];

export function Alarms() {
	const admin = isAdmin();
	const st = useLoad(() => api('GET', '/api/v1/alarms', { query: facQuery() }), [view.facility]);
	const rules = useLoad(() => (admin ? api('GET', '/api/v1/alarm-rules', { query: facQuery() })
		: Promise.resolve([])), [view.facility]);
	const dl = useLoad(() => (admin ? api('GET', '/api/v1/webhook-deliveries', { query: facQuery() })
		: Promise.resolve([])), [view.facility]);
	useRefresh(st);
	const [run, busy, error] = useAction();
	const move = (a, to) => run(async () => {
		await api('POST', `/api/v1/alarms/${a.id}/${to}`);
		st.reload();
	});
	const ruleName = (id) => ((rules.data || []).find((r) => r.id === id) || {}).name || '—';
	return html`<h1>Alarms</h1>
	<${ErrorBox} error=${error} />
	<${Loaded} st=${st} empty="No alarms.">${(rows) => html`
	<table id="alarms"><thead><tr><th>State</th><th>Severity</th><th>Message</th><th>Value</th>
		${admin && html`<th>Rule</th>`}<th>First seen</th><th>Last seen</th><th><span class="sr">Actions</span></th></tr></thead>
	<tbody>${rows.map((a) => html`<tr>
		<td><${Badge} s=${a.state} /></td><td><${Badge} s=${a.severity} /></td>
		<td>${a.message}</td><td>${a.value == null ? '—' : a.value}</td>
		${admin && html`<td>${ruleName(a.rule_id)}</td>`}
		<td>${when(a.first_seen_at)}</td><td>${when(a.last_seen_at)}</td>
		<td>${a.state === 'active' && html`<button type="button" class="small" disabled=${busy}
			onClick=${() => move(a, 'acknowledge')}>Acknowledge</button>`}
		${admin && a.state !== 'cleared' && html`<button type="button" class="small" data-edit disabled=${busy}
			onClick=${() => move(a, 'clear')}>Clear</button>`}</td>
	</tr>`)}</tbody></table>`}<//>
	${admin && html`<${Setup} rules=${rules} />
	<h2>Webhook deliveries</h2>
	<${Loaded} st=${dl} empty="No deliveries.">${(rows) => html`
	<table id="deliveries"><thead><tr><th>State</th><th>Attempts</th><th>Last error</th><th>Next attempt</th><th>Delivered</th></tr></thead>
	<tbody>${[...rows].sort(byState).map((d) => html`<tr>
		<td><${Badge} s=${d.state} /></td><td>${d.attempts}</td><td>${d.last_error || '—'}</td>
		<td>${d.state === 'pending' ? when(d.next_at) : '—'}</td><td>${when(d.delivered_at)}</td>
	</tr>`)}</tbody></table>`}<//>`}`;
}
