import { PassThrough } from 'node:stream';

import { safely, type FailureLog } from '../safe-listener';
import type { Scope } from '../scope';
import { afterIn, eventOf, readMerged, type Cursor } from './log';
import type { StoredEvent, TypePattern } from '../outbox';
import { always } from '../always';


/** How a data set's streams behave: the heartbeat's interval, the poll for other processes' events (0: none), the buffer bound. */
export interface StreamSettings {
    heartbeatMs: number;
    pollMs: number;
    maxBufferedBytes: number;
    log: FailureLog;
}

/**
 * How far behind its cursor a stream reads again, in positions. On PostgreSQL a transaction can commit after one that
 * took a later position, and a stream that has passed that position would never read it: each read starts this far
 * back and skips what it sent. An event whose transaction commits more than this many positions late is listed but
 * not streamed.
 */
export const lateWindow = 100;

/** Streams open at once on one data set: each may hold up to the buffer bound unread, so their number is bounded too. */
export const maxStreamsPerDataSet = 32;

// Events one read takes at once: more than the late window holds in all the logs (one position each per log), so that
// each full read moves the cursor on. Logs are in namespace order, and a log that comes later (pay provisioned
// meanwhile) comes after the others: a cursor's rank keeps its meaning.
const readSize = 1000;


/**
 * One subscriber of a data set's events, as Server-Sent Events: what follows its cursor is read after each notice of
 * its data set (and each poll), and written to its stream in the data set's order. Ends when the connection closes,
 * the data set goes, a read fails, or the reader falls more than the buffer bound behind.
 */
export class EventSubscription {

    readonly stream = new PassThrough();
    private closed = false;
    private reading = false;
    private again = false;
    // The newest position sent, and the positions sent within the late window below it, by namespace and position.
    private newest = 0;
    private readonly sent = new Map<string, number>();
    private readonly timers: NodeJS.Timeout[] = [];
    private readonly stops: (() => void)[] = [];

    constructor(readonly scope: Scope, private readonly start: Cursor, private readonly types: TypePattern[] | null, private readonly settings: StreamSettings) {

        const wake = safely('event stream', settings.log, () => this.wake());
        const { services } = scope;
        this.stops.push(services.onEvents(wake), services.onClose(() => this.close()));
        this.timers.push(setInterval(() => this.write(': heartbeat\n\n'), settings.heartbeatMs).unref());
        if (settings.pollMs > 0) {
            this.timers.push(setInterval(wake, settings.pollMs).unref());
        }

        this.stream.once('close', () => this.close());
        this.stream.write('retry: 2000\n\n');
        wake();
    }

    /** Ends the stream (destroys it: what it holds unread is dropped) and stops hearing the data set; a second call does nothing. */
    close(destroy = false): void {

        if (this.closed) {
            return;
        }

        this.closed = true;
        for (const timer of this.timers) {
            clearInterval(timer);
        }

        for (const stop of this.stops) {
            stop();
        }

        if (destroy) {
            this.stream.destroy();
        }
        else {
            this.stream.end();
        }
    }

    // Reads what follows the cursor; a notice that comes while a read runs makes it read once more when done.
    private async wake(): Promise<void> {

        if (this.reading) {
            this.again = true;
            return;
        }

        this.reading = true;
        try {
            do {
                this.again = false;
                await this.readAll();
            } while (this.again);
        }
        catch (err) {
            // A data set that went refuses its reads, and its close has ended the stream already; any other failure
            // ends the stream too (the client resumes with Last-Event-ID) and is logged.
            if (!this.closed) {
                this.close();
                throw err;
            }
        }
        finally {
            this.reading = false;
        }
    }

    private async readAll(): Promise<void> {

        // A subscriber dropped meanwhile reads no further.
        while (!this.closed) {
            const logs = await this.scope.data.eventLogs();
            const floor = this.newest - lateWindow;
            const read = await readMerged(logs, (rank) => Math.max(afterIn(this.start, rank), floor), this.types, readSize);
            for (const { stored, rank } of read) {
                this.send(always(logs[rank], 'the log a merged read names').namespace, stored);
            }

            if (read.length < readSize) {
                return;
            }
        }
    }

    private send(namespace: string, stored: StoredEvent): void {

        const key = `${namespace}:${stored.position}`;
        if (this.sent.has(key)) {
            return;
        }

        this.sent.set(key, stored.position);
        this.newest = Math.max(this.newest, stored.position);
        this.write(`id: ${stored.id}\nevent: ${stored.type}\ndata: ${JSON.stringify(eventOf(stored))}\n\n`);
        for (const [sent, position] of this.sent) {
            if (position < this.newest - lateWindow) {
                this.sent.delete(sent);
            }
        }
    }

    // A reader more than the bound behind is dropped: its stream ends, and it resumes with Last-Event-ID.
    private write(text: string): void {

        if (this.closed) {
            return;
        }

        this.stream.write(text);
        if (this.stream.writableLength > this.settings.maxBufferedBytes) {
            this.close(true);
        }
    }
}
