import { useEffect, useState } from 'preact/hooks';

import { shortId } from './instances.js';
import { ErrorNote, html, minorMoney, StateNote, useLoad, when } from './ui.js';


// The Present view: a scenario file played one step at a time on an instance of its own (POST /_presentations), its
// caption large, what its request sent and got, and the world it leaves (wallets, bookings, events, webhook inbox).
// The presentation lives in the server; the page keeps its id for as long as it is open.

/** The page's presentation: the one open (null: none), and the calls that start, step and end it. */
export function usePresentation(instances) {

    const [presentation, setPresentation] = useState(null);
    const [state, setState] = useState({ busy: false, error: null });
    // Changes with every answer, so that the world views read the world again (a step gone back and played again too).
    const [round, setRound] = useState(0);
    const act = async (call) => {

        setState({ busy: true, error: null });
        try {
            const { data } = await call();
            setPresentation(data);
            setRound((n) => n + 1);
            setState({ busy: false, error: null });
            return data;
        }
        catch (error) {
            // Ended elsewhere, idle too long, or the server restarted: there is nothing left to step.
            if (error.code === 'presentation_not_found') {
                setPresentation(null);
            }

            setState({ busy: false, error });
            return null;
        }
    };

    const step = (action) => presentation && !state.busy && act(() => instances.adminCall(`/_presentations/${presentation.id}/${action}`, { method: 'POST' }));
    return {
        presentation,
        round,
        ...state,
        async start(body) {

            const made = await act(() => instances.adminCall('/_presentations', { method: 'POST', body }));
            if (made) {
                await instances.refresh();
                instances.switchTo(made.instance);
            }
        },
        next: () => step('next'),
        back: () => step('back'),
        restart: () => step('restart'),
        async end() {

            const { id, instance } = presentation;
            await act(async () => {

                await instances.adminCall(`/_presentations/${id}?keep=true`, { method: 'DELETE' });
                return { data: null };
            });
            // The world stays to look around in: the instance is kept, and the page still uses it.
            instances.switchTo(instance);
        }
    };
}


function Picker({ instances, presenting }) {

    const catalogue = useLoad(() => instances.adminCall('/_scenarios', { housekeeping: true }).then((res) => res.data.data), [instances.ready]);
    const [chosen, setChosen] = useState('example/demo.yaml');
    const [dropped, setDropped] = useState(null);
    const read = async (file) => {

        if (file) {
            setDropped({ file: file.name, text: await file.text() });
        }
    };

    const sources = { example: 'Examples', builtin: 'One per event type (localgate trigger)', data: 'DATA_DIR/scenarios' };
    const listed = catalogue.data ?? [];
    return html`<form class="card present-picker" onSubmit=${(event) => {

        event.preventDefault();
        presenting.start(dropped ? { text: dropped.text, file: dropped.file } : { scenario: chosen });
    }}>
        <label for="present-scenario">Scenario
            <select id="present-scenario" value=${chosen} disabled=${Boolean(dropped)} onChange=${(event) => setChosen(event.target.value)}>
                ${Object.entries(sources).map(([source, label]) => html`<optgroup label=${label}>
                    ${listed.filter((entry) => entry.source === source).map((entry) => html`<option value=${entry.id} disabled=${Boolean(entry.error)}>${entry.name ?? entry.file}${entry.error ? ` (cannot run: ${entry.error})` : ` · ${entry.steps} steps`}</option>`)}
                </optgroup>`)}
            </select>
        </label>
        <div class="drop" onDragOver=${(event) => event.preventDefault()} onDrop=${(event) => {

    event.preventDefault();
    read(event.dataTransfer.files[0]);
}}>
            <label for="present-file">Or a file of your own (drop it here)
                <input id="present-file" type="file" accept=".yaml,.yml,.json" onChange=${(event) => read(event.target.files[0])} />
            </label>
            ${dropped ? html`<p class="meta">${dropped.file} <button type="button" class="link" onClick=${() => setDropped(null)}>use the list instead</button></p>` : null}
        </div>
        <button type="submit" disabled=${presenting.busy || (!dropped && !listed.length)}>Start presenting</button>
        <${ErrorNote} error=${catalogue.error} />
    </form>`;
}


