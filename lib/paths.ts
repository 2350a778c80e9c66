import Fs from 'node:fs';
import Path from 'node:path';


// lib/paths.ts and dist/paths.js both sit one level below the package root.
export const packageRoot = Path.resolve(__dirname, '..');

export const migrationsRoot = Path.join(packageRoot, 'migrations');

export const demoDataRoot = Path.join(packageRoot, 'data', 'demo');


/** The package's name, version and description, as its package.json says. */
export function readPackage(): { name: string; version: string; description: string } {

    return JSON.parse(Fs.readFileSync(Path.join(packageRoot, 'package.json'), 'utf8'));
}
