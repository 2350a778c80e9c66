import { BoundedJournal } from '../journal/journal';
import { typePattern } from './model';


/** One attempt to deliver an event to an endpoint, as the delivery journal keeps it. */
export interface DeliveryEntry {
    // <webhook_id>.<attempt>
    id: string;
    event_id: string;
    type: string;
    webhook_id: string;
    endpoint_id: string;
    url: string;
    attempt: number;
    // The attempt's instant on the data set's clock.
    at: string;
    status: number | null;
    duration_ms: number;
    error: string | null;
    // The outbound fault rule that acted on it.
    fault: string | null;
    // Null when delivered or given up.
    next_attempt_at: string | null;
}

/** What count and find match: each field given must hold; `type` may end with `*`, `status` may be null. */
export interface DeliveryPattern {
    type?: string;
    status?: number | null;
    attempt?: number;
    endpoint_id?: string;
    webhook_id?: string;
}

interface Kept {
    entry: DeliveryEntry;
    bytes: number;
}

// What an entry holds beyond its texts, as the request journal estimates it: keys, numbers and the object itself.
const entryOverheadBytes = 400;


/** Whether an entry matches a pattern. */
export function matchesDelivery(entry: DeliveryEntry, pattern: DeliveryPattern): boolean {

    if (pattern.type !== undefined) {
        const { pattern: text, prefix } = typePattern(pattern.type);
        if (prefix ? !entry.type.startsWith(text) : entry.type !== text) {
            return false;
        }
    }

    return (['status', 'attempt', 'endpoint_id', 'webhook_id'] as const).every((field) => pattern[field] === undefined || pattern[field] === entry[field]);
}


/**
 * The attempts one data set made, in the order they were made: at most `size` entries, the oldest dropped first, in
 * the memory the request journals share.
 */
export class DeliveryJournal extends BoundedJournal<Kept> {

    /** Keeps an attempt. */
    add(entry: DeliveryEntry): void {

        const bytes = entryOverheadBytes + 2 * (entry.url.length + entry.event_id.length + entry.endpoint_id.length + entry.webhook_id.length);
        this.keep({ entry, bytes }, (kept) => this.entries.push(kept));
    }

    /** The attempts, oldest first. */
    list(): DeliveryEntry[] {

        return this.entries.map(({ entry }) => entry);
    }
}