// A body as the page shows it: JSON indented, a text as it came.
function Body({ value }) {

    if (value === null || value === undefined) {
        return html`<p class="meta">No body</p>`;
    }

    return html`<pre tabindex="0">${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>`;
}


function Exchange({ shown }) {

    const { request, answer } = shown;
    return html`<div class="present-exchange">
        <section aria-label="Request">
            <h4>Request ${request.as ? html`<span class="meta">as ${request.as}</span>` : html`<span class="meta">anonymous</span>`}</h4>
            <p><code>${request.method} ${request.path}</code></p>
            <${Body} value=${request.body} />
        </section>
        <section aria-label="Answer">
            <h4>Answer <span class=${`status s${String(answer.status)[0]}`}>${answer.status}</span></h4>
            <${Body} value=${answer.body} />
        </section>
    </div>`;
}


function Stage({ presentation }) {

    const { steps, played, position, name, description } = presentation;
    const last = played.at(-1);
    const upcoming = steps[position];
    return html`<section class="stage" aria-labelledby="stage-caption">
        <p class="meta">${position ? `Step ${position} of ${steps.length}` : `${steps.length} steps`} · ${name}</p>
        <p id="stage-caption" class="caption" aria-live="polite">${last ? last.say ?? last.line : description ?? name}</p>
        ${last ? html`<p class=${last.ok ? 'step-line ok' : 'step-line failed'}><span class=${`badge ${last.ok ? 'ok' : 'warn'}`}>${last.ok ? 'met' : 'not met'}</span> <code>${last.line}</code></p>` : null}
        ${last && !last.ok ? html`<div class="error" role="alert"><p><strong>Step ${last.step} failed:</strong> ${last.reason}</p>
            ${last.differences.length ? html`<ul>${last.differences.map((difference) => html`<li><code>${difference.path}</code>: expected <code>${JSON.stringify(difference.expected)}</code>, got <code>${JSON.stringify(difference.got)}</code></li>`)}</ul>` : null}</div>` : null}
        ${last?.shown ? html`<${Exchange} shown=${last.shown} />` : null}
        ${upcoming ? html`<p class="next-step">Next: ${upcoming.say ?? html`<code>${upcoming.line}</code>`}</p>` : html`<p class="next-step">${last?.ok === false ? 'It stopped at this step: go back, or from the start.' : 'The end: every step was played.'}</p>`}
    </section>`;
}


// What a person of the story holds now: their wallet's balances and their bookings, from the instance's export (an
// admin read that changes nothing: reading a wallet as its owner would open one, and take an id of the instance's).
function ActorWorld({ actor, world }) {

    const wallet = (world.pay?.wallets ?? []).find((candidate) => candidate.owner_id === actor.sub);
    const bookings = (world.logistics?.bookings ?? []).filter((booking) => booking.customer_id === actor.sub);
    return html`<li class="actor">
        <strong>${actor.name}</strong>
        ${world.pay ? html`<span>${wallet?.balances.length ? wallet.balances.map((balance) => html`<span class="balance">${minorMoney(balance.amount, balance.asset)}${balance.pending_in ? html` <span class="pending-amount">+${minorMoney(balance.pending_in, balance.asset)} pending</span>` : null}</span>`) : html`<span class="meta">no money</span>`}</span>` : null}
        <span class="meta">${bookings.length} booking${bookings.length === 1 ? '' : 's'}${bookings.length ? `: ${bookings.map((booking) => booking.status).join(', ')}` : ''}</span>
    </li>`;
}


