import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// The image's files, checked without a container runtime; the container lane (npm run test:container) builds and
// runs the image itself.

const root = Path.join(__dirname, '..');
const read = (name: string) => Fs.readFileSync(Path.join(root, name), 'utf8');


describe('the image files', () => {

    it('keeps Dockerfile a copy of Containerfile, for tools that look only for the first', () => {

        expect(read('Dockerfile')).to.equal(read('Containerfile'));
    });

    it('keeps .dockerignore a copy of .containerignore', () => {

        expect(read('.dockerignore')).to.equal(read('.containerignore'));
    });

    it('sends the build exactly what the Containerfile copies from it, and nothing else', () => {

        const patterns = read('.containerignore').split('\n').filter((line) => line !== '' && !line.startsWith('#'));
        expect(patterns[0]).to.equal('*');

        const copied = read('Containerfile').split('\n')
            .filter((line) => line.startsWith('COPY ') && !line.includes('--from='))
            .flatMap((line) => line.split(/\s+/).slice(1, -1));
        expect(patterns.slice(1).map((pattern) => pattern.slice(1)).sort()).to.equal(copied.sort());
    });

});
