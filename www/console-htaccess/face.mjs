// SPDX-License-Identifier: MIT
// face.mjs of the console a shared host serves (`xmhub httpd-conf
// htaccess`, doc/shared-hosting.md): installed there in place of
// www/console/js/face.mjs, with the same exports.  A shared host runs no
// face service (it needs an origin and a worker of its own) and the
// console's CSP there lets it connect to its own origin only, so the face
// pages say so instead of offering forms whose calls the browser refuses.
import { html, Empty } from './ui.mjs';

const None = ({ title }) => html`<h1>${title}</h1>
	<${Empty}>The face service is not available on this server: a shared host runs none
		(doc/shared-hosting.md, "Limits of this mode").</${Empty}>`;

export const Face = () => html`<${None} title="Face detection and masking" />`;
export const FaceVideo = () => html`<${None} title="Video anonymization" />`;
