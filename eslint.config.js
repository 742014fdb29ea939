// Lint rules for the whole tree (`npm run lint`, run by CI). The recommended
// rule sets of ESLint and typescript-eslint, without type information so a run
// stays in seconds; the few rules turned off below say why.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/**', '.data/**', '.build/**', 'dist/**', '**/dist/**', 'http/**/static/**', '**/*.bundle.js', 'coverage/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.mocha },
    },
    rules: {
      // Unused names are errors, except a deliberate `_` prefix (exhaustiveness
      // checks such as `const _never: never = command`, ignored parameters).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Control characters in patterns are deliberate: they are what the
      // validators and renderers refuse (NUL, C0 in zone files and BIRD strings).
      'no-control-regex': 'off',
      // `any` remains where pg rows are mapped to views (the row types are the
      // SQL's); a warning keeps new ones visible without failing the build.
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  {
    // Specs read JSON answers loosely and assert with chai's property style
    // (`expect(x).to.be.true`), which is an expression statement.
    files: ['spec/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
);
