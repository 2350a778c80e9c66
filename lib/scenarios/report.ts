import type { PlayedScenario } from './routes';


// How a run of scenario files is shown: a line a step on the terminal, and TAP or JUnit XML for CI.

/** A file's run, or why it could not run (a file that cannot be read or parsed, a server that refused it). */
export type FileRun = { file: string; run: PlayedScenario; error: null } | { file: string; run: null; error: string };


/** The terminal's lines for one file: its name, a line a step (✓ or ✗, the caption beside it), the failure below. */
export function stepLines(file: FileRun): string[] {

    if (!file.run) {
        return [`✗ ${file.file}: ${file.error}`];
    }

    const lines = [`${file.run.ok ? '✓' : '✗'} ${file.run.name} (${file.file})`];
    for (const step of file.run.steps) {
        lines.push(`  ${String(step.step).padStart(3)} ${step.ok ? '✓' : '✗'} ${step.line}${step.say !== null && step.say !== step.line ? `  · ${step.say}` : ''}`);
    }

    if (file.run.message !== null) {
        lines.push(...file.run.message.split('\n').map((line) => `      ${line}`));
    }

    return lines;
}


/** A TAP 13 report: one test point per file, each step a subtest; a failure's message in the YAML block. */
export function tapReport(files: readonly FileRun[]): string {

    const lines = ['TAP version 13', `1..${files.length}`];
    files.forEach((file, index) => {

        const name = file.run?.name ?? file.file;
        if (file.run) {
            lines.push(`# Subtest: ${name}`, `    1..${file.run.steps.length}`);
            for (const step of file.run.steps) {
                lines.push(`    ${step.ok ? 'ok' : 'not ok'} ${step.step} - ${escapeTap(step.say ?? step.line)}`);
            }
        }

        const ok = file.run?.ok ?? false;
        lines.push(`${ok ? 'ok' : 'not ok'} ${index + 1} - ${escapeTap(name)}`);
        if (!ok) {
            const message = file.run ? String(file.run.message) : file.error;
            lines.push('  ---', `  file: ${JSON.stringify(file.file)}`, '  message: |', ...message.split('\n').map((line) => `    ${line}`), '  ...');
        }
    });

    return `${lines.join('\n')}\n`;
}


function escapeTap(text: string): string {

    return text.replace(/#/g, '\\#').replace(/\n/g, ' ');
}


/** A JUnit XML report: a test suite per file, a test case per step run (the run stops at a failure); testsuites counts them all. */
export function junitReport(files: readonly FileRun[]): string {

    const suites = files.map((file) => {

        const { run } = file;
        if (!run) {
            const name = xml(file.file);
            return `  <testsuite name="${name}" file="${name}" tests="1" failures="0" errors="1">\n    <testcase name="${name}" classname="${name}">\n      <error message="${xml(file.error)}"/>\n    </testcase>\n  </testsuite>`;
        }

        const name = xml(run.name);
        const failure = run.failure ? `\n      <failure message="${xml(run.failure.reason)}">${xml(String(run.message))}</failure>\n    ` : '';
        const cases = run.steps.map((step) => `    <testcase name="${xml(`${step.step} ${step.say ?? step.line}`)}" classname="${name}" time="${(step.ms / 1000).toFixed(3)}">${step.ok ? '' : failure}</testcase>`);
        const seconds = run.steps.reduce((sum, step) => sum + step.ms, 0) / 1000;
        return `  <testsuite name="${name}" file="${xml(file.file)}" tests="${run.steps.length}" failures="${run.ok ? 0 : 1}" errors="0" time="${seconds.toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
    });
    const failures = files.filter((file) => file.run && !file.run.ok).length;
    const errors = files.filter((file) => !file.run).length;
    const tests = files.reduce((sum, file) => sum + (file.run?.steps.length ?? 1), 0);
    return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="localgate scenarios" tests="${tests}" failures="${failures}" errors="${errors}">\n${suites.join('\n')}\n</testsuites>\n`;
}


// Text as an XML attribute or element holds it; characters XML 1.0 cannot hold at all are left out.
function xml(text: string): string {

    const held = [...text].filter((char) => char >= ' ' || char === '\t' || char === '\n' || char === '\r').join('');
    return held.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
