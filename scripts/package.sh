#!/usr/bin/env bash
# Builds Ferrodyn's packages into target/packages/ from this checkout:
#   ferrodyn-<version>-py3-none-<platform>.whl   the binary on PATH plus the
#       pytest plugin (maturin `bin` bindings; maturin comes from PyPI into
#       target/packages/.tools, never the system Python)
#   ferrodyn-<version>.tgz, ferrodyn-linux-x64-<version>.tgz   npm: the main
#       package (launcher, startFerrodyn, vitest and jest setups) and the
#       platform package holding the binary, esbuild-style
#   crates/*.crate   every workspace crate as `cargo package` makes it
# The binary is the `dist` profile's (stripped, thin LTO); its size is printed.
# Environment: PACKAGE_VERIFY=1 also builds every .crate from its packaged
# sources (`cargo package` without --no-verify; minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/packages
TOOLS=$OUT/.tools
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
rm -rf "$OUT"/*.whl "$OUT"/*.tgz "$OUT/crates" "$OUT/npm"
mkdir -p "$OUT/crates" "$TOOLS"

echo "== binary (profile dist)"
cargo build --profile dist -p ferrodyn --bin ferrodyn
BIN=$ROOT/target/dist/ferrodyn
SIZE=$(stat -c %s "$BIN")
if readelf -S "$BIN" | grep -q '\.debug_'; then
  echo "package.sh: $BIN carries debug sections" >&2
  exit 1
fi
echo "ferrodyn binary: $SIZE bytes ($(( SIZE / 1024 / 1024 )) MB), stripped"

echo "== Python wheel"
[ -x "$TOOLS/venv/bin/maturin" ] || {
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install --quiet 'maturin>=1.7,<2'
}
# maturin builds the same crate with the same profile: Cargo finds it built.
(cd packaging/python && "$TOOLS/venv/bin/maturin" build --quiet --out "$OUT")

echo "== npm packages"
stage() { # stage DIR TEMPLATE_DIR: copies the template, fills in the version
  rm -rf "$1" && mkdir -p "$1" && cp -r "$2"/. "$1"/
  sed -e "s/@VERSION@/$VERSION/g" -e "s/@PLATFORM@/linux-x64/g" \
      -e "s/@OS@/linux/g" -e "s/@CPU@/x64/g" "$1/package.json.in" > "$1/package.json"
  rm "$1/package.json.in"
}
stage "$OUT/npm/ferrodyn" packaging/npm/ferrodyn
stage "$OUT/npm/linux-x64" packaging/npm/platform
mkdir -p "$OUT/npm/linux-x64/bin"
cp "$BIN" "$OUT/npm/linux-x64/bin/ferrodyn"
(cd "$OUT/npm/ferrodyn" && npm pack --silent --pack-destination "$OUT" >/dev/null)
(cd "$OUT/npm/linux-x64" && npm pack --silent --pack-destination "$OUT" >/dev/null)

echo "== crates"
if [ "${PACKAGE_VERIFY:-0}" = 1 ]; then
  cargo package --workspace --allow-dirty
else
  cargo package --workspace --allow-dirty --no-verify
fi
cp target/package/*-"$VERSION".crate "$OUT/crates/"

echo "== built in $OUT"
ls -l "$OUT" "$OUT/crates" | grep -v '^total'
