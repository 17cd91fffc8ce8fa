// SPDX-License-Identifier: MIT
// alarms.mjs - the Alarms page (doc/alarms.md): a facility's alarms, newest
// first, acknowledged by any of its users and cleared by its admins; for
// admins its rules and the webhook deliveries, dead ones first.
import { api } from './api.mjs';
import {
	html, useLoad, Loaded, ErrorBox, useAction, when, Badge, isAdmin, facQuery, view,
} from './ui.mjs';

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
	${admin && html`<h2>Webhook deliveries</h2>
	<${Loaded} st=${dl} empty="No deliveries.">${(rows) => html`
	<table id="deliveries"><thead><tr><th>State</th><th>Attempts</th><th>Last error</th><th>Next attempt</th><th>Delivered</th></tr></thead>
	<tbody>${[...rows].sort(byState).map((d) => html`<tr>
		<td><${Badge} s=${d.state} /></td><td>${d.attempts}</td><td>${d.last_error || '—'}</td>
		<td>${d.state === 'pending' ? when(d.next_at) : '—'}</td><td>${when(d.delivered_at)}</td>
	</tr>`)}</tbody></table>`}<//>`}`;
}
