import Path from 'node:path';


// lib/paths.ts and dist/paths.js both sit one level below the package root.
export const packageRoot = Path.resolve(__dirname, '..');

export const migrationsRoot = Path.join(packageRoot, 'migrations');

export const demoDataRoot = Path.join(packageRoot, 'data', 'demo');
