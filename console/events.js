import { useEffect, useState } from 'preact/hooks';

import { notMountedHint, shortId } from './instances.js';
import { ErrorNote, html, Outcome, useAction, when } from './ui.js';


// Enough to follow a demo; older events drop off the end (GET .../events lists them all).
const kept = 200;

// The largest page GET .../events gives.
const pageSize = 1000;

// The largest page GET .../webhooks/deliveries gives.
const deliveriesPage = 100;

// A stream that ended (the server dropped a slow reader, restarted, or the network went) is opened again after this.
const reconnectMs = 2000;

// The mark of the page's own reads: the live log leaves them out unless asked.
const housekeeping = { 'x-localgate-console': 'housekeeping' };


/** The events routes of a data set: /_events for the default one, an instance's own otherwise. */
function eventsPath(id) {

    return id ? `/_instances/${id}/events` : '/_events';
}


/** The webhooks routes of a data set: /_webhooks for the default one, an instance's own otherwise. */
function webhooksPath(id) {

    return id ? `/_instances/${id}/webhooks` : '/_webhooks';
}


/** The frames of a Server-Sent Events text, and what is left of it (a frame not complete yet). */
export function framesOf(text) {

    const blocks = text.split('\n\n');
    const rest = blocks.pop();
    const frames = [];
    for (const block of blocks) {
        const frame = {};
        for (const line of block.split('\n')) {
            const colon = line.indexOf(': ');
            if (!line.startsWith(':') && colon > 0) {
                frame[line.slice(0, colon)] = line.slice(colon + 2);
            }
        }

        if (frame.id && frame.data) {
            frames.push({ id: frame.id, event: JSON.parse(frame.data) });
        }
    }

    return { frames, rest };
}


// The newest events kept, newest first: every page of the list is read, only the last `kept` stay.
async function readNewest(instances, path) {

    let newest = [];
    let after = null;
    for (;;) {
        const query = `?limit=${pageSize}${after ? `&after=${after}` : ''}`;
        const { data } = await instances.adminCall(`${path}${query}`, { housekeeping: true });
        newest = [...data.data.reverse(), ...newest].slice(0, kept);
        if (data.count < pageSize) {
            return newest;
        }

        after = data.data[0].id;
    }
}


// Reads a stream after an event id (none: from now on) until it ends or the page aborts it; each event is told to hear.
async function follow(path, token, after, signal, hear, opened) {

    const headers = { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...housekeeping };
    if (after) {
        headers['last-event-id'] = after;
    }

    const res = await fetch(`${path}/stream`, { headers, signal });
    if (!res.ok) {
        const body = await res.json().catch(() => ({}));
        throw Object.assign(new Error(body.message ?? res.statusText), { status: res.status, code: body.code ?? `http_${res.status}` });
    }

    opened();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    for (;;) {
        const { value, done } = await reader.read();
        if (done) {
            return;
        }

        const { frames, rest } = framesOf(text + value);
        text = rest;
        frames.forEach(hear);
    }
}


/**
 * The events of the data set on screen, live: the newest read from the list, then each new one from the stream,
 * newest first; a stream that ends is opened again after the last event heard, so that none is missed.
 * {events, state ('connecting', 'live', 'off'), error}.
 */
export function useEvents(instances) {

    const { selected, ready, adminToken } = instances;
    const [events, setEvents] = useState([]);
    const [state, setState] = useState('connecting');
    const [error, setError] = useState(null);
    useEffect(() => {

        if (!ready) {
            return undefined;
        }

        const path = eventsPath(selected);
        const abort = new AbortController();
        let last = null;
        const hear = ({ id, event }) => {

            last = id;
            setEvents((previous) => [event, ...previous].slice(0, kept));
        };

        (async () => {

            try {
                const newest = await readNewest(instances, path);
                setEvents(newest);
                last = newest[0]?.id ?? null;
            }
            catch (err) {
                setError(err);
                setState('off');
                return;
            }

            while (!abort.signal.aborted) {
                try {
                    await follow(path, adminToken, last, abort.signal, hear, () => {

                        setState('live');
                        setError(null);
                    });
                }
                catch (err) {
                    if (abort.signal.aborted) {
                        return;
                    }

                    // An instance gone, or an event pruned meanwhile: no stream to resume.
                    if (err.status) {
                        setError(err);
                        setState('off');
                        return;
                    }
                }

                setState('connecting');
                await new Promise((resolve) => setTimeout(resolve, reconnectMs));
            }
        })();

        return () => abort.abort();
    }, [selected, ready]);

    return { events, state, error };
}


