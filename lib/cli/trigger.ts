import Fs from 'node:fs';
import Path from 'node:path';

import { always } from '../always';
import type { Settings } from '../config';
import { isRecord } from '../fixtures';
import { eventTypesOf } from '../outbox';
import { packageRoot } from '../paths';
import { fieldOf } from '../thrown';
import { parseScenarioText } from '../scenarios/file';
import { stepLines } from '../scenarios/report';
import type { PlayedScenario } from '../scenarios/routes';
import { adminClient, answeredBody } from './admin-client';
import { UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate trigger <event-type> [--set field=value]... [--instance ID] [--url URL]',
    flags: ['set', 'instance', 'url'],
    explain: 'Makes an event of that type happen through the API of the server at --url (default http://127.0.0.1:PORT), by running its built-in scenario (data/scenarios/<event-type>.yaml): on a fresh instance made with the scenario\'s instance block and kept, or on the instance --instance names, as it stands. Prints a line a step, then the events it caused and the instance. --set field=value (repeated; a dotted path such as metadata.order_id; the value read as JSON where it is JSON, else as text) overrides a field of the body of the scenario\'s last request with a body, the one that makes the event: --set amount=1099 makes a returned bank transfer. Exits 1 when a step failed (with --set, the event may then not be the one named).',
    run: (settings, args, values, io) => trigger(settings, args, values, io)
};

interface TriggerFlags {
    set?: string[];
    instance?: string;
    url?: string;
}

const fieldPath = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/;

/** Where the built-in scenarios are, one per event type. */
export const builtInScenarios = Path.join(packageRoot, 'data', 'scenarios');


async function trigger(settings: Settings, args: string[], flags: TriggerFlags, io: Io): Promise<number> {

    const types = eventTypesOf(settings.namespaces);
    const [type] = args;
    if (args.length !== 1 || !types.includes(String(type))) {
        throw new UsageError(`trigger takes one event type: ${types.join(', ')}`);
    }

    if (flags.instance !== undefined && !flags.instance.trim()) {
        throw new UsageError('--instance must name an instance id, such as the id POST /_instances answered');
    }

    const scenario = parseScenarioText(Fs.readFileSync(Path.join(builtInScenarios, `${type}.yaml`), 'utf8'));
    for (const setting of flags.set ?? []) {
        override(scenario, setting);
    }

    const client = adminClient(settings, flags.url);
    const path = flags.instance === undefined ? '/_scenarios/run?keep=true' : `/_instances/${encodeURIComponent(flags.instance)}/scenario`;
    const run = answeredBody<PlayedScenario>(await client.call('POST', path, { type: 'application/json', text: JSON.stringify(scenario) }));
    for (const line of stepLines({ file: `data/scenarios/${type}.yaml`, run, error: null })) {
        io.out(line);
    }

    const { events } = run;
    io.out(events.length ? `Events it caused (${events.length}):` : 'It caused no event.');
    for (const event of events) {
        io.out(`  ${event.type} ${event.id} ${event.created_at}`);
    }

    io.out(`Instance: ${String(run.instance)} (its events: GET /_instances/${String(run.instance)}/events; npx localgate listen --instance ${String(run.instance)} forwards the next ones)`);
    return run.ok ? 0 : 1;
}


// Sets a field of the body of the scenario's last request with a body.
function override(scenario: unknown, setting: string): void {

    const at = setting.indexOf('=');
    const path = setting.slice(0, at);
    if (at < 1 || !fieldPath.test(path)) {
        throw new UsageError(`--set takes field=value, the field a dotted path such as amount or metadata.order_id, not "${setting}"`);
    }

    const text = setting.slice(at + 1);
    // Every built-in scenario makes its event with a request that has a body.
    const steps: unknown[] = [fieldOf(scenario, 'steps')].flat();
    const body = always(steps.map((step) => fieldOf(fieldOf(step, 'request'), 'body')).filter(isRecord).at(-1), 'the request that makes the event');

    const keys = path.split('.');
    if (keys.some((key) => ['__proto__', 'prototype', 'constructor'].includes(key))) {
        throw new UsageError(`--set cannot set ${path}: __proto__, prototype and constructor are no fields of a body`);
    }

    const last = String(keys.pop());
    let target = body;
    for (const key of keys) {
        // A field of another shape (text, null, a list) gives way to a map.
        const next = target[key];
        const child: Record<string, unknown> = isRecord(next) ? next : {};
        target[key] = child;
        target = child;
    }

    target[last] = valueOf(text);
}


// A value as JSON where it is JSON (1099, true, null, "text", {...}), else the text itself.
function valueOf(text: string): unknown {

    try {
        const value: unknown = JSON.parse(text);
        return value;
    }
    catch {
        return text;
    }
}
