import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const root = Path.join(__dirname, '..');

const documents = [
    'README.md',
    'bench/README.md',
    ...Fs.readdirSync(Path.join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)
];


/** The text of a markdown file outside its fenced code blocks, which hold no links or headings. */
function prose(markdown: string): string {

    return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}


/** The anchors a markdown file's headings get, spelled the way GitHub spells them, repeats numbered. */
function anchors(markdown: string): Set<string> {

    const seen = new Map<string, number>();
    const found = new Set<string>();
    for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
        const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
        const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
        const count = seen.get(slug) ?? 0;
        seen.set(slug, count + 1);
        found.add(count ? `${slug}-${count}` : slug);
    }

    return found;
}


/** Every link and image target of a markdown file, outside code. */
function targets(markdown: string): string[] {

    const text = prose(markdown).replace(/`[^`\n]*`/g, '');
    return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(([, target]) => target!);
}


/** Why a relative link of a document does not resolve, or null when it does. */
function brokenLink(document: string, target: string): string | null {

    const [path, anchor] = target.split('#') as [string, string | undefined];
    const file = path ? Path.resolve(Path.dirname(Path.join(root, document)), path) : Path.join(root, document);
    if (Path.relative(root, file).startsWith('..')) {
        return `${target} leaves the repository`;
    }

    if (!Fs.existsSync(file)) {
        return `${target}: no such file`;
    }

    if (anchor !== undefined && !anchors(Fs.readFileSync(file, 'utf8')).has(anchor)) {
        return `${target}: no heading makes #${anchor}`;
    }

    return null;
}


describe('the documentation', () => {

    for (const document of documents) {

        it(`resolves every relative link and anchor of ${document}`, () => {

            const markdown = Fs.readFileSync(Path.join(root, document), 'utf8');
            const relative = targets(markdown).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
            expect(relative.map((target) => brokenLink(document, target)).filter((problem) => problem !== null)).to.equal([]);
        });

        it(`quotes every curl URL with a query in ${document}, which zsh would take for a file pattern`, () => {

            const markdown = Fs.readFileSync(Path.join(root, document), 'utf8');
            const unquoted = markdown.split('\n')
                .filter((line) => /\bcurl\s/.test(line))
                .filter((line) => line.replace(/'[^']*'|"[^"]*"/g, '').split(/\s+/).some((word) => word.includes('?')));
            expect(unquoted).to.equal([]);
        });
    }

    it('keeps the README a front door of at most 300 lines', () => {

        expect(Fs.readFileSync(Path.join(root, 'README.md'), 'utf8').split('\n').length).to.be.at.most(300);
    });

    it('says in the architecture why each dependency of package.json is there', () => {

        const manifest = JSON.parse(Fs.readFileSync(Path.join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
        const architecture = Fs.readFileSync(Path.join(root, 'docs', 'architecture.md'), 'utf8');
        const named = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => !architecture.includes(`\`${name}\``));
        expect(named).to.equal([]);
    });

    it('spells anchors as GitHub does', () => {

        const heading = '# One\n## From TypeScript, in process: `localgate/testing`\n```\n# not a heading\n```\n## One\n';
        expect([...anchors(heading)]).to.equal(['one', 'from-typescript-in-process-localgatetesting', 'one-1']);
        expect(targets('[a](b.md#c) `[d](e)` ![f](g.png)\n```\n[h](i)\n```\n')).to.equal(['b.md#c', 'g.png']);
    });
});
