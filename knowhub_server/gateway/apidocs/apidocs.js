// The gateway's OpenAPI document in Swagger UI (vendored; see vendor/swagger-ui/VERSION).
// On a hub without a tokens file the page authorizes itself with the local token, as the
// console does; otherwise "Authorize" takes a bearer token.
"use strict";

const OPENAPI_URL = new URL("../openapi.json", document.baseURI).href;
const LOCAL_TOKEN_URL = new URL("../api/local-token", document.baseURI).href;

async function localToken() {
  try {
    const response = await fetch(LOCAL_TOKEN_URL, { headers: { "X-KnowHub-Console": "1" } });
    return response.ok ? (await response.json()).token || "" : "";
  } catch (error) {
    return "";
  }
}

const ui = SwaggerUIBundle({
  url: OPENAPI_URL,
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: false,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  onComplete: async () => {
    const token = await localToken();
    if (token) {
      ui.preauthorizeApiKey("bearer", token);
    }
  },
});