// Each webhook delivery (one event to one endpoint) with its attempts, in the order their first attempt was made.
function deliveriesOf(attempts) {

    const byWebhook = new Map();
    for (const attempt of attempts) {
        const delivery = byWebhook.get(attempt.webhook_id) ?? { webhook_id: attempt.webhook_id, event_id: attempt.event_id, endpoint_id: attempt.endpoint_id, type: attempt.type, url: attempt.url, attempts: [] };
        delivery.attempts.push(attempt);
        byWebhook.set(attempt.webhook_id, delivery);
    }

    return [...byWebhook.values()].reverse();
}


// What became of an attempt, in words.
function outcomeOf(attempt) {

    const answer = attempt.status === null ? attempt.error ?? 'no answer' : `HTTP ${attempt.status}`;
    if (attempt.next_attempt_at) {
        return `${answer}: failed, next attempt ${when(attempt.next_attempt_at)}`;
    }

    return attempt.status !== null && attempt.status >= 200 && attempt.status < 300 ? `${answer}: delivered` : `${answer}: given up`;
}


// A body as kept: JSON indented when it is whole JSON, else the text as it came; said when cut at its first KiB.
function bodyText(message) {

    let text = message.body;
    if (!message.body_truncated) {
        try {
            text = JSON.stringify(JSON.parse(message.body), null, 2);
        }
        catch {
            text = message.body;
        }
    }

    return message.body_truncated ? `${text}\n… (the first KiB of a longer body)` : text;
}


// One side of an attempt as HTTP shows it: its first line, its headers, a blank line and its body.
function messageText(first, message) {

    const headers = Object.entries(message.headers).map(([name, value]) => `${name}: ${value}`);
    return [first, ...headers, ...(message.body ? ['', bodyText(message)] : [])].join('\n');
}


// What an attempt sent and what came back, folded until asked for.
function Exchange({ delivery, attempt }) {

    const what = `attempt ${attempt.attempt} of ${delivery.type} ${shortId(delivery.event_id)}`;
    return html`<details class="exchange"><summary>Request and answer</summary>
        <h4 class="label">Request</h4>
        ${attempt.request ?
        html`<pre tabindex="0" aria-label=${`Request of ${what}`}>${messageText(`POST ${delivery.url}`, attempt.request)}</pre>` :
        html`<p class="meta">Nothing left: ${attempt.fault ? 'a fault rule dropped it before it was sent' : attempt.error ?? 'not sent'}.</p>`}
        <h4 class="label">Answer</h4>
        ${attempt.response ?
        html`<pre tabindex="0" aria-label=${`Answer to ${what}`}>${messageText(`HTTP ${attempt.status}`, attempt.response)}</pre>` :
        html`<p class="meta">No answer came: ${attempt.error ?? 'none'}.</p>`}
    </details>`;
}


// The resend route of an event: the default data set's, or the instance's.
function resendPath(id, eventId) {

    return `${eventsPath(id)}/${encodeURIComponent(eventId)}/resend`;
}


