import { ErrorNote, html, StateNote, useAction, useApi, useLoad } from './ui.js';


/** Weather's status, and a forecast asked for: a 501 until a backend exists, which is the namespace's documented state. */
export function Weather() {

    const api = useApi();
    const status = useLoad(() => api('/v1/weather/status').then((res) => res.data), []);
    const [forecast, run] = useAction();
    const unprovisioned = forecast.error?.status === 501;
    return html`<section aria-labelledby="weather-heading">
        <h2 id="weather-heading">Weather</h2>
        <${ErrorNote} error=${status.error} />
        ${status.data ? (status.data.configured ?
        html`<p><span class="badge ok">ready</span> ${status.data.detail}</p>` :
        html`<${StateNote} title="Not provisioned: no weather backend here yet">
            <p>${status.data.detail}.</p>
            <p>This is the namespace's documented state, not a failure: its status answers, and a forecast answers 501 (not implemented) until a backend is provisioned. There is nothing to set up in localgate; a client can read the status first to learn this without a 501.</p>
        <//>`) : null}
        <button type="button" onClick=${() => run(() => api('/v1/weather/forecast'), () => 'The forecast answered.')}>Ask for a forecast</button>
        <div aria-live="polite">
            ${unprovisioned ?
        html`<p class="answer"><strong>501 <code>${forecast.error.code}</code></strong> ${forecast.error.message}: as documented.</p>` :
        html`<${ErrorNote} error=${forecast.error} />`}
            ${forecast.done ? html`<p class="done" role="status">${forecast.done}</p>` : null}
        </div>
    </section>`;
}
