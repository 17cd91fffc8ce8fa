// SPDX-License-Identifier: MIT
// admin.mjs - facilities, users, API keys, devices, tags.
import { api } from './api.mjs';
import { setUploadKey } from './uploads.mjs';
import {
	html, useState, useLoad, Loaded, ErrorBox, useAction, fields, when, Badge,
	isAdmin, isSuper, facQuery, view, FacilityField, ROLES, rank, Storage,
} from './ui.mjs';
import { auth } from './api.mjs';

// The facilities a super admin may pick from (empty for others).
export function useFacilities() {
	return useLoad(() => (isSuper() ? api('GET', '/api/v1/facilities') : Promise.resolve([])), []);
}

export function Facilities() {
	const st = useLoad(() => api('GET', '/api/v1/facilities'), []);
	const [run, busy, error] = useAction();
	const create = (e) => {
		e.preventDefault();
		const f = e.target;
		run(async () => {
			await api('POST', '/api/v1/facilities', { json: fields(f) });
			f.reset();
			st.reload();
		});
	};
	const toggle = (f) => run(async () => {
		await api('PATCH', `/api/v1/facilities/${f.id}`, { json: { is_active: !f.is_active } });
		st.reload();
	});
	// The quota in MiB; empty for none.
	const [quotas, setQuotas] = useState(0);
	const setQuota = (e, f) => {
		e.preventDefault();
		const v = e.target.elements.quota.value.trim();
		run(async () => {
			await api('PATCH', `/api/v1/facilities/${f.id}/storage`,
				{ json: { quota_bytes: v === '' ? null : Math.round(Number(v) * 1048576) } });
			setQuotas((n) => n + 1);
		});
	};
	return html`<h1>Facilities</h1>
	<form class="inline" onSubmit=${create} data-edit>
		<label>Name <input name="name" required maxlength="200" /></label>
		<label>Slug <input name="slug" required pattern="[a-z0-9]+(-[a-z0-9]+)*" /></label>
		<button disabled=${busy}>Create facility</button>
	</form>
	<${ErrorBox} error=${error} />
	<${Loaded} st=${st} empty="No facilities yet.">${(rows) => html`
	<table><thead><tr><th>Name</th><th>Slug</th><th>State</th><th>Created</th><th>Storage</th><th><span class="sr">Actions</span></th></tr></thead>
	<tbody>${rows.map((f) => html`<tr>
		<td>${f.name}</td><td>${f.slug}</td><td><${Badge} s=${f.is_active ? 'active' : 'inactive'} /></td>
		<td>${when(f.created_at)}</td>
		<td><${Storage} id=${f.id} key=${`${f.id}-${quotas}`} />
		<form class="inline" aria-label=${`quota of ${f.name}`} onSubmit=${(e) => setQuota(e, f)} data-edit>
			<label>Quota (MiB) <input name="quota" type="number" min="0" step="any" placeholder="none" /></label>
			<button class="small" disabled=${busy}>Set</button></form></td>
		<td><button type="button" class="small" onClick=${() => { view.facility = f.id; location.hash = '#/uploads'; }}>View</button>
		<button type="button" class="small" data-edit onClick=${() => toggle(f)}>${f.is_active ? 'Deactivate' : 'Activate'}</button></td>
	</tr>`)}</tbody></table>`}<//>`;
}

