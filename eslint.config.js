'use strict';

const HapiPlugin = require('@hapi/eslint-plugin');
const TsEslint = require('typescript-eslint');


module.exports = TsEslint.config(
    {
        ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/results/**', 'bench/.cache/**', 'bench/.baseline/**', 'test/**/*.d.ts', 'test/generated/**']
    },
    ...HapiPlugin.configs.module,
    {
        // The console's page: ES modules the browser loads as they are.
        files: ['console/**/*.js'],
        languageOptions: {
            sourceType: 'module',
            globals: Object.fromEntries(['crypto', 'document', 'EventSource', 'fetch', 'FormData', 'history', 'location'].map((name) => [name, 'readonly']))
        },
        rules: {
            'func-style': 'off',
            // Views nest short arrow functions inside html`` markup, where a blank line would split the markup.
            '@hapi/scope-start': 'off'
        }
    },
    {
        files: ['**/*.ts'],
        extends: [TsEslint.configs.recommended],
        languageOptions: {
            parser: TsEslint.parser,
            sourceType: 'module'
        },
        rules: {
            'strict': 'off',
            'func-style': 'off',
            'no-undef': 'off',
            'no-redeclare': 'off',
            'no-unused-vars': 'off',
            'no-shadow': 'off',
            '@typescript-eslint/no-shadow': ['warn', { allow: ['err', 'done'] }],
            '@typescript-eslint/no-unused-vars': ['warn', { vars: 'all', caughtErrors: 'none', varsIgnorePattern: '^internals$', args: 'none' }],
            '@typescript-eslint/no-explicit-any': 'error'
        }
    },
    {
        // lib/ is linted with its types: an assertion the types make needless, and a non-null assertion, are errors.
        files: ['lib/**/*.ts'],
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: __dirname }
        },
        rules: {
            '@typescript-eslint/no-unnecessary-type-assertion': 'error',
            '@typescript-eslint/no-non-null-assertion': 'error'
        }
    }
);
