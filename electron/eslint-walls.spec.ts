// The import walls of eslint.config.js stay tested: each probe is one line a file in that folder might
// write, linted in memory with the real config (architecture review §1: these 15 used to pass lint).
// Type-aware parsing is off for the probes: their files do not exist, and the walls are not type-aware.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfig: [
    {
      files: ['**/*.ts', '**/*.tsx'],
      languageOptions: { parserOptions: { projectService: false, project: null } },
      rules: { '@typescript-eslint/no-floating-promises': 'off' },
    },
  ],
});
const WALL_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

/** The wall errors linting `code` as `file` gives (other rules' findings are not the point here). */
async function walls(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}/${file}` });
  const fatal = result!.messages.filter((m) => m.fatal);
  expect(fatal, `${file} must parse`).toEqual([]);
  return result!.messages.filter((m) => m.ruleId && WALL_RULES.has(m.ruleId)).map((m) => `${m.ruleId}: ${m.message}`);
}

const imports = (source: string) => `import '${source}';\n`;

// [file, code]: the review's 15 probes, in its order, then a few more of the same walls.
const FORBIDDEN: [string, string][] = [
  ['renderer/src/x.ts', imports('../../electron/engine/engine.js')],
  ['shared/x.ts', imports('../electron/engine/engine.js')],
  ['shared/x.ts', imports('node:crypto')],
  ['electron/server/x.ts', imports('electron')],
  ['electron/engine/x.ts', imports('../server/server.js')],
  ['electron/engine/x.ts', imports('../cli/backend.js')],
  ['electron/engine/x.ts', imports('electron/main')],
  ['electron/engine/x.ts', "await import('electron');\n"],
  ['electron/engine/x.ts', "import { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('electron');\n"],
  ['electron/preload/x.ts', imports('../../renderer/src/api/bridge.js')],
  ['electron/preload/x.ts', imports('../engine/engine.js')],
  ['electron/main/x.ts', imports('../../renderer/src/store/index.js')],
  ['shared/x.ts', imports('child_process')],
  ['shared/x.ts', imports('zustand')],
  ['bench/x.ts', imports('electron')],
  // More of the same walls.
  ['electron/engine/gateway/x.ts', imports('../../ui-door/ui-session.js')],
  ['electron/engine/x.ts', imports('../mcp/index.js')],
  ['electron/engine/x.ts', imports('../main/ipc.js')],
  ['electron/engine/x.ts', imports('../preload/index.js')],
  ['electron/engine/x.ts', "const name = 'electron';\nawait import(name);\n"],
  [
    'electron/engine/x.ts',
    "import { createRequire } from 'node:module';\nconst load = createRequire(import.meta.url);\nload('electron');\n",
  ],
  ['electron/engine/x.ts', "export { x } from '../server/client.js';\n"],
  ['electron/engine/x.spec.ts', imports('../server/server.js')],
  ['electron/ui-door/x.ts', imports('../server/index.js')],
  ['electron/main/x.ts', imports('../server/web-shell/index.js')],
  ['electron/cli/x.ts', imports('../server/routes-agent.js')],
  ['electron/mcp/x.ts', imports('../server/index.js')],
  ['electron/mcp/x.ts', imports('../cli/backend.js')],
  ['electron/preload/x.ts', imports('./channels.js')],
  ['electron/preload/x.ts', imports('node:fs')],
  ['electron/preload/x.ts', "import { IPC_CHANNELS } from '../../shared/contracts/methods.js';\nexport const c = IPC_CHANNELS;\n"],
  ['shared/types/x.ts', imports('fs')],
  ['shared/x.ts', imports('../renderer/src/store/index.js')],
  ['renderer/src/x.ts', imports('electron')],
  ['e2e/x.ts', imports('../electron/server/index.js')],
  ['electron/test-support/x.ts', imports('../main/index.js')],
];

const ALLOWED: [string, string][] = [
  [
    'electron/engine/podman/x.ts',
    imports('../../../shared/types/sandbox.js') + imports('node:fs') + imports('better-sqlite3') + imports('../ledger/ledger.js'),
  ],
  ['electron/engine/x.spec.ts', imports('../test-support/podman-fixture.js') + imports('vitest')],
  ['electron/ui-door/x.ts', imports('../engine/engine.js') + imports('../../shared/errors.js')],
  ['electron/server/web-shell/x.ts', imports('../../ui-door/ui-session.js') + imports('../../engine/engine.js') + imports('fastify')],
  ['electron/cli/commands/x.ts', imports('../../server/client.js') + imports('../../server/tokens.js') + imports('../../mcp/index.js')],
  ['electron/mcp/x.ts', imports('../server/server-file.js') + imports('@modelcontextprotocol/sdk/server/mcp.js')],
  ['electron/mcp/x.int.spec.ts', imports('../server/index.js') + imports('../test-support/test-server.js')],
  ['electron/main/x.ts', imports('electron') + imports('../ui-door/csp.js') + imports('../engine/paths.js')],
  [
    'electron/preload/x.ts',
    "import { contextBridge } from 'electron';\nimport type { WardenBridge } from '../../shared/contracts/bridge.js';\nexport type B = WardenBridge;\nexport const c = contextBridge;\n",
  ],
  ['shared/contracts/x.ts', imports('zod') + imports('../errors.js') + imports('./methods.js')],
  ['shared/x.spec.ts', imports('vitest')],
  ['renderer/src/features/x.ts', imports('../../../shared/errors.js') + imports('zustand') + imports('../store/index.js')],
  ['e2e/specs/x.spec.ts', imports('../../shared/types/api.js') + imports('@playwright/test') + imports('node:child_process')],
  ['bench/x.ts', imports('../electron/engine/engine.js') + imports('../electron/server/client.js') + imports('../e2e/fixtures/podman.js')],
];

describe('import walls', () => {
  it.each(FORBIDDEN)('%s: %s fails lint', async (file, code) => {
    expect(await walls(file, code)).not.toEqual([]);
  });

  it.each(ALLOWED)('%s: %s passes', async (file, code) => {
    expect(await walls(file, code)).toEqual([]);
  });
});