function World({ presentation, instances }) {

    const base = `/_instances/${presentation.instance}`;
    const instance = useLoad(() => instances.adminCall(base, { housekeeping: true }).then((res) => res.data), []).data;
    const world = useLoad(() => instances.adminCall(`${base}/export`, { housekeeping: true }).then((res) => res.data), []);
    const events = useLoad(() => instances.adminCall(`/_instances/${presentation.instance}/events?limit=100`, { housekeeping: true }).then((res) => res.data.data.slice(-8).reverse()), []);
    const people = presentation.actors.filter((actor) => !actor.admin);
    return html`<section class="world" aria-labelledby="world-heading">
        <h3 id="world-heading">The world now <span class="meta">instance ${shortId(presentation.instance)}${instance?.clock ? `, its clock at ${when(instance.clock)}` : ''}</span></h3>
        <div class="world-grid">
            <section aria-labelledby="world-people">
                <h4 id="world-people">People</h4>
                ${world.data && people.length ? html`<ul class="actors">${people.map((actor) => html`<${ActorWorld} actor=${actor} world=${world.data} />`)}</ul>` : null}
                ${people.length ? null : html`<p class="meta">The scenario names no one.</p>`}
                <${ErrorNote} error=${world.error} />
            </section>
            <section aria-labelledby="world-events">
                <h4 id="world-events">Events, newest first</h4>
                ${events.data?.length ? html`<ol class="events">${events.data.map((event) => html`<li><code>${event.type}</code> <span class="meta">${when(event.created_at)}</span></li>`)}</ol>` : html`<p class="meta">${events.error ? events.error.message : 'None yet'}</p>`}
            </section>
            <section aria-labelledby="world-inbox">
                <h4 id="world-inbox">Webhook inbox</h4>
                ${presentation.deliveries.length ? html`<ol class="deliveries">${[...presentation.deliveries].reverse().map((delivery) => html`<li><code>${delivery.type ?? 'not an event'}</code> <span class=${`badge ${delivery.verified ? 'ok' : 'warn'}`}>${delivery.verified ? 'verified' : 'not verified'}</span></li>`)}</ol>` : html`<p class="meta">${presentation.steps.some((step) => step.kind === 'webhook') ? 'Nothing came yet' : 'The scenario sets no webhooks'}</p>`}
            </section>
        </div>
    </section>`;
}


/** The Present view: pick a scenario, step through it with the arrow keys or the buttons, and watch the world move. */
export function Present({ instances, presenting }) {

    const { presentation } = presenting;
    useEffect(() => {

        const keys = (event) => {

            if (event.target.closest?.('input, select, textarea') || event.altKey || event.ctrlKey || event.metaKey) {
                return;
            }

            const action = { ArrowRight: presenting.next, ArrowLeft: presenting.back, Home: presenting.restart }[event.key];
            if (action && presentation) {
                event.preventDefault();
                action();
            }
        };

        document.addEventListener('keydown', keys);
        return () => document.removeEventListener('keydown', keys);
    }, [presenting, presentation]);

    if (!instances.ready) {
        return html`<section aria-labelledby="present-heading"><h2 id="present-heading">Present</h2>
            ${instances.error ? html`<${ErrorNote} error=${instances.error} />` : html`<p class="hint">Loading…</p>`}</section>`;
    }

    return html`<section aria-labelledby="present-heading">
        <h2 id="present-heading">Present</h2>
        ${presentation ? null : html`<p>A scenario file told one step at a time, on an instance of its own: each step's caption, what it sent and what came, and the world it leaves. <kbd>→</kbd> plays the next step, <kbd>←</kbd> goes back one, <kbd>Home</kbd> starts again.</p>
            <${Picker} instances=${instances} presenting=${presenting} />`}
        ${presentation ? html`<div class="row present-controls" role="group" aria-label="Presentation">
                <button type="button" onClick=${presenting.back} disabled=${presenting.busy || !presentation.back}>← Back</button>
                <button type="button" class="primary" onClick=${presenting.next} disabled=${presenting.busy || presentation.ended}>Next →</button>
                <button type="button" onClick=${presenting.restart} disabled=${presenting.busy || presentation.position === 0}>From the start</button>
                <button type="button" onClick=${presenting.end} disabled=${presenting.busy}>End</button>
            </div>
            <${Stage} presentation=${presentation} />
            <${World} key=${presenting.round} presentation=${presentation} instances=${instances} />` : null}
        <${ErrorNote} error=${presenting.error} />
        ${presentation === null && presenting.error?.code === 'presentation_not_found' ? html`<${StateNote} title="The presentation ended">It went idle for too long, or the server restarted: present it again.</${StateNote}>` : null}
    </section>`;
}
