import type { DatabaseSettings } from '../../config';
import type { PayCredentials } from '../sqlite/provision';

// PLACEHOLDER: replaced by the real commands.
export function provisionPostgresPay(_url: string, _database: DatabaseSettings): Promise<PayCredentials> {
    throw new Error('not yet');
}
export function rotatePostgresPayKeys(_url: string, _database: DatabaseSettings): Promise<PayCredentials> {
    throw new Error('not yet');
}
