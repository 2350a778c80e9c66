import type { RecordContext } from '../../clock';
import { isPostgresUrl, type DatabaseSettings, type PaySettings } from '../../config';
import type { PayAccess } from '../../namespaces/pay/store';

// PLACEHOLDER: replaced by the real readiness.
export class PgPayReadiness {
    static handles(url: string): boolean {
        return isPostgresUrl(url);
    }
    static open(_settings: PaySettings, _database: DatabaseSettings, _context: RecordContext): Promise<PgPayReadiness> {
        throw new Error('not yet');
    }
    close(): Promise<void> {
        return Promise.resolve();
    }
}
export interface PgPayReadiness extends PayAccess {}