export function Users() {
	const facs = useFacilities();
	const st = useLoad(() => api('GET', '/api/v1/users', { query: facQuery() }), [view.facility]);
	const [run, busy, error] = useAction();
	const mine = auth.user;
	const create = (e) => {
		e.preventDefault();
		const f = e.target;
		const b = fields(f);
		if (b.role === 'super_admin') delete b.facility_id;
		run(async () => {
			await api('POST', '/api/v1/users', { json: b });
			f.reset();
			st.reload();
		});
	};
	const patch = (u, json) => run(async () => {
		await api('PATCH', `/api/v1/users/${u.id}`, { json });
		st.reload();
	});
	const roles = ROLES.filter((r) => rank(r) <= rank(mine.role) && (r !== 'super_admin' || isSuper()));
	return html`<h1>Users</h1>
	<form class="inline" onSubmit=${create} data-edit aria-label="new user">
		<label>E-mail <input name="email" type="email" required autocomplete="off" /></label>
		<label>Name <input name="display_name" required maxlength="200" /></label>
		<label>Password <input name="password" type="password" required minlength="8" autocomplete="new-password" /></label>
		<label>Role <select name="role">${roles.map((r) => html`<option value=${r}>${r}</option>`)}</select></label>
		<${FacilityField} facilities=${facs.data} />
		<button disabled=${busy}>Create user</button>
	</form>
	<${ErrorBox} error=${error} />
	<${Loaded} st=${st} empty="No users.">${(rows) => html`
	<table><thead><tr><th>E-mail</th><th>Name</th><th>Role</th><th>State</th><th>Last login</th><th><span class="sr">Actions</span></th></tr></thead>
	<tbody>${rows.map((u) => html`<tr>
		<td>${u.email}</td><td>${u.display_name}</td>
		<td>${u.id === mine.id ? u.role : html`<select aria-label=${`role of ${u.email}`} value=${u.role} data-edit
			onChange=${(e) => patch(u, { role: e.target.value, ...(u.role === 'super_admin' ? { facility_id: view.facility } : {}) })}>
			${roles.concat(roles.includes(u.role) ? [] : [u.role]).map((r) => html`<option value=${r}>${r}</option>`)}</select>`}</td>
		<td><${Badge} s=${u.is_active ? 'active' : 'inactive'} /></td><td>${when(u.last_login_at)}</td>
		<td>${u.id !== mine.id && html`<button type="button" class="small" data-edit
			onClick=${() => patch(u, { is_active: !u.is_active })}>${u.is_active ? 'Deactivate' : 'Activate'}</button>`}</td>
	</tr>`)}</tbody></table>`}<//>`;
}

export function ApiKeys() {
	const facs = useFacilities();
	const st = useLoad(() => api('GET', '/api/v1/api-keys', { query: facQuery() }), [view.facility]);
	const [run, busy, error] = useAction();
	const [made, setMade] = useState(null);
	const [copied, setCopied] = useState(false);
	const create = (e) => {
		e.preventDefault();
		const f = e.target;
		const b = fields(f);
		const scopes = ['upload', 'ingest'].filter((s) => f.elements[`scope_${s}`].checked);
		delete b.scope_upload;
		delete b.scope_ingest;
		b.scopes = scopes;
		if (b.expires_at) b.expires_at = new Date(b.expires_at).toISOString();
		run(async () => {
			setMade(await api('POST', '/api/v1/api-keys', { json: b }));
			setCopied(false);
			f.reset();
			st.reload();
		});
	};
	const revoke = (k) => run(async () => {
		if (!confirm(`Revoke the key ${k.name}? Devices using it stop working.`)) return;
		await api('DELETE', `/api/v1/api-keys/${k.id}`);
		st.reload();
	});
	const copy = async () => {
		await navigator.clipboard.writeText(made.key).catch(() => null);
		setCopied(true);
	};
	return html`<h1>API keys</h1>
	<form class="inline" onSubmit=${create} data-edit aria-label="new API key">
		<label>Name <input name="name" required maxlength="200" /></label>
		<fieldset><legend>Scopes</legend>
			<label class="check"><input type="checkbox" name="scope_upload" checked /> upload</label>
			<label class="check"><input type="checkbox" name="scope_ingest" checked /> ingest</label>
		</fieldset>
		<label>Expires <input name="expires_at" type="datetime-local" /></label>
		<${FacilityField} facilities=${facs.data} />
		<button disabled=${busy}>Create key</button>
	</form>
	<${ErrorBox} error=${error} />
	${made && html`<div class="secret" role="status">
		<p>The key <b>${made.name}</b> is shown this once: copy it now.</p>
		<code id="new-key">${made.key}</code>
		<button type="button" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>
		${made.scopes.includes('upload') && html`<button type="button" onClick=${() => setUploadKey(made.key)}>Use for uploads in this tab</button>`}
		<button type="button" onClick=${() => setMade(null)}>Done</button></div>`}
	<${Loaded} st=${st} empty="No API keys.">${(rows) => html`
	<table><thead><tr><th>Name</th><th>Prefix</th><th>Scopes</th><th>Expires</th><th>Last used</th><th>State</th><th><span class="sr">Actions</span></th></tr></thead>
	<tbody>${rows.map((k) => html`<tr>
		<td>${k.name}</td><td><code>${k.key_prefix}</code></td><td>${k.scopes.join(', ')}</td>
		<td>${when(k.expires_at)}</td><td>${when(k.last_used_at)}</td>
		<td><${Badge} s=${k.is_active ? 'active' : 'revoked'} /></td>
		<td>${k.is_active && html`<button type="button" class="small danger" data-edit onClick=${() => revoke(k)}>Revoke</button>`}</td>
	</tr>`)}</tbody></table>`}<//>`;
}

