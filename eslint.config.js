import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Who may import whom (STYLE.md): shared imports nothing of ours; the engine never imports electron;
// only main and preload may; the renderer and e2e reach the rest through shared/ only.
const layering = [
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/electron/**', '**/renderer/**', 'electron', 'node:*', 'fs', 'path', 'os'], message: 'shared/ is the contract: it imports nothing but zod.' }] },
      ],
    },
  },
  {
    files: ['electron/engine/**/*.ts', 'electron/server/**/*.ts', 'electron/cli/**/*.ts', 'electron/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'Only electron/main and electron/preload may import electron.' }],
          patterns: [{ group: ['**/renderer/**', '**/main/**', '**/preload/**'], message: 'The engine and its doors import only shared/ and the engine.' }],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}', 'e2e/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer reaches the engine through the preload object only.' }],
          patterns: [{ group: ['**/electron/**'], message: 'The renderer and e2e import shared/ only.' }],
        },
      ],
    },
  },
];

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'e2e/screenshots/**', 'e2e/report/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
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
  ...layering,
);
