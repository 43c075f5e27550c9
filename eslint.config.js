import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './eslint/layers.js';

export default tseslint.config(
  // Fixtures are third-party code kept verbatim (the spec's tutorial function as published).
  {
    ignores: [
      'node_modules/',
      'bench/node_modules/',
      'templates/',
      '.ledge/',
      'coverage/',
      '.tmp/',
      'test/**/fixtures/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.js'],
    plugins: { ledge: layersPlugin },
    rules: { 'ledge/layers': 'error' },
  },
  // Time goes through the injected Clock (src/shared/clock.ts), so a test moves a ManualClock instead of
  // waiting. Outside it: the browser UI (the viewer's clock) and the modules run inside workerd (the
  // runtime's own clock, which only moves on I/O). Monotonic durations (performance.now) stay allowed:
  // they measure latency, are never stored nor compared with a timestamp.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/shared/clock.ts', 'src/dashboard/ui/**', 'src/workerd/isolate/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'read the time from the injected Clock (src/shared/clock.ts): clock.now(), not Date.now()',
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'read the time from the injected Clock (src/shared/clock.ts): new Date(clock.now()), not new Date()',
        },
      ],
    },
  },
  // The dashboard renders what tenants stored (object keys, log lines, names) as text only.
  {
    files: ['src/dashboard/ui/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML'].map((property) => ({
          property,
          message: 'build elements with dom.ts h() (text children only)',
        })),
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.property.name='write']", message: 'no document.write' },
      ],
    },
  },
);
