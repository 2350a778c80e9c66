import type { IdSource } from '../record-context';
import type { DataSetDatabases } from '../storage/engine';


/**
 * Sets the id source's last event position from what a data set's databases hold (the max over its event logs), so
 * that the next event follows every one kept: called as a data set opens, and when an instance's data is reset,
 * restored, forked or handed out from the pool, since its databases then hold other events than the source last saw.
 */
export async function resyncEventPosition(data: DataSetDatabases, ids: IdSource): Promise<void> {

    const positions = await Promise.all((await data.eventLogs()).map((log) => log.lastPosition()));
    ids.lastEventPosition = Math.max(0, ...positions);
}
