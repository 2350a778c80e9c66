import { useEffect, useRef, useState } from 'preact/hooks';

import { shortId } from './instances.js';
import { vehicleLabel } from './logistics.js';
import { apiClient, html, useLoad } from './ui.js';


const eventsPath = '/console/api/events';

// Enough to scroll back through a test run; older entries drop off the end.
const kept = 300;


// Who made a request, as far as the server knows: a public route reads no token, so it never knows.
function callerOf(entry) {

    return entry.caller ?? (entry.public ? 'public route' : 'anonymous');
}


// A reply dropped after the request with no answer kept: the client closed the connection before there was one.
function gaveUp(entry) {

    return entry.dropped === 'after' && entry.unsent === null;
}


// A dropped reply is shown as what it was, never as a status: the client got none.
function droppedOf(entry) {

    return `${gaveUp(entry) ? 'client gave up' : 'reply dropped'} (${entry.written ? 'written' : 'not written'})`;
}


// What a fault did to a request, in a sentence for the detail pane.
function faultStory(entry) {

    if (entry.dropped === 'before') {
        return 'The connection closed before the request ran: nothing was written, and the client got no reply.';
    }

    if (gaveUp(entry)) {
        return `The client gave up: it closed the connection before the request had an answer, so there was no reply to drop. ${entry.written ? 'The request was carried out and committed.' : 'Nothing was written.'}`;
    }

    if (entry.dropped === 'after') {
        const { status, code } = entry.unsent;
        const answer = `${status}${code ? ` ${code}` : ''}`;
        return entry.written ?
            `The request was carried out and committed (${answer}), then its reply was dropped: the client saw the connection close. A retry with the same Idempotency-Key is replayed.` :
            `The request ran (${answer}) and wrote nothing, then its reply was dropped: the client saw the connection close.`;
    }

    return entry.status >= 400 ? 'The fault answered in place of the service: nothing was written.' : 'The fault delayed the request, which then ran as usual.';
}


// Every word must match: a status or a request id as a whole (409 is no part of an id), method, path, caller,
// data set and fault marks in part.
function matches(entry, filter) {

    const marks = entry.fault ? ` fault ${entry.fault_rule}${entry.dropped ? ` ${droppedOf(entry)}` : ''}` : '';
    const text = `${entry.method} ${entry.path}${entry.query} ${callerOf(entry)} ${dataSetOf(entry)}${marks}`.toLowerCase();
    const whole = [String(entry.status ?? entry.unsent?.status ?? ''), entry.id.toLowerCase()];
    return filter.toLowerCase().split(/\s+/).filter(Boolean).every((word) => whole.includes(word) || text.includes(word));
}


// The data set a request ran in: an instance's base path, or the default data set.
function dataSetOf(entry) {

    return entry.instance ? `instance ${entry.instance}` : 'default';
}


// The vehicles a request's path or body names by id (vehicle_id in a record or in a refusal's message), in order, once each.
function vehicleIdsOf(entry) {

    const named = /vehicle(?:s\/|_id"?:?\s*"?)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g;
    return [...new Set([...`${entry.path} ${entry.body ?? ''}`.matchAll(named)].map((match) => match[1]))];
}


// Vehicle names already read, by data set and id: a record's make, model and year never change.
const vehicleNames = new Map();


// The vehicles an entry names, as the booking form names them, read from the data set the request ran in.
function VehicleNames({ entry }) {

    const ids = vehicleIdsOf(entry);
    const base = entry.instance ?? '';
    const names = useLoad(() => Promise.all(ids.map(async (id) => {

        const key = `${base} ${id}`;
        if (!vehicleNames.has(key)) {
            const { data } = await apiClient(base, null)(`/v1/logistics/vehicles/${id}`, { housekeeping: true });
            vehicleNames.set(key, vehicleLabel(data));
        }

        return [id, vehicleNames.get(key)];
    })), [entry.id]);

    if (!ids.length || !names.data) {
        return null;
    }

    return html`<ul class="names" aria-label="Vehicles named">${names.data.map(([id, name]) => html`<li key=${id}>Vehicle <code title=${id}>${shortId(id)}</code>: <strong>${name}</strong></li>`)}</ul>`;
}


// 501 is this service's documented answer of a namespace not provisioned yet (weather, pay before provisioning): no failure.
function statusClass(status) {

    if (status === 501) {
        return 'status planned';
    }

    return status >= 500 ? 'status s5' : (status >= 400 ? 'status s4' : 'status s2');
}


