import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' }
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // A decision is a name or a statement: never a ternary inside a ternary.
      'no-nested-ternary': 'error',
      // Never an assignment inside an expression, nor a comma expression.
      'no-sequences': 'error',
      'no-return-assign': ['error', 'always']
    }
  }
)
