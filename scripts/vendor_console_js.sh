#!/bin/sh
# Re-fetches the console's vendored JavaScript from the npm registry with `npm pack` (no
# build step, no CDN): @dagrejs/dagre's self-contained ES module (it bundles
# @dagrejs/graphlib) with both licenses. Bump the versions here, run `make vendor-js`,
# check the console tests, commit knowhub_server/gateway/console/vendor/.
set -eu
DAGRE=3.1.3
GRAPHLIB=4.0.6  # the version dagre $DAGRE depends on and bundles
target="$(cd "$(dirname "$0")/.." && pwd)/knowhub_server/gateway/console/vendor/dagre"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "@dagrejs/dagre@$DAGRE" "@dagrejs/graphlib@$GRAPHLIB" >/dev/null
mkdir dagre graphlib
tar -xzf "dagrejs-dagre-$DAGRE.tgz" -C dagre
tar -xzf "dagrejs-graphlib-$GRAPHLIB.tgz" -C graphlib
test "$(node -p "require('./dagre/package/package.json').dependencies['@dagrejs/graphlib']")" = "$GRAPHLIB" \
  || { echo "dagre $DAGRE bundles another graphlib: update GRAPHLIB" >&2; exit 1; }
rm -rf "$target" && mkdir -p "$target"
cp dagre/package/dist/dagre.esm.js "$target/dagre.esm.js"
cp dagre/package/LICENSE "$target/LICENSE"
cp graphlib/package/LICENSE "$target/LICENSE-graphlib"
{
  echo "@dagrejs/dagre $DAGRE (MIT), dist/dagre.esm.js, which bundles @dagrejs/graphlib $GRAPHLIB (MIT)."
  echo "Fetched from the npm registry by scripts/vendor_console_js.sh; do not edit."
  echo
  cd "$target" && sha256sum dagre.esm.js LICENSE LICENSE-graphlib
} > "$work/VERSION"
mv "$work/VERSION" "$target/VERSION"
echo "vendored @dagrejs/dagre $DAGRE into $target"