/** The live request log: every request the service answers, newest on top; onEntry(entry) hears each as it comes. */
export function LiveLog({ onEntry }) {

    const [entries, setEntries] = useState([]);
    // The stream is opened once: it calls whichever listener the page renders with now.
    const hear = useRef(onEntry);
    hear.current = onEntry;
    const [state, setState] = useState('connecting');
    const [filter, setFilter] = useState('');
    const [own, setOwn] = useState(false);
    const [selected, setSelected] = useState(null);
    useEffect(() => {

        const source = new EventSource(eventsPath);
        source.onopen = () => setState('live');
        source.onerror = () => setState(source.readyState === EventSource.CLOSED ? 'off' : 'connecting');
        source.addEventListener('request', (event) => {

            const entry = JSON.parse(event.data);
            setEntries((previous) => [entry, ...previous].slice(0, kept));
            hear.current?.(entry);
        });
        return () => source.close();
    }, []);

    // The page's own housekeeping (its reads of instances, rules and names) stays out unless asked for.
    const hidden = own ? 0 : entries.filter((entry) => entry.housekeeping).length;
    const shown = entries.filter((entry) => (own || !entry.housekeeping) && matches(entry, filter));
    const chosen = entries.find((entry) => entry.id === selected);
    return html`<aside class="log" aria-labelledby="log-heading">
        <h2 id="log-heading">Live requests <span class=${`state ${state}`}>${state}</span></h2>
        ${state === 'off' ? html`<p class="error" role="alert">The live log is not mounted on this server: localgate mounts it only when it listens on a loopback address, or with CONSOLE_API=on.</p>` : null}
        <div class="row">
            <label for="log-filter">Filter</label>
            <input id="log-filter" type="search" value=${filter} placeholder="path, status, caller, instance…" onInput=${(event) => setFilter(event.target.value)} />
            <button type="button" onClick=${() => {

        setEntries([]);
        setSelected(null);
    }}>Clear</button>
        </div>
        <label class="check"><input type="checkbox" checked=${own} onChange=${(event) => setOwn(event.target.checked)} /> Show the page's own calls${own ? '' : ` (${hidden} hidden)`}</label>
        ${chosen ? html`<div class="detail" aria-live="polite">
            <h3>${chosen.method} ${chosen.path}${chosen.query}</h3>
            <p>${chosen.dropped ? droppedOf(chosen) : chosen.status} · ${chosen.ms} ms · ${callerOf(chosen)} · ${chosen.instance ? html`instance <code title=${chosen.instance}>${shortId(chosen.instance.slice('/i/'.length))}</code>` : 'default data set'} · <code>${chosen.id}</code></p>
            <${VehicleNames} key=${chosen.id} entry=${chosen} />
            ${chosen.fault ? html`<div class="fault-note"><p><strong>Injected fault:</strong> <code>${chosen.fault_rule}</code> (rule <code title=${chosen.fault}>${shortId(chosen.fault)}</code>)</p><p>${faultStory(chosen)}</p></div>` : null}
            ${chosen.dropped ? null : chosen.body ? html`<pre tabindex="0" aria-label="Response body">${chosen.body}${chosen.truncated ? '\n…(cut)' : ''}</pre>` :
        html`<p class="hint">No body shown: success bodies of pay and of the documentation are never streamed.</p>`}
            <button type="button" onClick=${() => setSelected(null)}>Close</button>
        </div>` : null}
        <ol class="entries" aria-label="Requests, newest first">
            ${shown.map((entry) => html`<li key=${entry.id} class=${entry.fault ? 'faulted' : null}>
                <button type="button" aria-pressed=${entry.id === selected} onClick=${() => setSelected(entry.id)}>
                    <span class="time">${entry.time.slice(11, 19)}</span>
                    <span class="method">${entry.method}</span>
                    <span class="path">${entry.path}${entry.query}</span>
                    ${entry.dropped ? html`<span class="status dropped">${droppedOf(entry)}</span>` : html`<span class=${statusClass(entry.status)}>${entry.status}</span>`}
                    <span class="ms">${entry.ms} ms</span>
                    <span class="caller">${callerOf(entry)}</span>
                    <span class="rid">${entry.id}</span>
                    ${entry.instance ? html`<span class="instance" title=${entry.instance}>instance ${shortId(entry.instance.slice('/i/'.length))}</span>` : null}
                    ${entry.fault ? html`<span class="fault">fault: ${entry.fault_rule}</span>` : null}
                </button>
            </li>`)}
        </ol>
    </aside>`;
}