// One delivery: its event and endpoint, each attempt with what it sent and what came back, and a resend button.
function Delivery({ instances, delivery, onResent }) {

    const [state, run] = useAction();
    const resend = () => run(async () => {

        const { data } = await instances.adminCall(resendPath(instances.selected, delivery.event_id), { method: 'POST', body: { endpoint_id: delivery.endpoint_id } });
        onResent();
        return data.attempted;
    }, (attempted) => (attempted ?
        `Resent ${delivery.type} ${shortId(delivery.event_id)} to ${delivery.url}: ${attempted} attempt${attempted === 1 ? '' : 's'} made, with the same webhook-id.` :
        `No attempt of ${delivery.type} ${shortId(delivery.event_id)} was made now: the endpoint is disabled, and the resend waits, pending, until it is enabled.`));

    return html`<li class="card">
        <p><strong>${delivery.type}</strong> to <code>${delivery.url}</code> <span class="meta">event <code title=${delivery.event_id}>${shortId(delivery.event_id)}</code>, webhook-id <code>${delivery.webhook_id}</code></span></p>
        <ol class="attempts">
            ${delivery.attempts.map((attempt, index) => html`<li key=${`${attempt.id}-${index}`}>Attempt ${attempt.attempt} at <span title=${attempt.at}>${when(attempt.at)}</span>: ${outcomeOf(attempt)} <span class="meta">(${attempt.duration_ms} ms${attempt.fault ? `, fault ${shortId(attempt.fault)}` : ''})</span>
                <${Exchange} delivery=${delivery} attempt=${attempt} />
            </li>`)}
        </ol>
        <div class="row">
            <button type="button" disabled=${state.busy} aria-label=${`Resend ${delivery.type} ${shortId(delivery.event_id)} to ${delivery.url}`} onClick=${resend}>Resend</button>
            <span class="meta">One attempt now, whatever became of the others.</span>
        </div>
        <div aria-live="polite"><${Outcome} state=${state} /></div>
    </li>`;
}


/**
 * The webhook deliveries of the data set on screen, read again with `revision` (a new event may have been sent):
 * the newest page of attempts, grouped by delivery. A server without webhooks (404) has none.
 */
function useDeliveries(instances, revision) {

    const { selected, ready } = instances;
    const [state, setState] = useState({ deliveries: [], error: null });
    useEffect(() => {

        if (!ready) {
            return undefined;
        }

        let live = true;
        const path = `${webhooksPath(selected)}/deliveries`;
        (async () => {

            try {
                const first = await instances.adminCall(`${path}?limit=${deliveriesPage}`, { housekeeping: true });
                const { data } = first.data.total > deliveriesPage ? await instances.adminCall(`${path}?limit=${deliveriesPage}&offset=${first.data.total - deliveriesPage}`, { housekeeping: true }) : first;
                if (live) {
                    setState({ deliveries: deliveriesOf(data.data), error: null });
                }
            }
            catch (error) {
                if (live) {
                    setState({ deliveries: [], error: error.status === 404 && error.code !== 'instance_not_found' ? null : error });
                }
            }
        })();

        return () => {

            live = false;
        };
    }, [selected, ready, revision]);

    return state;
}


// The console's inbox of a data set: default, or the instance's id.
function inboxPath(id) {

    return `/console/api/inbox/${id ?? 'default'}`;
}


/** Where the data set's webhooks reach the console's inbox: this server, on its loopback address. */
function inboxUrl(id) {

    return `http://127.0.0.1:${location.port || '80'}/console/inbox/${id ?? 'default'}`;
}


/** The webhooks the console's inbox received for the data set on screen, newest first, read again with `revision`. */
function useInbox(instances, revision) {

    const { selected, ready } = instances;
    const [state, setState] = useState({ entries: [], error: null });
    useEffect(() => {

        if (!ready) {
            return undefined;
        }

        let live = true;
        (async () => {

            try {
                const { data } = await instances.adminCall(inboxPath(selected), { housekeeping: true });
                if (live) {
                    setState({ entries: data.data, error: null });
                }
            }
            catch (error) {
                if (live) {
                    setState({ entries: [], error: error.status === 404 ? null : error });
                }
            }
        })();

        return () => {

            live = false;
        };
    }, [selected, ready, revision]);

    return state;
}


