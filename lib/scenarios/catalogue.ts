import Fs from 'node:fs/promises';
import Path from 'node:path';

import { DomainError } from '../errors';
import { packageRoot } from '../paths';
import { thrownMessage } from '../thrown';
import { maxScenarioBytes, parseScenarioFile, readScenario, type Scenario, type ScenarioRules } from './file';


// GET /_scenarios: the scenario files a server can present. Built-in ones ship with the package (one per event type
// for `localgate trigger`, and the examples the docs walk through); a user's own are the files of DATA_DIR/scenarios.

/** Where a listed scenario comes from. */
export type ScenarioSource = 'builtin' | 'example' | 'data';

/** One file of the catalogue: its id (`source/file`), the name and steps it holds, or why it cannot be read. */
export interface ScenarioListing {
    id: string;
    source: ScenarioSource;
    file: string;
    name: string | null;
    description: string | null;
    steps: number | null;
    /** Why the file cannot be presented (not a scenario, too large), in the words its run would refuse it with; else null. */
    error: string | null;
}

/** The most files read of one folder: a folder of more is listed by name up to this. */
export const maxListedFiles = 200;

const scenarioFile = /^[\w.-]+\.(?:ya?ml|json)$/i;


/** The folders a server lists, in order: the built-ins, the examples, then DATA_DIR/scenarios unless it is the built-ins' folder. */
export function catalogueFolders(dataDir: string): { source: ScenarioSource; folder: string }[] {

    const builtin = Path.join(packageRoot, 'data', 'scenarios');
    const own = Path.resolve(dataDir, 'scenarios');
    return [
        { source: 'builtin', folder: builtin },
        { source: 'example', folder: Path.join(packageRoot, 'examples', 'scenarios') },
        ...(own === builtin ? [] : [{ source: 'data' as const, folder: own }])
    ];
}


/** The scenario files of the folders, each read and checked as a run would: a file that cannot run says why. */
export async function listScenarios(folders: { source: ScenarioSource; folder: string }[], rules: ScenarioRules): Promise<ScenarioListing[]> {

    const listed: ScenarioListing[] = [];
    for (const { source, folder } of folders) {
        const files = (await Fs.readdir(folder).catch(() => [])).filter((file) => scenarioFile.test(file)).sort().slice(0, maxListedFiles);
        for (const file of files) {
            const entry: ScenarioListing = { id: `${source}/${file}`, source, file, name: null, description: null, steps: null, error: null };
            try {
                const scenario = await readFile(Path.join(folder, file), file, rules);
                Object.assign(entry, { name: scenario.name, description: scenario.description ?? null, steps: scenario.steps.length });
            }
            catch (err) {
                entry.error = thrownMessage(err);
            }

            listed.push(entry);
        }
    }

    return listed;
}


/** The scenario a catalogue id names, read from its folder; a 404 scenario_not_found when the catalogue lists no such file. */
export async function catalogueScenario(id: string, folders: { source: ScenarioSource; folder: string }[], rules: ScenarioRules): Promise<{ scenario: Scenario; file: string }> {

    const [source, file] = id.split('/');
    const found = folders.find((candidate) => candidate.source === source);
    // Only a name the folder holds is read: an id is never a path.
    const files = found ? await Fs.readdir(found.folder).catch(() => []) : [];
    if (!found || file === undefined || !scenarioFile.test(file) || !files.includes(file)) {
        throw new DomainError('not_found', 'scenario_not_found', `No scenario ${id}: GET /_scenarios lists the ids there are`, 'scenario');
    }

    return { scenario: await readFile(Path.join(found.folder, file), file, rules), file: id };
}


async function readFile(path: string, file: string, rules: ScenarioRules): Promise<Scenario> {

    // Read only when it can be a scenario at all: the parser holds YAML to its own smaller bound.
    const { size } = await Fs.stat(path);
    if (size > maxScenarioBytes) {
        throw new DomainError('invalid', 'invalid_scenario', `The file is larger than ${maxScenarioBytes / 2 ** 20} MiB, the most a scenario may hold`, 'scenario');
    }

    return readScenario(parseScenarioFile(await Fs.readFile(path, 'utf8'), file), rules);
}
