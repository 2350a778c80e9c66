import { useState } from 'preact/hooks';

import { html } from './ui.js';


// The Drift view: a report `localgate drift --report` wrote, dropped on the page and read in it (nothing is sent):
// each operation with its counts, its differences, and the first entry that differed with both answers side by side.

// The largest report the page reads: a report lists at most 100 differences an operation, and two answers.
const maxReportBytes = 32 * 1024 * 1024;


/** The report a file holds, or why it is none. */
async function readReport(file) {

    if (file.size > maxReportBytes) {
        throw new Error(`${file.name} is larger than 32 MiB: no report of localgate drift is`);
    }

    let report;
    try {
        report = JSON.parse(await file.text());
    }
    catch (err) {
        throw new Error(`${file.name} is not JSON (${err.message})`);
    }

    if (!report || !Array.isArray(report.operations) || typeof report.totals !== 'object' || report.totals === null) {
        throw new Error(`${file.name} is no report of localgate drift: it has no operations and totals (write one with npx localgate drift session.har --report drift.json)`);
    }

    return report;
}


function plural(count, one, many = `${one}s`) {

    return `${count} ${count === 1 ? one : many}`;
}


// A value as the table shows it: its JSON on one line.
function shown(value) {

    return value === undefined ? '(none)' : JSON.stringify(value);
}


function Answer({ label, answer }) {

    return html`<section aria-label=${label}>
        <h5>${label} ${answer ? html`<span class=${`status s${String(answer.status)[0]}`}>${answer.status}</span>` : null}</h5>
        ${answer ? html`<pre tabindex="0">${typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body, null, 2)}</pre>` : html`<p class="meta">Not replayed: localgate serves no such route.</p>`}
    </section>`;
}


function Operation({ operation }) {

    const mark = operation.errors ? 'warn' : (operation.warnings ? 'pending' : 'ok');
    const word = operation.errors ? 'drift' : (operation.warnings ? 'warnings' : 'same');
    return html`<li class="drift-operation">
        <details>
            <summary><span class=${`badge ${mark}`}>${word}</span> <code>${operation.method} ${operation.route}</code> <span class="meta">${plural(operation.entries, 'entry', 'entries')}: ${plural(operation.errors, 'error')}, ${plural(operation.warnings, 'warning')}</span></summary>
            ${operation.differences.length ? html`<div class="scroll" tabindex="0" role="region" aria-label=${`Differences of ${operation.method} ${operation.route}`}><table>
                <thead><tr><th scope="col">Entry</th><th scope="col">Level</th><th scope="col">Kind</th><th scope="col">Where</th><th scope="col">Recorded</th><th scope="col">Replayed</th></tr></thead>
                <tbody>${operation.differences.map((difference, index) => html`<tr key=${index}>
                    <td>${difference.entry}</td><td>${difference.level}</td><td>${difference.kind}</td><td><code>${difference.path}</code></td><td><code>${shown(difference.recorded)}</code></td><td><code>${shown(difference.replayed)}</code></td>
                </tr>`)}</tbody>
            </table></div>` : html`<p class="meta">No differences.</p>`}
            ${operation.example ? html`<h4>Entry ${operation.example.entry}, side by side</h4>
                <div class="side-by-side">
                    <${Answer} label="Recorded" answer=${operation.example.recorded} />
                    <${Answer} label="Replayed" answer=${operation.example.replayed} />
                </div>` : null}
        </details>
    </li>`;
}


/** The Drift view: drop a report, read it by operation. */
export function Drift() {

    const [report, setReport] = useState(null);
    const [error, setError] = useState(null);
    const read = async (file) => {

        if (!file) {
            return;
        }

        try {
            setReport({ name: file.name, ...await readReport(file) });
            setError(null);
        }
        catch (err) {
            setReport(null);
            setError(err.message);
        }
    };

    const totals = report?.totals;
    return html`<section aria-labelledby="drift-heading">
        <h2 id="drift-heading">Drift</h2>
        <p>Where localgate's answers part from a recording of the hosted API: drop the JSON that <code>npx localgate drift session.har --report drift.json</code> wrote. It is read in this page; nothing is sent.</p>
        <div class="drop" onDragOver=${(event) => event.preventDefault()} onDrop=${(event) => {

    event.preventDefault();
    read(event.dataTransfer.files[0]);
}}>
            <label for="drift-file">A drift report (drop it here)
                <input id="drift-file" type="file" accept=".json,application/json" onChange=${(event) => read(event.target.files[0])} />
            </label>
        </div>
        ${error ? html`<div class="error" role="alert"><p>${error}</p></div>` : null}
        ${report ? html`<p class="drift-totals" role="status"><strong>${report.name}</strong>: ${plural(report.entries ?? 0, 'entry', 'entries')}, ${plural(totals.operations ?? report.operations.length, 'operation')}: <strong class=${totals.errors ? 'faulty' : ''}>${plural(totals.errors ?? 0, 'error')}</strong>, ${plural(totals.warnings ?? 0, 'warning')}${totals.not_served ? `, ${totals.not_served} not served` : ''}</p>
            ${report.world?.left_out?.length ? html`<details><summary>Left out of the world (${report.world.left_out.length})</summary><ul>${report.world.left_out.map((line) => html`<li>${line}</li>`)}</ul></details>` : null}
            <ul class="drift-operations" aria-label="Operations">${report.operations.map((operation) => html`<${Operation} key=${`${operation.method} ${operation.route}`} operation=${operation} />`)}</ul>` : null}
    </section>`;
}
