// The gateway's OpenAPI document in Swagger UI (vendored; see vendor/swagger-ui/VERSION).
// On a local hub the page's calls use the console's session (its cookie, and the secret
// the console keeps in this origin's storage); otherwise "Authorize" takes a bearer token.
"use strict";

const OPENAPI_URL = new URL("../openapi.json", document.baseURI).href;
const SESSION_KEY = "knowhub.console.session";

SwaggerUIBundle({
  url: OPENAPI_URL,
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: false,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  requestInterceptor: (request) => {
    const secret = localStorage.getItem(SESSION_KEY);
    if (secret) request.headers["X-KnowHub-Session"] = secret;
    return request;
  },
});
