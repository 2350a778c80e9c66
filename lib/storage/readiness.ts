import type { EngineName } from './settings';
import type { NamespaceDatabase, NamespaceHealth, ReadinessGap } from './engine';
import { payKeysMatch, type PayKeys, type RecordedPayKeys } from './pay-keys';


// The readiness policy of a provisioned namespace (pay's), the same on every engine: each engine reads what the
// database holds and says cheaply when that can have changed; this decides, and keeps the decision until it can.

/** What a provisioned namespace's database that opens (or answers) holds, as far as readiness is concerned. */
export interface ProvisionedContents {

    /** True when it holds no table at all: a database `provision pay` has yet to make a pay database. */
    empty: boolean;

    /** The hashes of the pair recorded in it, null when none is (or it has no table for them). */
    recorded: RecordedPayKeys | null;

    /** True when every shipped migration is recorded in it with an unchanged checksum. */
    complete: boolean;
}

/** Where a provisioned namespace stands: ready, with its database, or why not. */
export type ProvisionedState = { ready: true; database: NamespaceDatabase } | { ready: false; configured: boolean; gap: ReadinessGap };

/** An engine's side of a provisioned namespace: what its database holds, and a cheap mark of when that can change. */
export interface ProvisionedSource {
    readonly engine: EngineName;
    readonly storage: NamespaceHealth['storage'];

    /**
     * A mark that changes whenever what the database holds can have changed (a file replaced, another connection's
     * commit); null when the engine cannot tell, so the contents are read again. Read on every request: it must cost
     * microseconds.
     */
    mark(): string | null;

    /** What the database holds, with the database itself; null when there is none (no file, no answer). */
    read(): Promise<{ contents: ProvisionedContents; database: NamespaceDatabase } | null>;

    /** The schema version of the database, null when there is none or it cannot be read. */
    schemaVersion(): Promise<number | null>;

    close(): Promise<void>;
}


/**
 * The state for these settings' keys and a database's contents; null contents stand for no database (a setting
 * unset, no file, a file that does not open, a server that does not answer). An empty database records no pair, so
 * it is configured without schema; once a pair is recorded, only that pair configures it, and a database of another
 * application, which records none, never is.
 */
export function provisionedState(read: { contents: ProvisionedContents; database: NamespaceDatabase } | null, keys: PayKeys): ProvisionedState {

    if (!read) {
        return { ready: false, configured: false, gap: 'unconfigured' };
    }

    const { contents, database } = read;
    if (contents.empty) {
        return { ready: false, configured: true, gap: 'no_schema' };
    }

    if (!contents.recorded) {
        return { ready: false, configured: false, gap: 'unconfigured' };
    }

    if (!payKeysMatch(contents.recorded, keys)) {
        return { ready: false, configured: false, gap: 'keys_differ' };
    }

    return contents.complete ? { ready: true, database } : { ready: false, configured: true, gap: 'no_schema' };
}


/**
 * A provisioned namespace as a data set holds it: its readiness decided by the policy above and kept until the
 * engine's mark says the database can have changed (a provision, a rotation, a replaced file, a failed open), so that
 * a request pays for the mark, not for reading the database.
 */
export class ProvisionedNamespace {

    private cached: { mark: string; state: ProvisionedState } | null = null;

    constructor(private readonly source: ProvisionedSource, private readonly keys: PayKeys) { }

    /** Where the namespace stands now. */
    async readiness(): Promise<ProvisionedState> {

        // The mark is taken before the read: a change between the two is newer than the mark, so it is read again.
        const mark = this.source.mark();
        if (mark !== null && this.cached?.mark === mark) {
            return this.cached.state;
        }

        const state = provisionedState(await this.source.read(), this.keys);
        this.cached = mark === null ? null : { mark, state };
        return state;
    }

    /** Its line of /health: ready, configured (no schema yet) or unconfigured. */
    async health(): Promise<NamespaceHealth> {

        const [state, schemaVersion] = await Promise.all([this.readiness(), this.source.schemaVersion()]);
        return {
            state: state.ready ? 'ready' : (state.configured ? 'configured' : 'unconfigured'),
            engine: this.source.engine,
            schema_version: schemaVersion,
            storage: this.source.storage
        };
    }

    close(): Promise<void> {

        this.cached = null;
        return this.source.close();
    }
}


/** A provisioned namespace a data set has no database for (an instance made without pay): never configured. */
export function absentNamespace(engine: EngineName, storage: NamespaceHealth['storage']): ProvisionedNamespace {

    const source: ProvisionedSource = {
        engine,
        storage,
        mark: () => 'absent',
        read: () => Promise.resolve(null),
        schemaVersion: () => Promise.resolve(null),
        close: () => Promise.resolve()
    };

    return new ProvisionedNamespace(source, { publishableKey: '', secretKey: '' });
}
