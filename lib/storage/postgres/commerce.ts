import type { RecordContext } from '../../clock';
import type { CommerceStore } from '../../namespaces/commerce/store';
import type { PgDatabase } from './database';

// PLACEHOLDER: replaced by the real store.
export class PgCommerceStore {
    constructor(readonly db: PgDatabase, readonly context: RecordContext) { }
}
export interface PgCommerceStore extends CommerceStore {}
