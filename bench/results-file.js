'use strict';

const Fs = require('node:fs');
const Path = require('node:path');


/**
 * Puts a section into results.md: in place of the last one under the same heading ("## Suite:", "## Time:"), else
 * before the PostgreSQL section, else at the end; the rest of the file is kept.
 */
exports.replaceSection = function (heading, section) {

    const file = Path.join(__dirname, 'results.md');
    const existing = Fs.existsSync(file) ? Fs.readFileSync(file, 'utf8') : '# localgate benchmark results\n';
    const start = existing.indexOf(`\n${heading}`);
    let before = existing;
    let after = '';
    if (start !== -1) {
        const end = existing.indexOf('\n## ', start + 1);
        before = existing.slice(0, start + 1);
        after = end === -1 ? '' : existing.slice(end + 1);
    }
    else {
        const pg = existing.indexOf('\n## PostgreSQL\n');
        if (pg !== -1) {
            before = existing.slice(0, pg + 1);
            after = existing.slice(pg + 1);
        }
    }

    Fs.writeFileSync(file, `${before.replace(/\n*$/, '\n\n')}${section}${after ? `\n${after}` : ''}`);
};


/** The section of results.md under a heading ("## Events for free:"), as replaceSection would put it back; null when there is none. */
exports.section = function (heading) {

    const file = Path.join(__dirname, 'results.md');
    const existing = Fs.existsSync(file) ? Fs.readFileSync(file, 'utf8') : '';
    const start = existing.indexOf(`\n${heading}`);
    if (start === -1) {
        return null;
    }

    const end = existing.indexOf('\n## ', start + 1);
    return existing.slice(start + 1, end === -1 ? undefined : end + 1).replace(/\n*$/, '\n');
};