/** The events view: the data set's events as they are written, newest first, and each webhook delivery with its attempts. */
export function Events({ instances }) {

    const { selected } = instances;
    const { events, state, error } = useEvents(instances);
    // The deliveries are read again a moment after each event: its first attempt leaves once its write has committed.
    const [revision, setRevision] = useState(0);
    useEffect(() => {

        const timer = setTimeout(() => setRevision((n) => n + 1), 1000);
        return () => clearTimeout(timer);
    }, [events[0]?.id]);
    const deliveries = useDeliveries(instances, revision);
    const inbox = useInbox(instances, revision);
    const [sent, setSent] = useState({ url: null, error: null });
    // The endpoint's secret goes from the server's answer to the inbox and is never shown.
    const sendToConsole = async () => {

        try {
            const url = inboxUrl(selected);
            const { data } = await instances.adminCall(webhooksPath(selected), { method: 'PUT', body: { endpoints: [{ url }] } });
            await instances.adminCall(inboxPath(selected), { method: 'PUT', body: { secret: data.endpoints[0].secret } });
            setSent({ url, error: null });
            setRevision((n) => n + 1);
        }
        catch (err) {
            setSent({ url: null, error: err });
        }
    };

    const where = selected ? `instance ${shortId(selected)}` : 'the default data set';

    return html`<section aria-labelledby="events-heading">
        <h2 id="events-heading">Events <span class=${`state ${state}`}>${state}</span></h2>
        <p class="hint">Every change a client can see in ${where} writes one event, in the same transaction: products, inquiries, scam reports, bookings and payments, and the transitions the clock applies. Newest first, live from GET ${eventsPath(selected)}/stream.</p>
        <${ErrorNote} error=${instances.error ?? error} hint=${instances.notMounted ? notMountedHint : null} />
        <ol class="events" aria-label="Events, newest first">
            ${events.map((event) => html`<li key=${event.id}>
                <div class="line"><strong class="type">${event.type}</strong> <span class="meta" title=${event.created_at}>${when(event.created_at)}</span> <code class="meta" title=${event.id}>${shortId(event.id)}</code></div>
                <details><summary>data</summary><pre tabindex="0" aria-label=${`Data of ${event.type} ${shortId(event.id)}`}>${JSON.stringify(event.data, null, 2)}</pre></details>
            </li>`)}
        </ol>
        ${events.length ? null : html`<p class="meta">No events yet: make a product, a booking or a payment.</p>`}
        <h3 id="deliveries-heading">Webhook deliveries</h3>
        <p><button type="button" onClick=${sendToConsole}>Send webhooks to the console</button></p>
        ${sent.url ? html`<p class="answer" role="status">Every event of ${where} now goes to <code>${sent.url}</code> (this replaces its endpoints); the inbox below checks each signature with the endpoint's secret, which the server keeps.</p>` : null}
        <${ErrorNote} error=${sent.error} />
        <${ErrorNote} error=${deliveries.error} />
        ${deliveries.deliveries.length ? html`<ol class="deliveries" aria-labelledby="deliveries-heading">
            ${deliveries.deliveries.map((delivery) => html`<${Delivery} key=${delivery.webhook_id} instances=${instances} delivery=${delivery} onResent=${() => setRevision((n) => n + 1)} />`)}
        </ol>` : html`<p class="meta">No deliveries: PUT ${webhooksPath(selected)} sets the endpoints that receive the events.</p>`}
        <h3 id="inbox-heading">Console inbox</h3>
        <${ErrorNote} error=${inbox.error} />
        ${inbox.entries.length ? html`<ol class="inbox" aria-labelledby="inbox-heading">
            ${inbox.entries.map((entry, index) => html`<li key=${`${entry.webhook_id}-${entry.at}-${index}`}>
                <strong>${entry.type ?? 'no event type'}</strong> <span class=${`state ${entry.verified ? 'live' : 'off'}`}>${entry.verified ? 'verified' : 'not verified'}</span> <span class="meta">webhook-id <code>${entry.webhook_id ?? 'none'}</code>, arrived <span title=${entry.at}>${when(entry.at)}</span></span>
            </li>`)}
        </ol>` : html`<p class="meta">No webhooks received: <em>Send webhooks to the console</em> makes this inbox the data set's endpoint.</p>`}
    </section>`;
}
