import type { DriftReport } from './drift';


// A drift report for people: a line an operation on the terminal, and the same as Markdown for a CI job's summary.

/** The terminal's lines: the totals, then each operation with its first differences. */
export function driftLines(report: DriftReport): string[] {

    const lines: string[] = [];
    for (const operation of report.operations) {
        const mark = operation.errors ? '✗' : (operation.warnings ? '~' : '✓');
        lines.push(`${mark} ${operation.method} ${operation.route} (${operation.entries} entr${operation.entries === 1 ? 'y' : 'ies'}): ${counted(operation.errors, operation.warnings)}`);
        for (const difference of operation.differences.slice(0, 5)) {
            lines.push(`    ${difference.level} ${difference.kind} ${difference.path}: recorded ${JSON.stringify(difference.recorded)}, replayed ${JSON.stringify(difference.replayed)} (entry ${difference.entry})`);
        }
    }

    for (const line of report.world.left_out) {
        lines.push(`left out of the world: ${line}`);
    }

    lines.push(`${report.entries} entries, ${report.totals.operations} operations: ${counted(report.totals.errors, report.totals.warnings)}${report.totals.not_served ? `, ${report.totals.not_served} not served` : ''}`);
    return lines;
}


/** The report as Markdown: the totals and a table of the operations, then each difference. */
export function driftMarkdown(report: DriftReport): string {

    const rows = report.operations.map((operation) => `| ${operation.method} | \`${operation.route}\` | ${operation.entries} | ${operation.errors} | ${operation.warnings} |`);
    const differences = report.operations.flatMap((operation) => operation.differences.map((difference) => `| ${operation.method} \`${operation.route}\` | ${difference.entry} | ${difference.level} | ${difference.kind} | \`${difference.path}\` | \`${cell(difference.recorded)}\` | \`${cell(difference.replayed)}\` |`));
    return [
        '# Drift',
        '',
        `${report.entries} entries, ${report.totals.operations} operations: ${counted(report.totals.errors, report.totals.warnings)}.`,
        '',
        '| method | route | entries | errors | warnings |',
        '|---|---|---|---|---|',
        ...rows,
        '',
        ...(differences.length ? ['| operation | entry | level | kind | path | recorded | replayed |', '|---|---|---|---|---|---|---|', ...differences, ''] : ['No differences.', ''])
    ].join('\n');
}


function counted(errors: number, warnings: number): string {

    return `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
}


// A value in a table's cell: its JSON on one line, at most 80 characters, with no character that would end the cell.
function cell(value: unknown): string {

    const text = String(JSON.stringify(value));
    return (text.length > 80 ? `${text.slice(0, 77)}...` : text).replace(/[|`\n]/g, ' ');
}
