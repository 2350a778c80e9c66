import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';

import { ClockBar } from './clock.js';
import { Drift } from './drift.js';
import { Commerce } from './commerce.js';
import { Events } from './events.js';
import { Faults, isLive, useFaults } from './faults.js';
import { basePathOf, InstancePicker, Instances, notMountedHint, shortId, useInstances } from './instances.js';
import { LiveLog } from './log.js';
import { Logistics } from './logistics.js';
import { Pay } from './pay.js';
import { Present, usePresentation } from './present.js';
import { apiClient, ApiContext, consoleApi, ErrorNote, html, useAction } from './ui.js';
import { Weather } from './weather.js';


// Views whose records move with the data set's clock show the clock, with buttons that move it.
const views = [
    { id: 'commerce', label: 'Commerce', View: Commerce },
    { id: 'logistics', label: 'Logistics', View: Logistics, timed: true },
    { id: 'pay', label: 'Pay', View: Pay, timed: true },
    { id: 'weather', label: 'Weather', View: Weather },
    { id: 'events', label: 'Events', View: Events, timed: true },
    { id: 'faults', label: 'Faults', View: Faults },
    { id: 'present', label: 'Present', View: Present },
    { id: 'drift', label: 'Drift', View: Drift },
    { id: 'instances', label: 'Instances', View: Instances }
];

const personas = ['alice', 'bob'];

// What the page is, in one line under its title.
const tagline = 'localgate answers the commerce, logistics, pay and weather API here, offline: act as anyone, try its rules, and watch every request it answers.';

function PersonaPicker({ persona, onChange }) {

    const [other, setOther] = useState('');
    const [state, run] = useAction();
    const choose = (name) => run(async () => {

        const { data } = await consoleApi('/console/api/token', { method: 'POST', body: { subject: name } });
        onChange({ name: data.subject, token: data.token });
    }, () => null);

    return html`<section class="persona" aria-labelledby="persona-heading">
        <h2 id="persona-heading" class="label">Act as</h2>
        <div class="row" role="group" aria-label="Personas">
            ${personas.map((name) => html`<button type="button" aria-pressed=${persona?.name === name} onClick=${() => choose(name)}>${name}</button>`)}
        </div>
        <form class="row" onSubmit=${(event) => {

        event.preventDefault();
        if (other.trim()) {
            choose(other.trim());
        }
    }}>
            <label for="persona-other">Someone else</label>
            <input id="persona-other" name="persona-other" value=${other} maxlength="100" placeholder="any name" onInput=${(event) => setOther(event.target.value)} />
            <button type="submit" disabled=${state.busy}>Act as</button>
        </form>
        <p class="who" role="status" title=${persona ? `Acting as ${persona.name}` : null}>${persona ? html`Acting as <strong>${persona.name}</strong>` : 'Anonymous for now'}</p>
        <${ErrorNote} error=${state.error} hint=${state.error?.status === 404 ? notMountedHint : null} />
    </section>`;
}


function App() {

    const [persona, setPersona] = useState(null);
    const instances = useInstances();
    const faults = useFaults(instances);
    // The presentation outlives its view: another view opened meanwhile shows the world it is in.
    const presenting = usePresentation(instances);
    const [current, setCurrent] = useState(() => (views.some((view) => `#${view.id}` === location.hash) ? location.hash.slice(1) : 'commerce'));
    useEffect(() => {

        history.replaceState(null, '', `#${current}`);
    }, [current]);

    const { View, timed } = views.find((view) => view.id === current);
    const { selected } = instances;
    const api = useMemo(() => apiClient(basePathOf(selected), persona?.token), [selected, persona]);
    const instance = instances.list.find((candidate) => candidate.id === selected);
    // A namespace view loads again from scratch whenever its data set changes: switched, reset or restored.
    const key = current === 'instances' ? current : `${current}:${selected ?? 'default'}:${instances.revision}`;
    // A request a rule acted on has moved its hits (rule ids are unique: another data set's match none here).
    const onEntry = (entry) => {

        if (entry.fault) {
            faults.heard(entry);
        }
    };

    // A rule whose times are used up acts no more: it is shown in the faults view, but not counted as in force.
    const active = faults.rules.filter(isLive).length;
    return html`<header class="top">
            <h1>localgate console</h1>
            <${InstancePicker} instances=${instances} />
            <${PersonaPicker} persona=${persona} onChange=${setPersona} />
            <p class="tagline">${tagline}</p>
        </header>
        <div class="layout">
            <main>
                <nav aria-label="Views" class="tabs">
                    ${views.map((view) => html`<button type="button" aria-current=${view.id === current ? 'page' : null} onClick=${() => setCurrent(view.id)}>${view.label}</button>`)}
                </nav>
                <p class="where">${selected ? html`Data set: instance <strong>${shortId(selected)}</strong>${instance?.pay ? ', with pay' : ''}` : 'Data set: the default one'}${active ? html` · <strong class="faulty">${active} fault rule${active === 1 ? '' : 's'} in force</strong>` : null}</p>
                ${timed ? html`<${ClockBar} key=${selected ?? 'default'} instances=${instances} />` : null}
                <${ApiContext.Provider} value=${api}>
                    <${View} key=${key} persona=${persona} instances=${instances} faults=${faults} presenting=${presenting} />
                <//>
            </main>
            <${LiveLog} onEntry=${onEntry} />
        </div>`;
}


const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