export function Devices() {
	const facs = useFacilities();
	const st = useLoad(() => api('GET', '/api/v1/devices', { query: facQuery() }), [view.facility]);
	const [run, busy, error] = useAction();
	const admin = isAdmin();
	const create = (e) => {
		e.preventDefault();
		const f = e.target;
		const b = fields(f);
		b.device_uid = Number(b.device_uid);
		run(async () => {
			await api('POST', '/api/v1/devices', { json: b });
			f.reset();
			st.reload();
		});
	};
	const toggle = (d) => run(async () => {
		await api('PATCH', `/api/v1/devices/${d.id}`, { json: { is_active: !d.is_active } });
		st.reload();
	});
	return html`<h1>Devices</h1>
	${admin && html`<form class="inline" onSubmit=${create} data-edit aria-label="new device">
		<label>Device uid <input name="device_uid" type="number" min="0" max="4294967295" required /></label>
		<label>Name <input name="name" required maxlength="200" /></label>
		<label>Hardware <input name="hardware_version" maxlength="100" /></label>
		<label>Firmware <input name="firmware_version" maxlength="100" /></label>
		<${FacilityField} facilities=${facs.data} />
		<button disabled=${busy}>Register device</button>
	</form>`}
	<${ErrorBox} error=${error} />
	<${Loaded} st=${st} empty="No devices registered.">${(rows) => html`
	<table><thead><tr><th>Uid</th><th>Name</th><th>Firmware</th><th>Last seen</th><th>State</th>${admin && html`<th><span class="sr">Actions</span></th>`}</tr></thead>
	<tbody>${rows.map((d) => html`<tr>
		<td>${d.device_uid}</td><td>${d.name}</td><td>${d.firmware_version || '—'}</td>
		<td>${when(d.last_seen_at)}</td><td><${Badge} s=${d.is_active ? 'active' : 'inactive'} /></td>
		${admin && html`<td><button type="button" class="small" data-edit onClick=${() => toggle(d)}>${d.is_active ? 'Deactivate' : 'Activate'}</button></td>`}
	</tr>`)}</tbody></table>`}<//>`;
}

export function Tags() {
	const facs = useFacilities();
	const st = useLoad(() => api('GET', '/api/v1/tags', { query: facQuery() }), [view.facility]);
	const [run, busy, error] = useAction();
	const admin = isAdmin();
	const create = (e) => {
		e.preventDefault();
		const f = e.target;
		run(async () => {
			await api('POST', '/api/v1/tags', { json: fields(f) });
			f.reset();
			st.reload();
		});
	};
	const del = (t) => run(async () => {
		if (!confirm(`Delete the tag ${t.name}? Uploads lose it.`)) return;
		await api('DELETE', `/api/v1/tags/${t.id}`);
		st.reload();
	});
	return html`<h1>Tags</h1>
	${admin && html`<form class="inline" onSubmit=${create} data-edit aria-label="new tag">
		<label>Name <input name="name" required maxlength="100" /></label>
		<label>Color <input name="color" type="color" value="#3366cc" /></label>
		<${FacilityField} facilities=${facs.data} />
		<button disabled=${busy}>Create tag</button>
	</form>`}
	<${ErrorBox} error=${error} />
	<${Loaded} st=${st} empty="No tags.">${(rows) => html`
	<ul class="tags">${rows.map((t) => html`<li>
		<${TagChip} t=${t} />
		${admin && html`<button type="button" class="small danger" data-edit aria-label=${`delete tag ${t.name}`} onClick=${() => del(t)}>Delete</button>`}
	</li>`)}</ul>`}<//>`;
}

// A tag's name with its color as a swatch (an SVG attribute, no inline
// style: the CSP allows none).
export const TagChip = ({ t }) => html`<span class="tag"><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" fill=${t.color || '#888888'} /></svg>${t.name}</span>`;
