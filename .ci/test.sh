#!/usr/bin/env bash
# The whole test suite, as README.md gives it: installs what the tests need
# (the pinned Claude Code CLI for the end-to-end hook tests), then vets and
# tests every package. Run from anywhere inside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_CODE_VERSION=2.1.328
# opencode for the e2e test of the generated miam-guard.js plugin: the
# release opencode-1.18.33/FINDINGS.md observed.
OPENCODE_VERSION=1.18.33
node_dir=.ci/node
claude_bin=$node_dir/node_modules/.bin/claude
opencode_bin=$node_dir/node_modules/.bin/opencode
if ! "$claude_bin" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION " ||
  [ "$("$opencode_bin" --version 2>/dev/null)" != "$OPENCODE_VERSION" ]; then
  mkdir -p "$node_dir"
  # One npm call for both: with --no-save and no package.json, npm removes
  # whatever a call does not name.
  (cd "$node_dir" && npm install --no-save --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "opencode-ai@$OPENCODE_VERSION")
  # npm 11 may skip the package's postinstall, which links the native binary
  # shipped in its platform dependency: run it explicitly.
  "$claude_bin" --version >/dev/null 2>&1 ||
    node "$node_dir/node_modules/@anthropic-ai/claude-code/install.cjs"
  "$opencode_bin" --version >/dev/null 2>&1 ||
    node "$node_dir/node_modules/opencode-ai/postinstall.mjs"
fi
MIAM_CLAUDE_BIN="$(pwd)/$claude_bin"
export MIAM_CLAUDE_BIN
"$MIAM_CLAUDE_BIN" --version
MIAM_OPENCODE_BIN="$(pwd)/$opencode_bin"
export MIAM_OPENCODE_BIN
echo "opencode $("$MIAM_OPENCODE_BIN" --version)"

# The lint control's tests run pyflakes (ruff is not packaged by Debian);
# go vet comes with Go. Installed once: a second run only checks.
if ! command -v pyflakes3 >/dev/null 2>&1 && ! command -v pyflakes >/dev/null 2>&1 && ! command -v ruff >/dev/null 2>&1; then
  (apt-get install -y --no-install-recommends pyflakes3 >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends pyflakes3 >/dev/null; }) ||
    echo "pyflakes3 could not be installed (not root?): the lint control will say it skipped Python" >&2
fi

# The sandbox (commande control) runs untrusted code in bubblewrap; its
# attack tests run against every backend that works. Installed once: a
# second run only checks; without root the suite tests what the machine has.
if [ ! -x /usr/bin/bwrap ]; then
  (apt-get install -y --no-install-recommends bubblewrap >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends bubblewrap >/dev/null; }) ||
    echo "bubblewrap could not be installed (not root?): the sandbox tests check ErrNoIsolation instead" >&2
fi

# The hook is built against musl where musl-gcc exists (README's install);
# TestStaticBuild checks that build too.
if ! command -v musl-gcc >/dev/null 2>&1; then
  (apt-get install -y --no-install-recommends musl-tools >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends musl-tools >/dev/null; }) ||
    echo "musl-tools could not be installed (not root?): TestStaticBuild/musl skips, or fails under CI" >&2
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.ci/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed on: $unformatted" >&2
  exit 1
fi
go vet ./...
go test -count=1 ./...
