import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { fieldOf, thrownMessage } from '../lib/thrown';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


describe('what is read of an untyped value', () => {

    it('takes an error\'s message, and any other thrown value as text', () => {

        expect(thrownMessage(new TypeError('no such file'))).to.equal('no such file');
        expect(thrownMessage('plain text')).to.equal('plain text');
        expect(thrownMessage(undefined)).to.equal('undefined');
    });

    it('reads a key of an object, its prototype\'s included, and nothing of a value that is no object', () => {

        expect(fieldOf({ message: 'hi' }, 'message')).to.equal('hi');
        expect(fieldOf(new RangeError('x'), 'name')).to.equal('RangeError');
        expect(fieldOf({}, 'message')).to.be.undefined();
        expect(fieldOf(null, 'message')).to.be.undefined();
        expect(fieldOf('text', 'length')).to.be.undefined();
    });
});
