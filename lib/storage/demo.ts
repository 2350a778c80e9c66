import Fs from 'node:fs';
import Path from 'node:path';

import { wallContext } from '../clock';
import { fixtureRows, readFixtureFile, type FixtureRows, type FixtureSpec } from '../fixtures';
import { commerceFixture } from '../namespaces/commerce/fixture';
import { logisticsFixture } from '../namespaces/logistics/fixture';
import { payFixture } from '../namespaces/pay/fixture';
import { demoDataRoot } from '../paths';


/** The collections a fixture can fill, per namespace. */
export const fixtureSpecs: Record<string, FixtureSpec> = { commerce: commerceFixture, logistics: logisticsFixture, pay: payFixture };

/** A namespace's shipped demo data: its collections as in the file, and the rows to store, stamped when asked for. */
export interface DemoData {
    collections: Record<string, unknown>;
    rows(): FixtureRows;
}


// Shipped demo data does not change while the process runs: read once.
const shipped = new Map<string, DemoData | null>();


/** The demo data shipped for a namespace, or null when it has none (weather, pay). */
export function demoData(namespace: string): DemoData | null {

    if (!shipped.has(namespace)) {
        const file = Path.join(demoDataRoot, `${namespace}.json`);
        const collections = Fs.existsSync(file) ? readFixtureFile(file) as Record<string, unknown> : null;
        shipped.set(namespace, collections && {
            collections,
            rows: () => fixtureRows(namespace, collections, fixtureSpecs[namespace]!, file, wallContext())
        });
    }

    return shipped.get(namespace)!;
}
