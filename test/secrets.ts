import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { isCredentialName, isCredentialValue, scrubJsonText, scrubText } from '../lib/secrets';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


describe('what counts as a credential', () => {

    const names: [string, boolean][] = [
        ['Authorization', true], ['Proxy-Authorization', true], ['Cookie', true], ['Set-Cookie', true],
        ['X-Api-Key', true], ['api_key', true], ['apikey', true], ['X-Private-Key', true], ['key', true],
        ['X-Auth', true], ['X-Pass', true], ['passwd', true], ['Password', true], ['refresh_token', true],
        ['accessToken', true], ['sessionId', true], ['session', true], ['signature', true], ['credential', true],
        ['client_secret', true], ['otp', true],
        ['Idempotency-Key', false], ['token_symbol', false], ['author', false], ['user-agent', false],
        ['content-type', false], ['x-request-id', false], ['name', false], ['', false]
    ];

    for (const [name, expected] of names) {
        it(`${expected ? 'counts' : 'does not count'} a field named ${JSON.stringify(name)}`, () => {

            expect(isCredentialName(name)).to.equal(expected);
        });
    }

    it('counts a value by its shape: an auth scheme and its token, a JWT, a secret', () => {

        expect(isCredentialValue('Bearer opaque', [])).to.be.true();
        expect(isCredentialValue('Basic eDp5', [])).to.be.true();
        expect(isCredentialValue('Digest username="a", realm="b"', [])).to.be.true();
        expect(isCredentialValue('x eyJhbGciOi.eyJzdWIi.c2ln y', [])).to.be.true();
        expect(isCredentialValue('has sk_1 in it', ['sk_1'])).to.be.true();
        expect(isCredentialValue('Basic bread loaf', [])).to.be.false();
        expect(isCredentialValue('eyJ without dots', [])).to.be.false();
    });

    it('counts and hides a whsec_ webhook secret wherever it appears, as sent or percent-encoded', () => {

        const secret = `whsec_${Buffer.alloc(32, 251).toString('base64')}`;
        expect(secret).to.contain('+');
        expect(isCredentialValue(secret, [])).to.be.true();
        expect(isCredentialValue(`set to ${secret}.`, [])).to.be.true();
        expect(scrubText(`/console/inbox/${secret}?next=1`, [])).to.equal('/console/inbox/[hidden]?next=1');
        expect(scrubText(`s=${encodeURIComponent(secret)}&x=1`, [])).to.equal('s=[hidden]&x=1');
        expect(JSON.parse(scrubJsonText(JSON.stringify({ note: `key ${secret} here`, url: secret }), []))).to.equal({ note: 'key [hidden] here', url: '[hidden]' });
        // The word alone, and the masked form the API answers, are no secret.
        expect(isCredentialValue('must be whsec_ followed by the base64 of its key', [])).to.be.false();
        expect(scrubText('whsec_********', [])).to.equal('whsec_********');
    });

    it('hides JWT-shaped text and every given secret wherever they appear', () => {

        expect(scrubText('a eyJhbGciOi.eyJzdWIi.c2ln-_x b', [])).to.equal('a [hidden] b');
        expect(scrubText('%20eyJa.b.c&x=eyJa.b', [])).to.equal('%20[hidden]&x=eyJa.b');
        expect(scrubText('key sk_1 twice sk_1, pk_2', ['sk_1', 'pk_2'])).to.equal('key [hidden] twice [hidden], [hidden]');
    });

    it('hides credentials in JSON text by field name and by value, and leaves JSON', () => {

        const text = JSON.stringify({
            password: 'p', api_key: 42, refresh_token: 'r', pin_auth: true, none: null,
            nested: { auth: 'Basic eDp5', x: 'Basic bread loaf', note: 'a eyJa.b.c z' },
            token_symbol: 'USDC', idempotency_key: 'k', list: ['sk_"1', 'x'], session: { id: 1 }
        });
        expect(JSON.parse(scrubJsonText(text, ['sk_"1']))).to.equal({
            password: '[hidden]', api_key: '[hidden]', refresh_token: '[hidden]', pin_auth: '[hidden]', none: null,
            nested: { auth: '[hidden]', x: 'Basic bread loaf', note: 'a [hidden] z' },
            token_symbol: 'USDC', idempotency_key: 'k', list: ['[hidden]', 'x'], session: '[hidden]'
        });
    });

    it('hides an object or array under a credential\'s name whole, however it nests', () => {

        const text = JSON.stringify({ password: { value: 'hunter2' }, api_key: ['k-123'], after: 'kept', secret: [[{ a: ']' }], [], {}], last: [1, { b: '{' }] });
        expect(scrubJsonText(text, [])).to.equal('{"password":"[hidden]","api_key":"[hidden]","after":"kept","secret":"[hidden]","last":[1,{"b":"{"}]}');
        expect(JSON.parse(scrubJsonText(JSON.stringify({ a: [{ token: {} }, 5], b: 1 }, null, 2), []))).to.equal({ a: [{ token: '[hidden]' }, 5], b: 1 });
    });

    it('hides credentials in JSON text cut anywhere', () => {

        expect(scrubJsonText('{"name":"a","password":"se', [])).to.equal('{"name":"a","password":"[hidden]"');
        expect(scrubJsonText('{"password":', [])).to.equal('{"password":');
        expect(scrubJsonText('{"note":"Bearer abc', [])).to.equal('{"note":"[hidden]');
        expect(scrubJsonText('{"a":"x\\"', [])).to.equal('{"a":"x\\"');
        expect(scrubJsonText('{"a":"x\\', [])).to.equal('{"a":"x\\');
        expect(scrubJsonText('{"n":1,"password":{"value":"hunter2","more":[1,', [])).to.equal('{"n":1,"password":"[hidden]"');
        expect(scrubJsonText('{"api_key":["k-1', [])).to.equal('{"api_key":"[hidden]"');
        expect(scrubJsonText('{"session":{', [])).to.equal('{"session":"[hidden]"');
    });
});
