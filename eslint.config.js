import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Who may import whom (STYLE.md "Folders and who may import whom"), written as one "may import" list
// per folder. The lists become no-restricted-imports patterns (static imports and re-exports) and
// no-restricted-syntax selectors (import(), require(), createRequire(...)()): VS Code fails its build
// on every upward arrow the same way. electron/eslint-walls.spec.ts lints one probe per wall.

// Every folder a wall can name, by the last segment of its path (each one is unique in the tree).
const AREAS = {
  shared: 'shared',
  engine: 'electron/engine',
  'ui-door': 'electron/ui-door',
  server: 'electron/server',
  cli: 'electron/cli',
  mcp: 'electron/mcp',
  main: 'electron/main',
  preload: 'electron/preload',
  'test-support': 'electron/test-support',
  renderer: 'renderer',
  e2e: 'e2e',
  bench: 'bench',
  scripts: 'scripts',
  bin: 'bin',
};

// `may`: areas (`engine`) or single modules and sub-folders of one (`server/client`); its own folder
// always. `electron`: may import the electron package. `packages`: when set, the only npm packages
// and Node built-ins allowed. `tests`: what its specs and test helpers may import besides.
const TEST_HELPERS = ['test-support'];
const WALLS = [
  // Two engine specs reach out on purpose: the ledger's CLI contract, and the seccomp profile's source.
  { area: 'engine', may: ['shared'], tests: [...TEST_HELPERS, 'cli/commands/audit', 'scripts/seccomp-profile'] },
  { area: 'ui-door', may: ['engine', 'shared'], tests: TEST_HELPERS },
  { area: 'server', may: ['engine', 'ui-door', 'shared'], tests: TEST_HELPERS },
  // The CLI is also the composition root of `warden serve` and `warden mcp`.
  {
    area: 'cli',
    may: [
      'engine',
      'shared',
      'server/client',
      'server/server-file',
      'server/tokens',
      'server/index',
      'server/web-shell/index',
      'mcp/index',
    ],
    tests: TEST_HELPERS,
  },
  { area: 'mcp', may: ['engine', 'shared', 'server/client', 'server/server-file'], tests: [...TEST_HELPERS, 'server/index'] },
  { area: 'main', may: ['engine', 'ui-door', 'shared'], electron: true, tests: TEST_HELPERS },
  // A sandboxed preload is one file: electron, and types from shared/contracts (see its tsconfig).
  { area: 'preload', may: ['shared/contracts'], electron: true, packages: ['electron'], self: false, typesOnly: true },
  // Test helpers start real doors (a test server over the engine) for specs of every layer.
  { area: 'test-support', may: ['engine', 'ui-door', 'shared', 'server/index', 'server/client', 'server/tokens'], tests: [] },
  { area: 'renderer', may: ['shared'], tests: [] },
  { area: 'e2e', may: ['shared'], tests: [] },
  { area: 'bench', may: Object.keys(AREAS), says: 'anything but electron', tests: [] },
  { area: 'shared', may: [], packages: ['zod'], tests: [], testPackages: ['vitest'] },
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const RELATIVE = String.raw`^\.{1,2}/(?:.*/)?`;

/** Regexes (over the import's text) of what `wall` may not import, each with why. */
function forbidden(wall, extra = [], extraPackages = []) {
  const may = [...wall.may, ...extra];
  const list = wall.says ?? [...new Set([...may, ...(wall.electron ? ['electron'] : []), ...(wall.packages ?? [])])].join(', ');
  const message = `${AREAS[wall.area]}/ may import ${list} (eslint.config.js WALLS).`;
  const rules = [];
  for (const area of Object.keys(AREAS)) {
    if (area === wall.area || may.includes(area)) continue;
    const parts = may.filter((m) => m.startsWith(`${area}/`)).map((m) => escape(m.slice(area.length + 1)));
    const except = parts.length ? String.raw`(?!(?:${parts.join('|')})(?:\.m?js$|/))` : '';
    rules.push({ regex: `${RELATIVE}${escape(area)}/${except}`, message });
  }
  if (wall.self === false) {
    const reach = may.map((m) => `${escape(m)}/[^/]+$`).join('|');
    rules.push({ regex: String.raw`^\.{1,2}/(?!(?:\.\./)*(?:${reach}))`, message: `${message} It is one file.` });
  }
  if (!wall.electron)
    rules.push({ regex: '^electron(?:/|$)', message: `${message} Only electron/main and electron/preload may import electron.` });
  if (wall.packages) {
    const allowed = [...wall.packages, ...extraPackages].map(escape).join('|');
    rules.push({ regex: String.raw`^(?!\.|(?:${allowed})$)`, message: `${message} No other package or Node built-in.` });
  }
  return rules;
}

/** The same walls for import(), require() and createRequire(...)(), which no-restricted-imports does not see. */
function syntaxOf(rules) {
  const selectors = [];
  for (const { regex, message } of rules) {
    const re = `/${regex.replaceAll('/', String.raw`\x2F`)}/`;
    selectors.push(
      { selector: `ImportExpression[source.value=${re}]`, message },
      { selector: `CallExpression[callee.name='require'][arguments.0.value=${re}]`, message },
      { selector: `CallExpression[callee.callee.name='createRequire'][arguments.0.value=${re}]`, message },
    );
  }
  return selectors;
}

// The engine never loads electron, however it is asked for, and names its dynamic imports literally.
const ENGINE_SYNTAX = [
  { selector: String.raw`CallExpression[arguments.0.value=/^electron(\x2F|$)/]`, message: 'The engine never loads electron.' },
  { selector: "ImportExpression:not([source.type='Literal'])", message: 'The engine names what it imports, so the walls can check it.' },
];

// What plain Node scripts use (the `globals` package is not a dependency).
const NODE_GLOBALS = Object.fromEntries(
  ['process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate']
    .concat(['structuredClone', 'fetch', 'TextEncoder', 'TextDecoder', 'AbortController', 'AbortSignal', 'performance', 'queueMicrotask'])
    .map((name) => [name, 'readonly']),
);

const TEST_FILES = ['**/*.spec.ts', 'electron/server/test-server.ts'];

function blocks(wall) {
  const dir = AREAS[wall.area];
  const extraSyntax = wall.area === 'engine' ? ENGINE_SYNTAX : [];
  const typesOnly = wall.typesOnly
    ? [{ selector: "ImportDeclaration[importKind!='type'][source.value=/^\\./]", message: `${dir}/ takes only types from shared/.` }]
    : [];
  const block = (files, rules, ignores) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      'no-restricted-imports': ['error', { patterns: rules.map((r) => ({ ...r, caseSensitive: true })) }],
      'no-restricted-syntax': ['error', ...syntaxOf(rules), ...extraSyntax, ...typesOnly],
    },
  });
  const main = block([`${dir}/**`], forbidden(wall), wall.tests ? TEST_FILES : undefined);
  if (!wall.tests) return [main];
  const tests = TEST_FILES.map((f) => (f.startsWith('**') ? `${dir}/${f}` : f)).filter((f) => f.startsWith(`${dir}/`));
  return [main, block(tests, forbidden(wall, wall.tests, wall.testPackages))];
}

export const layering = WALLS.flatMap(blocks);

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'e2e/screenshots/**', 'e2e/report/**', 'coverage/**', 'bench/.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Scripts, the bin entry and this file: plain Node ESM, linted without type information.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: NODE_GLOBALS },
    rules: { '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }] },
  },
  ...layering,
);
