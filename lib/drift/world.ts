import { fixtureFormat, isRecord, type FixtureSpec } from '../fixtures';
import type { Namespace } from '../namespace';
import type { Exchange } from './har';


// A world from a recording: the records its answers held, by collection, with their ids, as a fixture file
// (`POST /_instances {fixture}`, `localgate seed --file`) holds them.

/** Where an answer's records belong: the namespace and collection, and whether the answer is a list envelope. */
interface Place {
    namespace: string;
    collection: string;
    list: boolean;
}

/** What a world left out, in one line each: a record whose reference the recording never showed. */
export interface WorldFromHar {
    fixture: Record<string, unknown>;
    counts: Record<string, number>;
    leftOut: string[];
}

// The paths whose answers are not `/v1/<namespace>/<collection>[/<id>]`: pay's, where a caller reads their own wallet.
const payPlaces: [RegExp, Place][] = [
    [/^\/v1\/pay\/wallet\/?$/, { namespace: 'pay', collection: 'wallets', list: false }],
    [/^\/v1\/pay\/wallet\/transactions\/?$/, { namespace: 'pay', collection: 'transactions', list: true }],
    [/^\/v1\/pay\/(?:wallet\/transactions\/[^/]+|gateway\/(?:deposit|withdraw))$/, { namespace: 'pay', collection: 'transactions', list: false }]
];

/** The fields of a record that name who it belongs to, by collection: a caller's subject is learned from them. */
export const ownerFields: Record<string, string> = { products: 'created_by', inquiries: 'owner_id', scam_reports: 'reporter_id', bookings: 'customer_id', wallets: 'owner_id' };


/** Where the records of an answer to this request belong, or null for a path whose answers hold no records of a collection. */
export function placeOf(method: string, path: string, namespaces: readonly Namespace[]): Place | null {

    const bare = path.replace(/\?.*$/s, '');
    const pay = payPlaces.find(([pattern]) => pattern.test(bare));
    if (pay) {
        return pay[1];
    }

    const match = /^\/v1\/([a-z]+)\/([a-z-]+)(\/[^/]+)?\/?$/.exec(bare);
    const namespace = namespaces.find((candidate) => candidate.name === match?.[1]);
    const collection = String(match?.[2]).replace(/-/g, '_');
    if (!match || !namespace?.fixture?.collections[collection]) {
        return null;
    }

    // A collection's path lists its records when read; written, it answers the one record made.
    return { namespace: namespace.name, collection, list: match[3] === undefined && method === 'GET' };
}


/** The records an exchange's answer holds, each with its place; none for a failure or an answer of no collection. */
export function recordsOf(exchange: Exchange, namespaces: readonly Namespace[]): { place: Place; record: Record<string, unknown> }[] {

    const place = exchange.status < 300 ? placeOf(exchange.method, exchange.path, namespaces) : null;
    if (!place || !isRecord(exchange.answer)) {
        return [];
    }

    const found = place.list ? (Array.isArray(exchange.answer.data) ? exchange.answer.data : []) : [exchange.answer];
    return found.filter((record): record is Record<string, unknown> => isRecord(record) && typeof record.id === 'string').map((record) => ({ place, record }));
}


/**
 * The world a recording saw, as a fixture. `latest`: each record as the last answer that held it showed it (what
 * `fixture from-har` writes); `start`: the world as it stood before the session's writes, each record as it was first
 * seen, and none that a write of the session made (what a drift replays on). Each record keeps the fields its
 * collection's fixture takes; one that refers to a record the recording never showed is left out, and said.
 */
export function worldFromHar(exchanges: readonly Exchange[], namespaces: readonly Namespace[], mode: 'latest' | 'start'): WorldFromHar {

    const seen = new Map<string, { place: Place; record: Record<string, unknown> }>();
    const made = new Set<string>();
    // A transaction's answer does not name its wallet: it is the wallet its caller read.
    const wallets = new Map<string | null, unknown>(exchanges.flatMap((exchange) => recordsOf(exchange, namespaces).filter(({ place }) => place.collection === 'wallets').map(({ record }): [string | null, unknown] => [exchange.caller, record.id])));
    for (const exchange of exchanges) {
        for (const found of recordsOf(exchange, namespaces).map(({ place, record }) => ({ place, record: place.collection === 'transactions' ? { wallet_id: wallets.get(exchange.caller), ...record } : record }))) {
            const key = `${found.place.namespace}/${found.place.collection}/${String(found.record.id)}`;
            // A record a POST answered first is one the session made: not in the world it started from.
            if (exchange.method === 'POST' && !seen.has(key)) {
                made.add(key);
            }

            if (mode === 'latest' || !seen.has(key)) {
                seen.set(key, found);
            }
        }
    }

    const fixture: Record<string, Record<string, Record<string, unknown>[]>> = {};
    const counts: Record<string, number> = {};
    const leftOut: string[] = [];
    const kept = new Set<string>();
    for (const namespace of namespaces) {
        const spec: FixtureSpec = namespace.fixture?.collections ?? {};
        // In the fixture's own order: a record refers only to collections before its own.
        for (const [collection, definition] of Object.entries(spec)) {
            const fields = Object.keys(definition.schema.describe().keys as Record<string, unknown>);
            for (const [key, { place, record }] of seen) {
                if (place.namespace !== namespace.name || place.collection !== collection || (mode === 'start' && made.has(key))) {
                    continue;
                }

                const missing = Object.entries(definition.references).map(([field, target]) => ({ field, table: target(record), id: record[field] }))
                    .find(({ table, id }) => typeof id === 'string' && !kept.has(`${namespace.name}/${table}/${id}`) && table !== 'providers');
                if (missing) {
                    leftOut.push(`${namespace.name}.${collection} ${String(record.id)}: its ${missing.field} ${String(missing.id)} is a ${missing.table} record the recording never showed`);
                    continue;
                }

                const entry = Object.fromEntries(fields.filter((field) => field in record && !(collection === 'wallets' && field === 'balances')).map((field) => [field, record[field]]));
                // A record the fixture would refuse (a field the hosted service no longer sends) is left out, and said.
                const { error } = definition.schema.validate(entry);
                if (error) {
                    leftOut.push(`${namespace.name}.${collection} ${String(record.id)}: ${error.message}`);
                    continue;
                }

                const collections = fixture[namespace.name] ??= {};
                (collections[collection] ??= []).push(entry);
                counts[`${namespace.name}.${collection}`] = (counts[`${namespace.name}.${collection}`] ?? 0) + 1;
                kept.add(key);
            }
        }
    }

    return { fixture: { localgate: { format: fixtureFormat }, ...fixture }, counts, leftOut };
}
