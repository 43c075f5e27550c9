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
