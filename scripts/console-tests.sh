#!/usr/bin/env bash
# Browser tests of the web console (tests/console/*.py): Selenium drives the
# real console in headless Chromium against servers the tests start.
# Debian's chromium and chromium-driver are installed with apt-get when
# missing (as root; both come from one source package, so their versions
# match), and selenium + pytest into a project-local venv (target/console-venv).
# Screenshots and browser logs of failed tests go to target/console-tests/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null \
      || { apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null; }
  else
    echo "console-tests: chromium and chromedriver are missing; install them (apt-get install chromium chromium-driver)" >&2
    exit 1
  fi
fi
venv=target/console-venv
# boto3 and moto's server: the Backups tab's bulk loads read a real S3.
if ! "$venv/bin/python" -c 'import selenium, pytest, boto3, moto, flask' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check selenium pytest boto3 'moto[server]'
fi
[ -x target/debug/ferrodyn ] || cargo build -p ferrodyn --bin ferrodyn
"$venv/bin/python" -m pytest -q tests/console "$@"
