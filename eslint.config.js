/**
 * @module eslint.config
 * Lint rules that catch bugs the compiler lets through: promises nobody awaits or that land where a
 * callback's result is ignored, throws of non-errors, switches that miss a case, assertions that
 * assert nothing, values of type any flowing into typed code. Type-aware: each file is read with
 * the types of the tsconfig.json nearest to it (the gateway's, or plugins/tsconfig.json).
 * Formatting is Prettier's (`npm run format`); eslint-config-prettier turns off every rule that
 * would argue with it.
 *
 * Left off on purpose, with the number of findings when the linter came in:
 * - require-await (37): an async function without await keeps a Promise-returning contract (an
 *   interface method, a handler); making it sync would change what callers get when it throws.
 * - no-base-to-string (22): plugins turn provider JSON of loose types into text with String() on
 *   purpose; the findings are that, not bugs.
 * - preserve-caught-error (11): attaching { cause } changes the errors' shape; to be done with the
 *   error catalogue's codes rather than line by line.
 * - unbound-method (32, 28 in tests): flags methods of plain objects handed on as callbacks, which
 *   do not use `this`.
 * - no-control-regex (21, each one intended): the gateway and plugins match control characters on
 *   purpose, to refuse or strip them.
 * - no-unsafe-* and no-explicit-any in test/, bench/ and host/security-report/ (about 1,600): they
 *   read JSON answers as any by design; production code keeps the rules.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/** The Node.js globals the plain .js/.mjs scripts use (the TypeScript files get theirs from @types/node). */
const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'URLSearchParams',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'AbortController',
    'AbortSignal',
    'fetch',
    'performance',
    'structuredClone',
    'TextEncoder',
    'TextDecoder',
  ].map((name) => [name, 'readonly']),
);

/** node:test's describe/it/before… return promises the runner itself awaits. */
const nodeTestCalls = {
  from: 'package',
  package: 'node:test',
  name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      '.tools/',
      'data/',
      'bench/results/',
      'test/fixtures/',
      'plugins/*/plugin.js',
      // Declarations only (the globals plugin code sees); no tsconfig holds it as a source of its own.
      'sdk/sandbox-globals.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [nodeTestCalls] }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-import-type-side-effects': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
        },
      ],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allow: [
            { from: 'lib', name: ['URL', 'URLSearchParams'] },
            { from: 'package', package: 'url', name: ['URL', 'URLSearchParams'] },
          ],
        },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      'preserve-caught-error': 'off',
      '@typescript-eslint/unbound-method': 'off',
      'no-control-regex': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**', 'host/security-report/**'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: nodeGlobals },
  },
  prettier,
);
