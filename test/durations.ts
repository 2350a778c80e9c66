import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { parseDurationMs, parseDurationSeconds } from '../lib/durations';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


describe('durations', () => {

    it('reads each unit in milliseconds, and refuses what is no duration', () => {

        expect(['500ms', '90s', '30m', '2h', '7d'].map(parseDurationMs)).to.equal([500, 90_000, 1_800_000, 7_200_000, 604_800_000]);
        expect(() => parseDurationMs('soon')).to.throw(TypeError, '"soon" is not a duration such as 500ms, 90s, 30m, 2h or 7d');
        expect(() => parseDurationMs('90')).to.throw(TypeError, '"90" is not a duration such as 500ms, 90s, 30m, 2h or 7d');
    });

    it('reads a bare number as seconds', () => {

        expect(parseDurationSeconds('90')).to.equal(90);
        expect(parseDurationSeconds('2h')).to.equal(7200);
        expect(parseDurationSeconds('0')).to.be.null();
    });
});
