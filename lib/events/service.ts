import { DomainError } from '../errors';
import type { FailureLog } from '../safe-listener';
import type { Scope } from '../scope';
import { cursorOf, lastCursor, listEvents, type EventPage } from './log';
import { typePattern, type TypePattern } from '../outbox';
import { EventSubscription, maxStreamsPerDataSet } from './stream';


/** A stream's reader that leaves this much unread is dropped. */
export const maxStreamBufferBytes = 1024 * 1024;

/** Where a stream begins: after the event Last-Event-ID names (it wins), or after; with neither, from now on. */
export interface StreamStart {
    after?: string;
    resumed?: string;
    type?: string;
}


// The types a query asks for: none is every type.
function typesOf(type: string | undefined): TypePattern[] | null {

    return type === undefined ? null : [typePattern(type)];
}


/** A page of a data set's events after the one `after` names, of one type or all, as GET …/events lists them. */
export async function eventPage(scope: Scope, { after, type, limit }: { after?: string; type?: string; limit: number }): Promise<EventPage> {

    const logs = await scope.data.eventLogs();
    return await listEvents(logs, { after: after ?? null, types: typesOf(type), limit });
}


/** The event streams a server has open, bounded per data set, closed as the server stops. */
export class EventStreams {

    private readonly subscriptions = new Set<EventSubscription>();

    constructor(private readonly settings: { heartbeatMs: number; maxBufferedBytes: number; log: FailureLog }) { }

    /** Opens a stream of a data set's events, polling every pollMs for other processes' (0: none); a 429 past the bound. */
    async open(scope: Scope, { after, resumed, type }: StreamStart, pollMs: number): Promise<EventSubscription> {

        if ([...this.subscriptions].filter((open) => open.scope.services === scope.services).length >= maxStreamsPerDataSet) {
            throw new DomainError('limit', 'too_many_streams', `${maxStreamsPerDataSet} streams of this data set are open, the most it serves at once: close one before opening another`);
        }

        const logs = await scope.data.eventLogs();
        const from = resumed ?? after;
        const cursor = from !== undefined ? await cursorOf(logs, from, resumed === undefined ? 'after' : 'Last-Event-ID') : await lastCursor(logs);
        const subscription = new EventSubscription(scope, cursor, typesOf(type), { ...this.settings, pollMs });
        this.subscriptions.add(subscription);
        subscription.stream.once('close', () => this.subscriptions.delete(subscription));
        return subscription;
    }

    /** Ends every open stream, so that none holds the server open as it stops. */
    closeAll(): void {

        for (const subscription of this.subscriptions) {
            subscription.close();
        }
    }
}
