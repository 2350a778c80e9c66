import type { IdMode } from '../record-context';
import { fixtureBody, isRecord } from '../fixtures';
import type { NamespaceSchema } from '../namespace';
import { shippedMigrationNames } from '../storage/migrations';


export interface InstanceOptions {
    /** The id of a live instance to fork: the new one is a copy of it as it is now. */
    from?: string;
    seed: 'demo' | 'none';
    ids: IdMode;
    clock?: string;
    /** Where a sequential id counter starts (an exported instance's), 0 unless given. */
    idCounter?: number;
    pay: boolean;
    fixture?: { records: unknown; origin: string };
}

/** What POST /_instances (or the test kit) takes, as validated: the fixture as sent, seed, ids and pay unset unless asked for. */
export type NewInstance = Omit<InstanceOptions, 'fixture' | 'ids' | 'seed' | 'pay'> & { fixture?: unknown; ids?: IdMode; seed?: 'demo' | 'none'; pay?: boolean };


/**
 * The options of a new instance from what was asked. A fixture exported from an instance carries its clock, ids and
 * pay: the new instance continues each that was not asked for, and a sequential counter goes on from the file's. An
 * export holds the whole world, so the demo goes beneath it only when asked for; a fixture with pay records and pay
 * unset gets pay.
 */
export function instanceOptions(asked: NewInstance, origin: string, namespaces: readonly NamespaceSchema[]): InstanceOptions {

    const body = asked.fixture === undefined ? undefined : fixtureBody(asked.fixture, origin, shippedMigrationNames(namespaces));
    const carried = body?.header?.instance;
    return {
        from: asked.from,
        seed: asked.seed ?? (body?.header ? 'none' : 'demo'),
        ids: asked.ids ?? carried?.ids ?? 'random',
        clock: asked.clock ?? carried?.clock ?? undefined,
        idCounter: carried?.id_counter,
        pay: asked.pay ?? carried?.pay ?? (isRecord(body?.records) && Object.hasOwn(body.records, 'pay')),
        fixture: asked.fixture === undefined ? undefined : { records: asked.fixture, origin }
    };
}
