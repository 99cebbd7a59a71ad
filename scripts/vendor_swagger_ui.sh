#!/bin/sh
# Re-fetches the Swagger UI the gateway serves at /docs from the npm registry with
# `npm pack` (no build step, no CDN): swagger-ui-dist's browser bundle and stylesheet, with
# its license, notice and the bundle's third-party licenses. Bump the version here, run
# `make vendor-js`, check tests/gateway/test_docs_page.py, commit
# knowhub_server/gateway/apidocs/vendor/.
set -eu
SWAGGER_UI=5.35.0
target="$(cd "$(dirname "$0")/.." && pwd)/knowhub_server/gateway/apidocs/vendor/swagger-ui"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "swagger-ui-dist@$SWAGGER_UI" >/dev/null
tar -xzf "swagger-ui-dist-$SWAGGER_UI.tgz"
rm -rf "$target" && mkdir -p "$target"
for file in swagger-ui-bundle.js swagger-ui.css LICENSE NOTICE swagger-ui-bundle.js.LICENSE.txt; do
  cp "package/$file" "$target/$file"
done
# The bundle names its source map; the map is not shipped, so the reference goes.
sed -i '/^\/\/# sourceMappingURL=/d' "$target/swagger-ui-bundle.js"
sed -i '/^\/\*# sourceMappingURL=/d' "$target/swagger-ui.css"
{
  echo "swagger-ui-dist $SWAGGER_UI (Apache-2.0; see NOTICE and swagger-ui-bundle.js.LICENSE.txt)."
  echo "Fetched from the npm registry by scripts/vendor_swagger_ui.sh; do not edit."
  echo
  cd "$target" && sha256sum swagger-ui-bundle.js swagger-ui.css LICENSE NOTICE swagger-ui-bundle.js.LICENSE.txt
} > "$work/VERSION"
mv "$work/VERSION" "$target/VERSION"
echo "vendored swagger-ui-dist $SWAGGER_UI into $target"
