import type { PayStatus } from '../../lib/namespaces/pay/store';
import { payNamespace } from '../../lib/namespaces/pay';
import { payStatus } from '../../lib/namespaces/pay/routes';
import type { PayKeys } from '../../lib/storage/pay-keys';
import type { ProvisionedNamespace } from '../../lib/storage/readiness';
import { openSqliteProvisioned } from '../../lib/storage/sqlite/provisioned';


/** Pay over a file as a server started with these keys follows it. */
export function followPayFile(file: string, keys: Partial<PayKeys>): ProvisionedNamespace {

    return openSqliteProvisioned(payNamespace, { storage: 'file', pay: { url: file, ...keys }, payLocation: { engine: 'sqlite', file } });
}


/** The status record /v1/pay/status answers for a followed pay database. */
export async function statusOf(pay: ProvisionedNamespace): Promise<PayStatus> {

    return payStatus(await pay.readiness());
}
