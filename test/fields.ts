import Code from '@hapi/code';
import Lab from '@hapi/lab';
import Joi from 'joi';

import { firstDetail, requestBody, setByService, visibleText, wording } from '../lib/fields';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// What hapi hands joi on every request: a context and the route's options, so none of joi's cached preferences apply.
const asHapiValidates: Joi.ValidationOptions = { context: { headers: {} }, abortEarly: false, errors: { wrap: { label: false } } };

function messages(schema: Joi.Schema, value: unknown): Record<string, string> {

    const { error } = schema.validate(value, asHapiValidates);
    return Object.fromEntries((error?.details ?? []).map((detail) => [detail.path.join('.') || '(body)', detail.message]));
}


describe('a schema\'s own wording of its errors', () => {

    it('words the codes it names, leaves joi\'s wording of the others, and adds to an earlier wording', () => {

        const name = visibleText(10);
        expect(messages(name, '   ')).to.equal({ '(body)': 'value must contain at least one character that is not white space' });
        expect(messages(name, 'a\0')).to.equal({ '(body)': 'value must not contain NUL characters or unpaired surrogates' });
        expect(messages(name, 'far too long a name')).to.equal({ '(body)': 'value length must be less than or equal to 10 characters long' });
        expect(messages(name, 12)).to.equal({ '(body)': 'value must be a string' });
    });

    it('keeps a field\'s wording inside a body that words the same code', () => {

        const body = wording(requestBody({
            inner: wording(Joi.object(), { 'object.base': '{{#label}} must be an object of its own' }),
            id: setByService('generated')
        }, 'Outer'), { 'object.unknown': 'The body holds {{#label}}, which it may not' });

        expect(messages(body, { inner: 1, id: 'x', extra: true })).to.equal({
            inner: 'inner must be an object of its own',
            id: 'id is set by the service (generated) and cannot be sent',
            extra: 'The body holds extra, which it may not'
        });
        expect(messages(body, [])).to.equal({ '(body)': 'The request body must be a JSON object' });
    });

    it('fills its templates with the values of the error', () => {

        const amount = wording(Joi.number().max(5), { 'number.max': '{{#label}} is {{#value}}, more than {{#limit}}' });
        expect(messages(Joi.object({ amount }), { amount: 7 })).to.equal({ amount: 'amount is 7, more than 5' });
    });
});


describe('firstDetail', () => {

    it('names the first problem of a joi error, and throws on an error that names none', () => {

        const { error } = Joi.object({ a: Joi.number(), b: Joi.string() }).validate({ a: 'x', b: 1 }, { abortEarly: false });
        expect(firstDetail(error!).path).to.equal(['a']);
        const empty = new Joi.ValidationError('nothing in particular', [], {});
        expect(() => firstDetail(empty)).to.throw(Joi.ValidationError, 'nothing in particular');
    });
});
