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
npm run --silent format:check

results="$root/node_modules/.cache/warden-test"
mkdir -p "$results"
rm -f "$results"/*.json

# From here every stage runs even when an earlier one failed, so a unit failure does not hide the
# integration and end-to-end results; the summary then fails for any failed stage or missing report.
stages=()
failed=()
run_stage() {
  local name="$1"
  shift
  stages+=("$name")
  if ! "$@"; then failed+=("$name"); fi
}
e2e_stage() { npx playwright test --config e2e/playwright.config.ts --reporter=list,json 2>&1 | tee "$results/e2e.log"; }

step "unit specs"
run_stage unit npx vitest run --project unit --reporter=default --reporter=json --outputFile.json="$results/unit.json"

step "integration specs (real Podman, real SQLite)"
run_stage integration npx vitest run --project integration --reporter=default --reporter=json --outputFile.json="$results/integration.json"

if ((e2e)) && [[ -f e2e/playwright.config.ts ]]; then
  step "end-to-end specs (web shell in Debian Chromium)"
  run_stage e2e e2e_stage
fi

step "summary"
if ((${#failed[@]})); then echo "test.sh: these stages failed: ${failed[*]}" >&2; fi
summary=0
node scripts/test-summary.mjs "$results" "${stages[@]}" || summary=$?
if ((${#failed[@]})) || ((summary != 0)); then exit 1; fi
