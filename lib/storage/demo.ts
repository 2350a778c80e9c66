import { wallContext } from '../record-context';
import { fixtureRows, readFixtureFile, type FixtureRows, type FixtureSpec } from '../fixtures';
import type { Namespace, NamespaceSchema } from '../namespace';


/** A namespace's shipped demo data: its collections as in the file, and the rows to store, stamped when asked for. */
export interface DemoData {
    collections: Record<string, unknown>;
    rows(): FixtureRows;
}


// Demo data does not change while the process runs: read once per file.
const shipped = new Map<string, DemoData>();


/** The demo data of a namespace, or null when it has none (weather, pay). */
export function demoData(namespace: NamespaceSchema): DemoData | null {

    const { fixture } = namespace;
    if (!fixture?.demo) {
        return null;
    }

    const file = fixture.demo;
    let demo = shipped.get(file);
    if (!demo) {
        const collections = readFixtureFile(file) as Record<string, unknown>;
        demo = { collections, rows: () => fixtureRows(namespace.name, collections, fixture.collections, file, wallContext()) };
        shipped.set(file, demo);
    }

    return demo;
}


/** The collections a fixture can fill, per namespace that has any. */
export function fixtureSpecs(namespaces: readonly Namespace[]): Record<string, FixtureSpec> {

    return Object.fromEntries(namespaces.flatMap((namespace) => (namespace.fixture ? [[namespace.name, namespace.fixture.collections]] : [])));
}
