// SPDX-License-Identifier: MIT
// Swagger UI on the platform's OpenAPI document (a file of its own, not
// an inline script, so the page works under a CSP without 'unsafe-inline').
window.ui = SwaggerUIBundle({
	url: "/api/openapi.json",
	dom_id: "#swagger-ui",
	deepLinking: true,
	// No badge from validator.swagger.io: the page asks no other host.
	validatorUrl: null,
	presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
	layout: "StandaloneLayout"
});
