#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what is missing, then runs every suite.
#   npm test            everything
#   bash scripts/test.sh --no-e2e   skip the browser suite
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

e2e=1
for arg in "$@"; do
  case "$arg" in
    --no-e2e) e2e=0 ;;
    *) echo "test.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

step() { printf '\n== %s ==\n' "$*"; }

step "machine set-up (apt packages, sandbox image)"
if ((e2e)); then bash scripts/setup.sh; else bash scripts/setup.sh --no-browser; fi

step "node modules"
if [[ ! -d node_modules ]] || ! node -e "require.resolve('better-sqlite3'); require('better-sqlite3')(':memory:')" 2>/dev/null; then
  npm ci --no-audit --no-fund
fi

step "build"
npm run --silent build:cli

step "typecheck and lint"
npm run --silent typecheck
npm run --silent lint

results="$root/node_modules/.cache/warden-test"
mkdir -p "$results"
rm -f "$results"/*.json

step "unit specs"
npx vitest run --project unit --reporter=default --reporter=json --outputFile.json="$results/unit.json"

step "integration specs (real Podman, real SQLite)"
npx vitest run --project integration --reporter=default --reporter=json --outputFile.json="$results/integration.json"

if ((e2e)) && [[ -f e2e/playwright.config.ts ]]; then
  step "end-to-end specs (web shell in Debian Chromium)"
  npx playwright test --config e2e/playwright.config.ts --reporter=list,json 2>&1 | tee "$results/e2e.log"
fi

node scripts/test-summary.mjs "$results"
