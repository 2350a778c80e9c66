import type { RecordContext } from '../../clock';
import type { LogisticsStore } from '../../namespaces/logistics/store';
import type { PgDatabase } from './database';

// PLACEHOLDER: replaced by the real store.
export class PgLogisticsStore {
    constructor(readonly db: PgDatabase, readonly context: RecordContext) { }
}
export interface PgLogisticsStore extends LogisticsStore {}
